package sync

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/logsapi"
)

// A log request runs in three acts, one state each in status.logs, so that a lost response never
// starts a second Job:
//
//  1. Starting: the call that first sees a new spec.logs.request records when the Job's capability
//     expires (status.logs.credentialExpires); every call that observes the instance renders the
//     Job's Secret holding the capability, a pure function of status.logs, the instance id, the
//     object and the call's credentials (logs_capability.go), so two calls answer the same Secret
//     and no cloud call is made. The Job is returned only once the Secret is observed with a
//     capability that outlives the Job's deadline (a stale one is renewed before the Job starts).
//  2. Running: the Job and its Secret are returned until the Job is observed Complete or Failed.
//  3. Succeeded or Failed: the Secret is no longer returned (Metacontroller deletes it; the
//     capability expires by itself within minutes), and the Job is kept for the retention, then no
//     longer returned (Metacontroller deletes it). status.logs.request remembers the request.
//
// The Job holds no OTC credential: its capability reads one instance's logs through the hooks'
// logs port (ReadLogs, docs/logs.md). The logs step runs on every sync call that sees the
// instance, whichever step stopped before it (logsStep). The rendering of the children
// (logChildren) reads only status.logs and the observed children, so every call returns them,
// even one that failed to observe the instance, and finalize.

// ReasonLogsUnavailable: the controller cannot run log Jobs.
const ReasonLogsUnavailable = "LogsUnavailable"

// Defaults of a log request and the limits it is checked against. rds-logs checks the same.
const (
	defaultLogsSince = "1h"
	defaultLogsLines = 200
	maxLogsLines     = logsapi.MaxLines
	maxLogsSince     = logsapi.MaxSince
	maxLogsRequest   = 63
)

// logsSincePattern is a duration of whole hours, minutes and seconds, e.g. 1h30m.
var logsSincePattern = regexp.MustCompile(`^([0-9]+[hms])+$`)

// validateLogs checks a log request; each problem is one stable sentence.
func validateLogs(r *v1alpha1.LogsRequest, engine string) []string {
	var problems []string
	if r.Request == "" || len(r.Request) > maxLogsRequest {
		problems = append(problems, fmt.Sprintf("logs.request must be 1 to %d characters.", maxLogsRequest))
	}
	if r.Since != "" {
		d, err := time.ParseDuration(r.Since)
		if !logsSincePattern.MatchString(r.Since) || err != nil || d < time.Minute || d > maxLogsSince {
			problems = append(problems, "logs.since must be a duration from 1m to 720h, e.g. 30m or 6h.")
		}
	}
	if r.Lines < 0 || r.Lines > maxLogsLines {
		problems = append(problems, fmt.Sprintf("logs.lines must be between 1 and %d.", maxLogsLines))
	}
	if slices.ContainsFunc(r.Types, func(t string) bool { return t != v1alpha1.LogTypeError && t != v1alpha1.LogTypeSlow }) {
		problems = append(problems, fmt.Sprintf("logs.types may hold only %s and %s.", v1alpha1.LogTypeError, v1alpha1.LogTypeSlow))
	}
	if engine == v1alpha1.EngineSQLServer && slices.Contains(r.Types, v1alpha1.LogTypeSlow) {
		problems = append(problems, "logs.types: SQL Server has no slow query log.")
	}
	return problems
}

// logsStep runs the logs step after the instance steps, whether or not one of them stopped the
// call: it needs no root password, makes no cloud call and changes nothing on the instance, so a
// restore or a day-2 change that holds the other steps for a long time, or an adopted instance
// whose password is unknown, does not hold a log request. An earlier step's resync survives.
func (c *call) logsStep(inst *cloud.Instance) {
	c.logs(inst)
}

// logs starts a new log request and follows the Job of the latest one.
func (c *call) logs(inst *cloud.Instance) {
	c.logsInstance = inst.ID
	if want := c.spec.Logs; want != nil && (c.st.Logs == nil || c.st.Logs.Request != want.Request) {
		if problems := validateLogs(want, inst.Engine); len(problems) > 0 {
			c.invalid(joinSentences(problems))
			return
		}
		if c.r.cfg.JobImage == "" {
			c.setSynced(metav1.ConditionFalse, ReasonLogsUnavailable,
				"The controller has no image for log Jobs; its operator must set --job-image.")
			return
		}
		if c.r.caps == nil {
			c.setSynced(metav1.ConditionFalse, ReasonLogsUnavailable, msgNoLogsKey)
			return
		}
		c.st.Logs = c.acceptLogs(want, inst.Engine)
		c.log.Info("log request accepted", "request", want.Request, "job", c.st.Logs.Job)
	}
	ls := c.st.Logs
	if ls == nil {
		return
	}
	switch ls.State {
	case v1alpha1.LogsStarting:
		c.startLogs(ls)
	case v1alpha1.LogsRunning:
		c.followLogs(ls)
	case v1alpha1.LogsSucceeded, v1alpha1.LogsFailed:
		c.retainLogs(ls)
	}
}

