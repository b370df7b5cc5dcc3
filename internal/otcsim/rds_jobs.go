package otcsim

import (
	"fmt"
	"net/http"
	"time"
)

// Job statuses.
const (
	JobRunning   = "Running"
	JobCompleted = "Completed"
	JobFailed    = "Failed"
)

// jobRegistrationDelay is how long a fresh job is unknown to GET /jobs.
// NOTE: OTC answers 400 DBS.200543 for a job queried right after it was created; the SDK's
// WaitForJobCompleted string-matches that code and keeps polling. Clients must do the same.
const jobRegistrationDelay = time.Second

// job is an RDS task. Its status is a function of time: Running until ends, then Completed or Failed.
type job struct {
	id, name                 string
	instanceID, instanceName string
	created, ends            time.Time
	failReason               string // non-empty: the job ends Failed
	entities                 map[string]any
}

func (j *job) status(now time.Time) string {
	switch {
	case now.Before(j.ends):
		return JobRunning
	case j.failReason != "":
		return JobFailed
	default:
		return JobCompleted
	}
}

// newJob registers a job that runs for d from now.
func (s *Sim) newJob(name string, in *instance, now time.Time, d time.Duration) *job {
	j := &job{
		id: s.randUUID(), name: name, created: now, ends: now.Add(d),
		entities: map[string]any{},
	}
	if in != nil {
		j.instanceID, j.instanceName = in.id, in.name
	}
	s.jobs[j.id] = j
	return j
}

func (j *job) json(now time.Time) map[string]any {
	st := j.status(now)
	process, ended := "", ""
	if st == JobRunning {
		total := j.ends.Sub(j.created)
		pct := 0
		if total > 0 {
			pct = int(now.Sub(j.created) * 100 / total)
		}
		process = fmt.Sprint(pct)
	} else {
		ended = rdsTime(j.ends)
	}
	var fail any
	if st == JobFailed {
		fail = j.failReason
	}
	return map[string]any{
		"id": j.id, "name": j.name, "status": st, "created": rdsTime(j.created), "ended": ended,
		"process": process, "instance": map[string]any{"id": j.instanceID, "name": j.instanceName},
		"entities": j.entities, "fail_reason": fail,
	}
}

// handleGetJob serves GET /rds/v3/{project}/jobs?id=.
func (s *Sim) handleGetJob(w http.ResponseWriter, r *http.Request) {
	now := s.lockAt()
	defer s.mu.Unlock()
	id := r.URL.Query().Get("id")
	if id == "" {
		writeError(w, svcRDS, errParam("id is required"))
		return
	}
	j := s.jobs[id]
	if j == nil || now.Sub(j.created) < jobRegistrationDelay {
		writeError(w, svcRDS, errorf(http.StatusBadRequest, "DBS.200543", "The job does not exist."))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"job": j.json(now)})
}
