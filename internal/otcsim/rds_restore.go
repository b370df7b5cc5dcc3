package otcsim

import (
	"net/http"
	"time"
)

// Restore types.
const (
	restoreBackup    = "backup"
	restoreTimestamp = "timestamp"
)

// restorePoint is where a restore takes its data from (restore_point of restore-to-new, source of
// PITR). NOTE: the SDK types restore_time as int in RestorePoint and int64 in Source; both are ms.
type restorePoint struct {
	InstanceID  string `json:"instance_id"`
	Type        string `json:"type"`
	BackupID    string `json:"backup_id"`
	RestoreTime int64  `json:"restore_time"`
}

// restoreSource is what a valid restore point resolves to.
type restoreSource struct {
	engine          *engine
	version         string
	completeVersion string
	volumeSize      int
}

// resolveRestorePoint checks a restore point against the backups and restorable time ranges.
func (s *Sim) resolveRestorePoint(rp restorePoint, now time.Time) (restoreSource, *apiError) {
	if rp.InstanceID == "" {
		return restoreSource{}, errParam("the source instance_id is required")
	}
	switch rp.Type {
	case restoreBackup:
		b := s.backups[rp.BackupID]
		if b == nil || b.instanceID != rp.InstanceID || b.deleting {
			return restoreSource{}, errorf(http.StatusNotFound, "DBS.201010", "The backup does not exist.")
		}
		if b.status(now) != BackupCompleted {
			return restoreSource{}, errParam("backup %s is not COMPLETED", b.id)
		}
		src := restoreSource{engine: b.engine, version: b.version, volumeSize: b.volumeSize}
		src.completeVersion = b.engine.version(b.version).complete
		if in := s.instances[rp.InstanceID]; in != nil {
			src.completeVersion = in.completeVersion
		}
		return src, nil
	case restoreTimestamp:
		in := s.instances[rp.InstanceID]
		if in == nil {
			return restoreSource{}, errInstanceNotFound(rp.InstanceID)
		}
		inRange := false
		for _, rg := range s.restoreRanges(in, now) {
			if rp.RestoreTime >= rg[0] && rp.RestoreTime <= rg[1] {
				inRange = true
			}
		}
		if !inRange {
			// NOTE: the error for a time outside every range is not documented.
			return restoreSource{}, errParam("restore_time %d is outside the restorable time ranges", rp.RestoreTime)
		}
		return restoreSource{engine: in.engine, version: in.version, completeVersion: in.completeVersion, volumeSize: in.volumeSize}, nil
	}
	return restoreSource{}, errParam("the restore type must be backup or timestamp")
}

// restoreRanges are the restorable periods of an instance in ms: from its oldest usable backup to
// now (binlogs/WAL fill the gaps).
func (s *Sim) restoreRanges(in *instance, now time.Time) [][2]int64 {
	var oldest time.Time
	for _, b := range s.backups {
		if b.instanceID == in.id && !b.deleting && b.status(now) == BackupCompleted &&
			(oldest.IsZero() || b.begin.Before(oldest)) {
			oldest = b.begin
		}
	}
	if oldest.IsZero() || in.created.IsZero() {
		return nil
	}
	return [][2]int64{{oldest.UnixMilli(), now.UnixMilli()}}
}

// handleListRestoreTimes serves GET /instances/{id}/restore-time.
// NOTE: the SDK never sends the date it is given (a json tag, not a q tag), so there is no filter.
func (s *Sim) handleListRestoreTimes(w http.ResponseWriter, r *http.Request) {
	in, now := s.lockInstance(w, r, nil)
	if in == nil {
		return
	}
	defer s.mu.Unlock()
	out := []map[string]any{}
	for _, rg := range s.restoreRanges(in, now) {
		out = append(out, map[string]any{"start_time": rg[0], "end_time": rg[1]})
	}
	writeJSON(w, http.StatusOK, map[string]any{"restore_time": out})
}

// handleRestorePITR serves POST /instances/recovery: restore to the same or another existing
// instance. The target is RESTORING, then ACTIVE. It answers 200 with a job_id.
func (s *Sim) handleRestorePITR(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Source *restorePoint `json:"source"`
		Target *struct {
			InstanceID string `json:"instance_id"`
		} `json:"target"`
	}
	if e := decodeBody(r, &req); e != nil {
		writeError(w, svcRDS, e)
		return
	}
	if req.Source == nil || req.Target == nil || req.Target.InstanceID == "" {
		writeError(w, svcRDS, errParam("source and target.instance_id are required"))
		return
	}
	now := s.lockAt()
	defer s.mu.Unlock()
	src, err := s.resolveRestorePoint(*req.Source, now)
	if err != nil {
		writeError(w, svcRDS, err)
		return
	}
	target := s.lookupInstance(w, req.Target.InstanceID)
	if target == nil {
		return
	}
	switch {
	case target.engine != src.engine || target.version != src.version:
		err = errParam("the target must run %s %s like the source", src.engine.name, src.version)
	case target.id == req.Source.InstanceID && target.engine.short == "pg":
		// NOTE: restoring to the original instance is supported only for MySQL and SQL Server.
		err = errorf(http.StatusBadRequest, "DBS.200086", "PostgreSQL data cannot be restored to the original DB instance.")
	case target.volumeSize < src.volumeSize:
		err = errParam("the target storage (%d GB) is smaller than the source's (%d GB)", target.volumeSize, src.volumeSize)
	default:
		err = target.checkIdle()
	}
	if err != nil {
		writeError(w, svcRDS, err)
		return
	}
	d := s.opts.Durations.Restore
	j := s.newJob("Restore"+target.engine.jobName+"Instance", target, now, d)
	target.startOp(opKindRestore, StatusRestoring, now, d, j, func(in *instance, at time.Time) {
		in.status = StatusActive
		in.logError(at, "NOTE", "Data restored from "+req.Source.Type+" of instance "+req.Source.InstanceID+".")
	})
	writeJSON(w, http.StatusOK, map[string]any{"job_id": j.id})
}

// restoreToNew creates an instance from a restore point (POST /instances with restore_point). The
// body is a create body without datastore and region; engine and version come from the source.
func (s *Sim) restoreToNew(req *createRequest, now time.Time) (*instance, *job, *apiError) {
	src, err := s.resolveRestorePoint(*req.RestorePoint, now)
	if err != nil {
		return nil, nil, err
	}
	if req.Volume != nil && req.Volume.Size.Value < src.volumeSize {
		return nil, nil, errParam("the new storage (%d GB) must be at least the source's (%d GB)", req.Volume.Size.Value, src.volumeSize)
	}
	in, err := s.newInstance(req, src.engine, src.version, now)
	if err != nil {
		return nil, nil, err
	}
	in.completeVersion = src.completeVersion
	d := s.opts.Durations.Restore
	j := s.newJob("Restore"+src.engine.jobName+"NewInstance", in, now, d)
	s.startBuild(in, j, now, d, nil)
	return in, j, nil
}