// msgNoLogsKey: without a stable secret the replicas share no key to seal capabilities with.
const msgNoLogsKey = "The controller has no stable key to seal log Job capabilities with (a token login); its operator must set --password-key."

// finalizeLogs keeps status.logs true while the object is being deleted: a running Job is followed
// to its end and kept for its retention (logChildren returns it), but no Job starts and no
// capability is issued.
func (c *call) finalizeLogs() {
	ls := c.st.Logs
	if ls == nil {
		return
	}
	switch ls.State {
	case v1alpha1.LogsStarting:
		ls.Message = "The object is being deleted, so the log Job does not start."
	case v1alpha1.LogsRunning:
		c.followLogs(ls)
	case v1alpha1.LogsSucceeded, v1alpha1.LogsFailed:
		c.retainLogs(ls)
	}
}

// acceptLogs is the status of a new request, with the options it runs with.
func (c *call) acceptLogs(want *v1alpha1.LogsRequest, engine string) *v1alpha1.LogsStatus {
	ls := &v1alpha1.LogsStatus{
		Request: want.Request,
		Job:     logsJobName(c.parent.Name, string(c.parent.UID), c.parent.Generation, want.Request),
		State:   v1alpha1.LogsStarting,
		Since:   want.Since,
		Lines:   want.Lines,
		Types:   slices.Clone(want.Types),
	}
	if ls.Since == "" {
		ls.Since = defaultLogsSince
	}
	if ls.Lines == 0 {
		ls.Lines = defaultLogsLines
	}
	if len(ls.Types) == 0 {
		ls.Types = []string{v1alpha1.LogTypeError}
		if engine != v1alpha1.EngineSQLServer {
			ls.Types = append(ls.Types, v1alpha1.LogTypeSlow)
		}
	}
	ls.Message = msgLogsStarting
	return ls
}

const msgLogsStarting = "The log Job starts once its capability is stored."

// startLogs moves on when the Job's Secret is observed with a capability that outlives the Job's
// deadline, and otherwise (re)sets the capability's expiry so that the Secret this call renders
// holds one that does.
func (c *call) startLogs(ls *v1alpha1.LogsStatus) {
	if c.r.caps == nil { // a replica started without the key
		c.setSynced(metav1.ConditionFalse, ReasonLogsUnavailable, msgNoLogsKey)
		return
	}
	if observed := c.observedLogsSecret(ls); observed != nil && c.now.Add(c.r.cfg.LogsJobDeadline).Before(c.logsSecretExpires(observed, ls)) {
		ls.State = v1alpha1.LogsRunning
		ls.Message = c.logsCommand(ls)
		c.followLogs(ls)
		return
	}
	c.askClass(storingSecret)
	// NOTE: a capability costs no cloud call and is a function of status.logs: renewing it is only
	// a new expiry. It is renewed when it would expire before the Job could end (its Secret never
	// arrived in time, or the call that accepted the request was long ago); the Secret of the last
	// expiry may still be on its way, and two calls answer the same one.
	// A recorded expiry beyond the capability's lifetime from now was not written by a call (a
	// forged status): it is replaced too.
	if exp := ls.CredentialExpires; exp == nil || !c.now.Add(c.r.cfg.LogsJobDeadline).Before(exp.Time) ||
		exp.After(c.now.Add(c.r.cfg.LogsCapabilityTTL+capabilitySkew)) {
		next := metav1.NewTime(c.now.Add(c.r.cfg.LogsCapabilityTTL))
		ls.CredentialExpires = &next
		c.log.Info("log Job capability issued", "job", ls.Job, "expires", next.Time)
	}
	ls.Message = msgLogsStarting
}

// logsSecretExpires is when the capability in an observed log Secret expires: as its annotation
// says, or else as status.logs recorded.
func (c *call) logsSecretExpires(s *corev1.Secret, ls *v1alpha1.LogsStatus) time.Time {
	if t, err := time.Parse(time.RFC3339, s.Annotations[AnnotationCapabilityExpires]); err == nil {
		return t
	}
	if ls.CredentialExpires != nil {
		return ls.CredentialExpires.Time
	}
	return time.Time{}
}

