package otcsim

import (
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The settings changed in place: the storage type, the replication mode, the maintenance window,
// stop and start (rds_actions.go serves the last two).

// defaultMaintenanceWindow is OTC's maintenance window of a new instance (DOC:rds/umn "Changing
// the Maintenance Window": "02:00-06:00 by default").
const defaultMaintenanceWindow = "02:00-06:00"

// stoppedFor is how long OTC keeps an instance stopped: "If you do not manually start your
// stopped DB instance after seven days, your DB instance is automatically started during the next
// maintenance window" (DOC:rds/api_v3_recommended/db_instance_management/stopping_an_instance).
const stoppedFor = 7 * 24 * time.Hour

// volumeCodeRe is the storage code of a storage type change: rds.<engine>.volume.<type>, .ha
// for primary/standby instances, .rr for read replicas, none for single ones.
var volumeCodeRe = regexp.MustCompile(`^rds\.(mysql|pg|mssql)\.volume\.([a-z0-9]+)(\.ha|\.rr)?$`)

// storageMoves are the moves OTC offers between the types the simulator knows (DOC:rds/umn
// "Changing a Storage Type", per engine): CLOUDSSD and ESSD into each other, for primary/standby
// instances and read replicas of every engine, and for single SQL Server instances; a single
// MySQL or PostgreSQL instance moves only between CLOUDSSD and Flexible SSD, which it does not
// simulate. COMMON and ULTRAHIGH move nowhere.
func storageMoveAllowed(e *engine, typ, from, to string) bool {
	ssd := func(t string) bool { return t == "CLOUDSSD" || t == "ESSD" }
	if !ssd(from) || !ssd(to) || from == to {
		return false
	}
	return typ != TypeSingle || e.short == "mssql"
}

// changeStorageType serves the change_volume action: MODIFYING, then the new storage type.
// NOTE: the API reference says volume_code is an Integer; its examples, and the SDK, send the
// code as a string.
func (s *Sim) changeStorageType(in *instance, code string, now time.Time) (*job, *apiError) {
	m := volumeCodeRe.FindStringSubmatch(code)
	if m == nil || m[1] != in.engine.short {
		return nil, errorf(http.StatusBadRequest, "DBS.200026", "Invalid storage type code %q for %s.", code, in.engine.name)
	}
	wantSuffix := map[string]string{TypeSingle: "", TypeHa: ".ha", TypeReplica: ".rr"}[in.typ]
	if m[3] != wantSuffix {
		return nil, errorf(http.StatusBadRequest, "DBS.200026", "The storage type code %q is not for %s instances.", code, in.typ)
	}
	to := strings.ToUpper(m[2])
	if !storageMoveAllowed(in.engine, in.typ, in.volumeType, to) {
		return nil, errorf(http.StatusBadRequest, "DBS.200026", "The storage type %s of this %s instance cannot be changed to %s.", in.volumeType, in.typ, to)
	}
	if err := in.checkIdle(); err != nil {
		return nil, err
	}
	for _, az := range in.azs {
		if storageAZStatus(to, az) != azNormal {
			return nil, errorf(http.StatusBadRequest, "DBS.200026", "The storage type %s is not offered in %s.", to, az)
		}
	}
	d := s.opts.Durations.Enlarge
	j := s.newJob("Modify"+in.engine.jobName+"VolumeType", in, now, d)
	j.entities = map[string]any{"volume": map[string]any{"original_type": in.volumeType, "target_type": to}}
	in.startOp(opKindStorageType, StatusModifying, now, d, j, func(in *instance, _ time.Time) {
		in.volumeType = to
		in.status = StatusActive
	})
	return j, nil
}

// handleChangeFailoverMode serves PUT /instances/{id}/failover/mode (200, {"instanceId",
// "replicationMode","workflowId"}): MySQL and PostgreSQL primary/standby instances only. The
// instance stays ACTIVE; the new mode is listed once the workflow ends.
func (s *Sim) handleChangeFailoverMode(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Mode string `json:"mode"`
	}
	in, now := s.lockInstance(w, r, &req)
	if in == nil {
		return
	}
	defer s.mu.Unlock()
	switch {
	case in.engine.short == "mssql":
		writeError(w, svcRDS, errParam("the replication mode of %s instances cannot be changed", in.engine.name))
		return
	case in.typ != TypeHa:
		writeError(w, svcRDS, errParam("only primary/standby DB instances have a replication mode"))
		return
	case !slices.Contains(in.engine.replication, req.Mode):
		writeError(w, svcRDS, errParam("mode must be one of %s for %s", strings.Join(in.engine.replication, ", "), in.engine.name))
		return
	}
	if err := in.checkIdle(); err != nil {
		writeError(w, svcRDS, err)
		return
	}
	mode, d := req.Mode, s.opts.Durations.Restart
	j := s.newJob("Modify"+in.engine.jobName+"ReplicationMode", in, now, d)
	in.startOp(opKindReplication, "", now, d, j, func(in *instance, _ time.Time) { in.replicationMode = mode })
	writeJSON(w, http.StatusOK, map[string]any{"instanceId": in.id, "replicationMode": mode, "workflowId": j.id})
}

