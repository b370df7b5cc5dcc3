package otcsim

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Backup statuses.
const (
	BackupBuilding  = "BUILDING"
	BackupCompleted = "COMPLETED"
	BackupFailed    = "FAILED"
	BackupDeleting  = "DELETING"
)

// Backup types.
const (
	backupAuto   = "auto"
	backupManual = "manual"
)

// backup is an RDS backup. Its status is a function of time: BUILDING until end, then COMPLETED (or
// FAILED); DELETING from a delete request until deleteEnd, then it vanishes.
type backup struct {
	seq                    int
	id, instanceID         string
	name, description, typ string
	databases              []string
	engine                 *engine
	version                string
	begin, end             time.Time
	sizeKB                 int
	volumeSize             int // GB of the instance when it was taken; a restore target needs as much
	failed                 bool
	deleting               bool
	deleteEnd              time.Time
}

func (b *backup) status(now time.Time) string {
	switch {
	case b.deleting:
		return BackupDeleting
	case now.Before(b.end):
		return BackupBuilding
	case b.failed:
		return BackupFailed
	default:
		return BackupCompleted
	}
}

func (b *backup) json(now time.Time) map[string]any {
	st := b.status(now)
	dbs := make([]map[string]any, 0, len(b.databases))
	for _, d := range b.databases {
		dbs = append(dbs, map[string]any{"name": d})
	}
	end, size := "", 0
	if st != BackupBuilding {
		end, size = rdsTime(b.end), b.sizeKB
	}
	return map[string]any{
		"id": b.id, "instance_id": b.instanceID, "name": b.name, "description": b.description,
		"type": b.typ, "size": size, "databases": dbs, "begin_time": rdsTime(b.begin), "end_time": end,
		"datastore": map[string]any{"type": b.engine.name, "version": b.version}, "status": st,
	}
}

var backupNameRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{3,63}$`)

// backupSizeKB is a plausible size for a backup of an instance.
func backupSizeKB(in *instance) int { return 2803 + in.volumeSize*13 }

// addAutoBackup records a completed automated backup (OTC takes a full backup after creation).
func (s *Sim) addAutoBackup(in *instance, at time.Time) {
	b := &backup{
		seq: s.nextSeq(), id: s.randHex(32) + "br01", instanceID: in.id,
		name: in.name + "-" + at.UTC().Format("20060102150405") + "-auto", typ: backupAuto,
		engine: in.engine, version: in.version, begin: at, end: at, sizeKB: backupSizeKB(in),
		volumeSize: in.volumeSize,
	}
	s.backups[b.id] = b
}

// handleCreateBackup serves POST /rds/v3/{project}/backups.
// NOTE: it answers 200 (202 breaks the SDK) with the backup in BUILDING and no job; clients poll
// ListBackups. The instance is BACKING UP meanwhile.
func (s *Sim) handleCreateBackup(w http.ResponseWriter, r *http.Request) {
	var req struct {
		InstanceID  string `json:"instance_id"`
		Name        string `json:"name"`
		Description string `json:"description"`
		Databases   []struct {
			Name string `json:"name"`
		} `json:"databases"`
	}
	if e := decodeBody(r, &req); e != nil {
		writeError(w, svcRDS, e)
		return
	}
	now := s.lockAt()
	defer s.mu.Unlock()

	if req.InstanceID == "" || req.Name == "" {
		writeError(w, svcRDS, errParam("instance_id and name are required"))
		return
	}
	if !backupNameRe.MatchString(req.Name) {
		writeError(w, svcRDS, errorf(http.StatusBadRequest, "DBS.200001",
			"Invalid backup name: 4 to 64 characters, starting with a letter; letters, digits, hyphens and underscores only."))
		return
	}
	in := s.lookupInstance(w, req.InstanceID)
	if in == nil {
		return
	}
	if in.typ == TypeReplica {
		writeError(w, svcRDS, errorf(http.StatusBadRequest, "DBS.201014", "Read replicas cannot be backed up manually."))
		return
	}
	if in.op != nil && in.op.kind == opKindBackup {
		writeError(w, svcRDS, errorf(http.StatusConflict, "DBS.201205", "Backup is in progress, please wait."))
		return
	}
	if err := in.checkIdle(); err != nil {
		writeError(w, svcRDS, err)
		return
	}
	for _, b := range s.backups {
		if b.name == req.Name {
			// NOTE: OTC documents that backup names must be unique; the exact code is not documented.
			writeError(w, svcRDS, errorf(http.StatusConflict, "DBS.201204", "The backup name already exists."))
			return
		}
	}

	d := s.opts.Durations.Backup
	b := &backup{
		seq: s.nextSeq(), id: s.randHex(32) + "br01", instanceID: in.id, name: req.Name,
		description: req.Description, typ: backupManual, engine: in.engine, version: in.version,
		begin: now, end: now.Add(d), sizeKB: backupSizeKB(in), failed: in.failNextBackup,
		volumeSize: in.volumeSize,
	}
	for _, db := range req.Databases {
		b.databases = append(b.databases, db.Name)
	}
	in.failNextBackup = false
	s.backups[b.id] = b
	in.startOp(opKindBackup, StatusBackingUp, now, d, nil, nil)

	writeJSON(w, http.StatusOK, map[string]any{"backup": map[string]any{
		"id": b.id, "instance_id": b.instanceID, "name": b.name, "description": b.description,
		"begin_time": rdsTime(b.begin), "status": BackupBuilding, "type": b.typ,
		"databases": b.json(now)["databases"],
	}})
}

// handleListBackups serves GET /rds/v3/{project}/backups.
func (s *Sim) handleListBackups(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	offset, err := queryInt(r, "offset", 0)
	if err != nil {
		writeError(w, svcRDS, err)
		return
	}
	limit, err := queryInt(r, "limit", 100)
	if err == nil && (limit < 1 || limit > 100 || offset < 0) {
		err = errParam("offset must not be negative and limit must be between 1 and 100")
	}
	if err != nil {
		writeError(w, svcRDS, err)
		return
	}
	var begin, end time.Time
	if q.Get("begin_time") != "" || q.Get("end_time") != "" {
		var e1, e2 error
		begin, e1 = time.Parse(rdsTimeLayout, q.Get("begin_time"))
		end, e2 = time.Parse(rdsTimeLayout, q.Get("end_time"))
		if e1 != nil || e2 != nil {
			writeError(w, svcRDS, errParam("begin_time and end_time go together, formatted yyyy-mm-ddThh:mm:ssZ"))
			return
		}
	}

	now := s.lockAt()
	defer s.mu.Unlock()
	all := make([]*backup, 0, len(s.backups))
	for _, b := range s.backups {
		if (q.Get("instance_id") != "" && b.instanceID != q.Get("instance_id")) ||
			(q.Get("backup_id") != "" && b.id != q.Get("backup_id")) ||
			(q.Get("backup_type") != "" && b.typ != q.Get("backup_type")) ||
			(!begin.IsZero() && (b.begin.Before(begin) || b.begin.After(end))) {
			continue
		}
		all = append(all, b)
	}
	slices.SortFunc(all, func(a, b *backup) int { return b.seq - a.seq }) // newest first
	out := make([]map[string]any, 0, len(all))
	for _, b := range all {
		out = append(out, b.json(now))
	}
	from, to := page(len(out), offset, limit)
	writeJSON(w, http.StatusOK, map[string]any{"backups": out[from:to], "total_count": len(out)})
}

// handleDeleteBackup serves DELETE /rds/v3/{project}/backups/{id}.
// NOTE: it answers 200 with an empty body (202 breaks the SDK). The backup is DELETING for
// Durations.Delete, then vanishes from the list.
func (s *Sim) handleDeleteBackup(w http.ResponseWriter, r *http.Request) {
	now := s.lockAt()
	defer s.mu.Unlock()
	b := s.backups[r.PathValue("id")]
	if b == nil {
		writeError(w, svcRDS, errorf(http.StatusNotFound, "DBS.201010", "The backup does not exist."))
		return
	}
	switch {
	case b.typ == backupAuto:
		writeError(w, svcRDS, errorf(http.StatusBadRequest, "DBS.201014", "Automated backups cannot be deleted."))
		return
	case b.deleting:
		writeError(w, svcRDS, errorf(http.StatusConflict, "DBS.201202", "The backup is being deleted."))
		return
	case b.status(now) == BackupBuilding:
		writeError(w, svcRDS, errorf(http.StatusConflict, "DBS.201205", "Backup is in progress, please wait."))
		return
	}
	b.deleting, b.deleteEnd = true, now.Add(s.opts.Durations.Delete)
	writeEmpty(w, http.StatusOK)
}

// handleShowBackupPolicy serves GET /instances/{id}/backups/policy.
func (s *Sim) handleShowBackupPolicy(w http.ResponseWriter, r *http.Request) {
	in, _ := s.lockInstance(w, r, nil)
	if in == nil {
		return
	}
	defer s.mu.Unlock()
	policy := map[string]any{"keep_days": in.backupKeepDays}
	if in.backupKeepDays > 0 {
		policy["start_time"], policy["period"] = in.backupStart, in.backupPeriod
	}
	writeJSON(w, http.StatusOK, map[string]any{"backup_policy": policy})
}

// handleUpdateBackupPolicy serves PUT /instances/{id}/backups/policy (200, empty body).
// keep_days 0 disables automated backups; otherwise start_time and period are required.
func (s *Sim) handleUpdateBackupPolicy(w http.ResponseWriter, r *http.Request) {
	var req struct {
		BackupPolicy *struct {
			KeepDays  *flexInt `json:"keep_days"`
			StartTime string   `json:"start_time"`
			Period    string   `json:"period"`
		} `json:"backup_policy"`
	}
	if e := decodeBody(r, &req); e != nil {
		writeError(w, svcRDS, e)
		return
	}
	p := req.BackupPolicy
	if p == nil || p.KeepDays == nil || !p.KeepDays.Set {
		writeError(w, svcRDS, errParam("backup_policy.keep_days is required"))
		return
	}
	keep := p.KeepDays.Value
	if keep < 0 || keep > 732 {
		writeError(w, svcRDS, errorf(http.StatusBadRequest, "DBS.201106", "Invalid backup retention days %d.", keep))
		return
	}
	if keep > 0 && !validBackupWindow(p.StartTime) {
		writeError(w, svcRDS, errorf(http.StatusBadRequest, "DBS.201103", "Invalid backup start time %q.", p.StartTime))
		return
	}
	if keep > 0 && !validBackupPeriod(p.Period) {
		writeError(w, svcRDS, errorf(http.StatusBadRequest, "DBS.201101", "Invalid backup cycle %q.", p.Period))
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
	in.backupKeepDays = keep
	if keep > 0 {
		in.backupStart, in.backupPeriod = p.StartTime, p.Period
	}
	writeEmpty(w, http.StatusOK)
}

// validBackupPeriod checks a comma-separated set of week days 1–7.
func validBackupPeriod(p string) bool {
	seen := map[string]bool{}
	for _, d := range strings.Split(p, ",") {
		if len(d) != 1 || d[0] < '1' || d[0] > '7' || seen[d] {
			return false
		}
		seen[d] = true
	}
	return len(seen) > 0
}