// followLogs records the end of the Job once it is observed.
func (c *call) followLogs(ls *v1alpha1.LogsStatus) {
	c.askClass(retry)
	state := ""
	if job := c.req.Jobs[ls.Job]; job != nil {
		for _, cond := range job.Status.Conditions {
			switch {
			case cond.Status != corev1.ConditionTrue:
			case cond.Type == batchv1.JobComplete:
				state = v1alpha1.LogsSucceeded
			case cond.Type == batchv1.JobFailed:
				state = v1alpha1.LogsFailed
			}
		}
	} else if exp := ls.CredentialExpires; exp != nil && !c.now.Time.Before(exp.Add(c.r.cfg.LogsJobDeadline)) {
		// The Job was never seen (refused by a quota, say) and could no longer run with its
		// capability: give up rather than keep its Secret for ever.
		state = v1alpha1.LogsFailed
	}
	if state == "" {
		return
	}
	ls.State = state
	finished := c.now
	ls.Finished = &finished
	c.log.Info("log Job finished", "job", ls.Job, "state", state)
	c.retainLogs(ls)
}

// retainLogs says where the output is while the Job is kept, and asks to be called when it goes.
func (c *call) retainLogs(ls *v1alpha1.LogsStatus) {
	if !c.logsJobKept(ls) {
		ls.Message = "The log Job is gone; set a new logs.request to read the logs again."
		return
	}
	ls.Message = c.logsCommand(ls)
	if ls.State == v1alpha1.LogsFailed {
		ls.Message = "The log Job failed; its log says why: " + ls.Message + "."
	}
	if left := ls.Finished.Add(c.r.cfg.LogsRetention).Sub(c.now.Time); left > 0 {
		c.ask(left + time.Second)
	}
}

// logsJobKept reports whether a finished Job is still returned: while it is observed and within
// the retention. Once gone it is never returned again, or Metacontroller would run it again.
func (c *call) logsJobKept(ls *v1alpha1.LogsStatus) bool {
	return ls.Finished != nil && c.req.Jobs[ls.Job] != nil && c.now.Time.Before(ls.Finished.Add(c.r.cfg.LogsRetention))
}

func (c *call) logsCommand(ls *v1alpha1.LogsStatus) string {
	return fmt.Sprintf("kubectl logs -n %s job/%s", c.parent.Namespace, ls.Job)
}

// logChildren are the log Job and its Secret as status.logs says they should be.
func (c *call) logChildren() []any {
	ls := c.st.Logs
	if ls == nil {
		return nil
	}
	var out []any
	switch ls.State {
	case v1alpha1.LogsStarting, v1alpha1.LogsRunning:
		// NOTE: only a call that observed the instance renders the capability, for the instance it
		// observed; any other (a failed observation, finalize) echoes the observed Secret.
		var rendered *corev1.Secret
		if c.logsInstance != "" && ls.CredentialExpires != nil && c.r.caps != nil {
			var err error
			if rendered, err = c.logsSecret(ls); err != nil {
				c.log.Error("cannot seal the log Job's capability", "job", ls.Job, "error", err.Error())
			}
		}
		if rendered != nil {
			out = append(out, rendered)
		} else if s := c.observedLogsSecret(ls); s != nil {
			out = append(out, echoLogsSecret(c.parent, s))
		}
		if ls.State == v1alpha1.LogsRunning {
			out = append(out, c.logsJob(ls))
		}
	case v1alpha1.LogsSucceeded, v1alpha1.LogsFailed:
		if c.logsJobKept(ls) {
			out = append(out, c.logsJob(ls))
		}
	}
	return out
}

// observedLogsSecret is the Job's Secret if it is observed with a capability in it (a Secret of
// an earlier version, with an AK/SK, is not).
func (c *call) observedLogsSecret(ls *v1alpha1.LogsStatus) *corev1.Secret {
	s := c.req.Secrets[logsSecretName(ls.Job)]
	if s == nil || len(s.Data[logsapi.EnvToken]) == 0 {
		return nil
	}
	return s
}

// NOTE: a Job's name becomes the job-name label of its pods, which allows 63 characters.
const (
	maxJobName      = 63
	logsJobInfix    = "-logs-"
	logsSecretSufix = "-credentials"
)

// logsJobName names the Job of one request. The generation that first saw the request is part of
// the hash, so that asking again with an earlier value is a new Job, not the old one found again.
func logsJobName(parent, uid string, generation int64, request string) string {
	sum := sha256.Sum256([]byte(uid + "/" + strconv.FormatInt(generation, 10) + "/" + request))
	suffix := logsJobInfix + hex.EncodeToString(sum[:])[:hashLen]
	if room := maxJobName - len(suffix); len(parent) > room {
		parent = strings.TrimRight(parent[:room], "-.")
	}
	return parent + suffix
}

func logsSecretName(job string) string { return job + logsSecretSufix }