// handleChangeOpsWindow serves PUT /instances/{id}/ops-window (200, {}): the maintenance window,
// HH:MM to HH:MM in UTC, four hours apart ("The interval between the start time and end time
// must be four hours", DOC: configuring the maintenance window). It takes effect at once.
func (s *Sim) handleChangeOpsWindow(w http.ResponseWriter, r *http.Request) {
	var req struct {
		StartTime string `json:"start_time"`
		EndTime   string `json:"end_time"`
	}
	if e := decodeBody(r, &req); e != nil {
		writeError(w, svcRDS, e)
		return
	}
	h1, m1, ok1 := hhmm(req.StartTime)
	h2, m2, ok2 := hhmm(req.EndTime)
	if !ok1 || !ok2 || m1 != m2 || (h1+4)%24 != h2 {
		writeError(w, svcRDS, errParam("start_time and end_time must be HH:MM, four hours apart"))
		return
	}
	in, _ := s.lockInstance(w, r, nil)
	if in == nil {
		return
	}
	defer s.mu.Unlock()
	if in.op != nil && (in.op.kind == opKindCreate || in.op.kind == opKindDelete) {
		writeError(w, svcRDS, errInstanceBusy())
		return
	}
	in.maintenanceWindow = req.StartTime + "-" + req.EndTime
	writeJSON(w, http.StatusOK, map[string]any{})
}

// hhmm reads "HH:MM".
func hhmm(v string) (h, m int, ok bool) {
	if len(v) != 5 || v[2] != ':' {
		return 0, 0, false
	}
	h, err1 := strconv.Atoi(v[:2])
	m, err2 := strconv.Atoi(v[3:])
	return h, m, err1 == nil && err2 == nil && h >= 0 && h < 24 && m >= 0 && m < 60
}

// shownMaintenanceWindow is the window List reports.
func (in *instance) shownMaintenanceWindow() string {
	if in.maintenanceWindow == "" {
		return defaultMaintenanceWindow
	}
	return in.maintenanceWindow
}

// inMaintenanceWindow reports whether t falls in the instance's maintenance window.
func (in *instance) inMaintenanceWindow(t time.Time) bool {
	w := in.shownMaintenanceWindow()
	h1, m1, _ := hhmm(w[:5])
	h2, m2, _ := hhmm(w[6:])
	t = t.UTC()
	minute, from, to := t.Hour()*60+t.Minute(), h1*60+m1, h2*60+m2
	if from <= to {
		return minute >= from && minute < to
	}
	return minute >= from || minute < to
}

// autoStart starts an instance stopped for seven days, in its maintenance window, as OTC does.
func (s *Sim) autoStart(in *instance, now time.Time) {
	if in.op != nil || now.Sub(in.stoppedAt) < stoppedFor || !in.inMaintenanceWindow(now) {
		return
	}
	d := s.opts.Durations.Restart
	j := s.newJob("AutoStartup"+in.engine.jobName+"Instance", in, now, d)
	in.startOp(opKindStartStop, "", now, d, j, func(in *instance, _ time.Time) {
		in.status, in.stoppedAt = StatusActive, time.Time{}
		in.replicasFollow(StatusActive)
	})
	s.log.Info("otcsim auto start", "instance", in.id)
}

// stoppedByStop: an instance a stop stopped (SHUTDOWN since stoppedAt), which autoStart may start.
func stoppedByStop(in *instance) bool { return in.status == StatusShutdown && !in.stoppedAt.IsZero() }
