package reconcile

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// Operation types of the settings changed in place, recorded in status.operation while they run.
const (
	OpStorageType     = "ChangeStorageType"
	OpReplicationMode = "ChangeReplicationMode"
	OpStop            = "Stop"
	OpStart           = "Start"
)

// Reasons of the settings changed in place.
const (
	// ReasonStorageTypeUnavailable: OTC offers no move from the instance's storage type to the one
	// asked, for its engine and class.
	ReasonStorageTypeUnavailable = "StorageTypeUnavailable"
	// ReasonInstanceStopped: the instance is stopped (spec.stopped); the other differences wait.
	ReasonInstanceStopped = "InstanceStopped"
	// ReasonStopped (Ready): the instance is stopped as the spec asks.
	ReasonStopped = "Stopped"
	// ReasonChangeFailed: OTC's job for a change ended Failed; the change is asked again.
	ReasonChangeFailed = "ChangeFailed"
)

// autoStartAfter is how long OTC keeps an instance stopped: "If you do not manually start your
// stopped DB instance after seven days, your DB instance is automatically started during the next
// maintenance window" (DOC:rds/api_v3_recommended/db_instance_management/stopping_an_instance).
const autoStartAfter = 7 * 24 * time.Hour

// defaultMaintenanceWindow is OTC's maintenance window of a new instance.
const defaultMaintenanceWindow = "02:00-06:00"

// settledOp reports an operation OTC may carry out without showing a transitional status (a
// stop, a start, a replication mode, a security group, SSL) or may fail back to ACTIVE (a storage
// type change, a port: MODIFYING DATABASE PORT ends ACTIVE on the old port when its job fails, and
// the simulator's real servers keep their own): it is over once the instance shows its target
// (settingReached), or once its job has ended.
func settledOp(op *v1alpha1.Operation) bool {
	if op == nil {
		return false
	}
	switch op.Type {
	case OpStorageType, OpReplicationMode, OpStop, OpStart, OpSecurityGroup, OpSSL, OpPort:
		return true
	}
	return false
}

// settingReached reports whether the instance shows what a settled operation moves to; any other
// operation is judged by the status alone (operationDone).
func settingReached(op *v1alpha1.Operation, inst *cloud.Instance) bool {
	switch op.Type {
	case OpStorageType:
		return strings.EqualFold(inst.Volume.Type, op.Target) && !transitional(inst.Status)
	case OpReplicationMode:
		return inst.ReplicationMode == op.Target && !transitional(inst.Status)
	case OpStop, OpStart:
		return inst.Status == op.Target
	case OpSecurityGroup: // day2_network.go: OTC keeps the instance ACTIVE meanwhile
		return inst.SecurityGroupID == op.Target
	case OpSSL: // day2_network.go: the SDK gives no job; the listing's enable_ssl tells
		return inst.SSL != nil && onOff(*inst.SSL) == op.Target && !transitional(inst.Status)
	case OpPort: // day2_network.go: MODIFYING DATABASE PORT, then the listing's port tells
		return strconv.Itoa(inst.Port) == op.Target && !transitional(inst.Status)
	}
	return true
}

// planSettings is the part of planDay2 the settings add before the changes are listed: what
// status reports of a stopped instance and of the backup policy, the reads they need, and a
// settled operation (settledOp) whose job has ended. It reports false with the plan to answer
// when a read is needed first; in is updated when the operation is over.
func planSettings(in *day2Input, p *day2Plan) (day2Plan, bool) {
	p.stopped, p.ready = stoppedState(*in)
	period, known := knownPeriod(*in) // known whenever the policy was read
	if !known {
		p.needPolicy = true
		return *p, false
	}
	if in.policy != nil { // read now: status records the days (reported keeps them)
		have := in.inst.BackupStrategy
		p.backupPolicy = &v1alpha1.BackupPolicy{StartTime: have.StartTime, KeepDays: have.KeepDays, Period: period}
	}

	op := in.st.Operation
	if !settledOp(op) || transitional(in.inst.Status) {
		return *p, true
	}
	over := op.JobID == "" // an answer lost: what OTC shows decides, as for any operation
	if !over {
		switch {
		case in.job == nil && in.jobErr == nil:
			p.needJob = op.JobID
			return *p, false
		case errors.Is(in.jobErr, cloud.ErrNotFound):
			// NOTE: OTC answers DBS.200543 for a job it has not registered yet: it still runs.
		case in.jobErr != nil:
			p.jobErr = in.jobErr
			return *p, false
		case in.job.Status == cloud.JobFailed:
			over = true
			p.failed = ptr.To(notSynced(ReasonChangeFailed, fmt.Sprintf(
				"OTC's job for the %s ended Failed; the change is asked again at the next look.", describeOp(op)), settled))
		case in.job.Status == cloud.JobCompleted:
			// NOTE: report ends an operation whose target OTC shows; a job completed without it
			// (OTC's replication falls back to async when the standby does not answer) failed too.
			over = true
			p.failed = ptr.To(notSynced(ReasonChangeFailed, fmt.Sprintf(
				"OTC's job for the %s completed, but OTC does not show it; the change is asked again at the next look.", describeOp(op)), settled))
		}
	}
	if over {
		p.opOver = true
		in.st.Operation = nil
		if op.Type == OpStop {
			p.stopped = nil
		}
	}
	if p.failed != nil {
		// NOTE: asked again in the same call, a change OTC fails every time (no standby to
		// switch, no room to move the storage) was a new change at every pending resync, for
		// ever: it waits for the steady look instead, told.
		return *p, false
	}
	return *p, true
}

// reportedBackupPolicy is status.backupPolicy from what OTC lists: the window and retention,
// and the days recorded by an earlier call while the listed policy is still the recorded one
// (knownPeriod). Nil while automated backups are off and no window is listed.
func reportedBackupPolicy(rec *v1alpha1.BackupPolicy, have cloud.BackupStrategy) *v1alpha1.BackupPolicy {
	if have.KeepDays == 0 && have.StartTime == "" {
		return nil
	}
	out := &v1alpha1.BackupPolicy{StartTime: have.StartTime, KeepDays: have.KeepDays}
	if rec != nil && rec.StartTime == have.StartTime && rec.KeepDays == have.KeepDays && have.KeepDays > 0 {
		out.Period = rec.Period
	}
	return out
}

// stoppedState is status.stopped and the Ready outcome of a stopped instance: since when it is
// stopped (the record of an earlier call, or now when this call is the first to see it), and when
// OTC starts it by itself. A stop in flight keeps the record it sent.
func stoppedState(in day2Input) (*v1alpha1.StoppedStatus, *outcome) {
	prior := in.st.Stopped
	stopping := in.st.Operation != nil && in.st.Operation.Type == OpStop
	switch {
	case in.inst.Status == cloud.StatusShutdown:
	case stopping && prior != nil:
		return prior, nil
	default:
		return nil, nil
	}
	st := prior
	if st == nil {
		st = &v1alpha1.StoppedStatus{Since: in.now, AutoStart: metav1.NewTime(autoStart(in.now.Time, in.inst.MaintenanceWindow))}
	}
	if !in.spec.Stopped {
		return st, nil // the start follows (startChange)
	}
	return st, ptr.To(notReady(ReasonStopped, fmt.Sprintf(
		"The instance is stopped (spec.stopped). OTC starts it by itself in the maintenance window from %s; the controller then stops it again.",
		st.AutoStart.UTC().Format(time.RFC3339)), settled))
}

// autoStart is when OTC starts an instance stopped at since by itself: the start of the first
// maintenance window seven days later (autoStartAfter); OTC's default window when the instance
// reports none.
func autoStart(since time.Time, window string) time.Time {
	w, ok := parseDailyWindow(window)
	if !ok {
		w, _ = parseDailyWindow(defaultMaintenanceWindow)
	}
	return w.startFrom(since.Add(autoStartAfter))
}

// whileStopped is planDay2's guard for a stopped (SHUTDOWN) instance: only a start is made; an
// operation in flight (the stop's, the start's) is waited for; every other difference waits with
// a stable condition. It reports the changes left, or false with the plan's outcome set.
func whileStopped(in day2Input, changes []change, p *day2Plan) ([]change, bool) {
	if op := in.st.Operation; op != nil {
		if progress[op.Type] != "" {
			p.outcome = ptr.To(inProgress(op).underway())
		}
		return nil, false
	}
	first := changes[0]
	changes = slices.DeleteFunc(slices.Clone(changes), func(ch change) bool { return !ch.whenStopped })
	if len(changes) > 0 {
		return changes, true
	}
	if in.spec.Stopped {
		p.outcome = ptr.To(notSynced(ReasonInstanceStopped, fmt.Sprintf(
			"The instance is stopped (spec.stopped); the pending %s waits until stopped is false.", describe(first)), settled))
		return nil, false
	}
	p.outcome = ptr.To(notSynced(ReasonInstanceUnavailable, fmt.Sprintf(
		"The instance is %s in OTC; the pending %s waits until it is ACTIVE again.", in.inst.Status, describe(first)), settled))
	return nil, false
}

// canStop: OTC's stop and start serve MySQL and PostgreSQL ("This API is supported for MySQL and
// PostgreSQL DB engines", DOC: stopping an instance, starting an instance).
func canStop(engine string) bool {
	return engine == v1alpha1.EngineMySQL || engine == v1alpha1.EnginePostgreSQL
}

// startChange starts a stopped instance the spec no longer asks to be stopped: the first change,
// the only one a stopped instance takes.
func startChange(in day2Input) ([]change, *outcome) {
	if in.spec.Stopped || in.inst.Status != cloud.StatusShutdown || !canStop(in.spec.Datastoretype) {
		return nil, nil
	}
	return []change{{
		op: OpStart, target: cloud.StatusActive, whenStopped: true,
		act: action{kind: actStart, instance: in.inst.ID},
	}}, nil
}

// stopChange stops the instance the spec asks to be stopped: the last change, after every other
// one the running instance can take. An instance OTC started by itself after seven days is
// stopped again, once: a new change, since the instance runs again.
func stopChange(in day2Input) ([]change, *outcome) {
	if !in.spec.Stopped || in.inst.Status == cloud.StatusShutdown {
		return nil, nil
	}
	if !canStop(in.spec.Datastoretype) {
		return nil, wontAct(ReasonUnsupportedChange, "stopped: OTC stops MySQL and PostgreSQL instances only.")
	}
	return []change{{
		op: OpStop, target: cloud.StatusShutdown,
		act:     action{kind: actStop, instance: in.inst.ID},
		records: records{stopped: &v1alpha1.StoppedStatus{Since: in.now, AutoStart: metav1.NewTime(autoStart(in.now.Time, in.inst.MaintenanceWindow))}},
	}}, nil
}

// storageMoves are the storage type moves OTC offers, by the instance's class, among the types
// the spec can name (DOC:rds/umn "Changing a Storage Type" of RDS for MySQL, PostgreSQL and SQL
// Server): CLOUDSSD and ESSD move into each other for primary/standby instances of every engine
// and for single SQL Server instances; a single MySQL or PostgreSQL instance moves only between
// CLOUDSSD and Flexible SSD (GPSSD2), which the spec does not offer. COMMON and ULTRAHIGH move
// nowhere.
func storageMoveRefused(engine, instanceType, from, to string) string {
	ssd := func(t string) bool { return t == "CLOUDSSD" || t == "ESSD" }
	switch {
	case !ssd(from):
		return fmt.Sprintf("volumetype %s: OTC cannot move %s storage to another type; create a new Rds for that, e.g. from a backup (restorefrom).", to, from)
	case !ssd(to):
		return fmt.Sprintf("volumetype %s: OTC cannot move storage to %s; CLOUDSSD and ESSD are the types it moves to.", to, to)
	case strings.EqualFold(instanceType, "Single") && engine != v1alpha1.EngineSQLServer:
		return fmt.Sprintf("volumetype %s: OTC moves the storage of a single %s instance only between CLOUDSSD and Flexible SSD; %s to %s needs a primary/standby instance (hamode Ha).", to, engine, from, to)
	}
	return ""
}

// storageTypeChange moves the storage to spec.volumetype, where OTC offers the move.
func storageTypeChange(in day2Input) ([]change, *outcome) {
	want, have := in.spec.Volumetype, in.inst.Volume.Type
	if want == "" || have == "" || strings.EqualFold(want, have) {
		return nil, nil
	}
	if why := storageMoveRefused(in.spec.Datastoretype, in.inst.Type, have, want); why != "" {
		return nil, wontAct(ReasonStorageTypeUnavailable, why)
	}
	return []change{{
		op: OpStorageType, target: want,
		act: action{kind: actStorageType, instance: in.inst.ID, storage: cloud.Storage{Engine: in.spec.Datastoretype, InstanceType: in.inst.Type, VolumeType: want}},
	}}, nil
}

// replicationChange sets the replication mode of a primary/standby instance to
// spec.hareplicationmode. A single instance has none: it gets one with its standby (haChange).
func replicationChange(in day2Input) ([]change, *outcome) {
	want, have := in.spec.Hareplicationmode, in.inst.ReplicationMode
	if want == "" || have == "" || want == have || !isHAInstance(in.inst) {
		return nil, nil
	}
	if !canStop(in.spec.Datastoretype) {
		// NOTE: OTC changes the replication mode of MySQL and PostgreSQL only (DOC: changing the
		// data synchronize model); SQL Server replicates sync, which the spec is checked for.
		return nil, wontAct(ReasonUnsupportedChange, fmt.Sprintf("hareplicationmode %s: OTC changes the replication mode of MySQL and PostgreSQL instances only.", want))
	}
	return []change{{
		op: OpReplicationMode, target: want,
		act: action{kind: actReplicationMode, instance: in.inst.ID, mode: want},
	}}, nil
}

// maintenanceChange sets the maintenance window to spec.maintenancewindow, at once.
func maintenanceChange(in day2Input) ([]change, *outcome) {
	want := in.spec.Maintenancewindow
	if want == "" || want == in.inst.MaintenanceWindow {
		return nil, nil
	}
	return []change{{
		target: "maintenance window " + want, what: "maintenance window change to " + want,
		act: action{kind: actMaintenanceWindow, instance: in.inst.ID, window: want},
	}}, nil
}

// knownPeriod is the backup policy's days of the week as far as this call knows them: read now,
// or recorded in status by an earlier call while the window and retention OTC lists are still
// the ones recorded with it. Automated backups that are off have none. It reports false when the
// policy must be read: spec.backupperiod asks for days that are not known.
//
// NOTE: OTC's instance list reports the backup window and retention but not the days, and the
// policy's own read is one more call per instance: it is made only for an object that sets
// backupperiod, when status has no record or the listed policy no longer matches the record
// (someone changed it elsewhere). Without backupperiod the days are OTC's, reported as recorded.
func knownPeriod(in day2Input) (string, bool) {
	have := in.inst.BackupStrategy
	rec := in.st.BackupPolicy
	current := rec != nil && rec.Period != "" && rec.StartTime == have.StartTime && rec.KeepDays == have.KeepDays
	switch {
	case in.policy != nil:
		return normalPeriod(in.policy.Period), true
	case have.KeepDays == 0:
		return "", true
	case current:
		return rec.Period, true
	}
	return "", in.spec.Backupperiod == ""
}

// normalPeriod writes days of the week as OTC does, ascending without repeats: "5,1,3" is
// "1,3,5". Anything else is returned as it is.
func normalPeriod(p string) string {
	if p == "" {
		return ""
	}
	var days []string
	for _, d := range strings.Split(p, ",") {
		d = strings.TrimSpace(d)
		if len(d) != 1 || d[0] < '1' || d[0] > '7' {
			return p
		}
		if !slices.Contains(days, d) {
			days = append(days, d)
		}
	}
	slices.Sort(days)
	return strings.Join(days, ",")
}

// validBackupPeriod: days of the week 1 to 7, comma-separated, none twice.
func validBackupPeriod(p string) bool {
	seen := map[string]bool{}
	for _, d := range strings.Split(p, ",") {
		if len(d) != 1 || d[0] < '1' || d[0] > '7' || seen[d] {
			return false
		}
		seen[d] = true
	}
	return true
}

// validMaintenanceWindow: hh:mm-HH:MM in UTC, four hours long ("The interval between the start
// time and end time must be four hours", DOC: configuring the maintenance window), on a quarter
// hour like backupstarttime.
func validMaintenanceWindow(s string) bool {
	w, ok := parseDailyWindow(s)
	return ok && w.onQuarterHours() && w.lasts(4*time.Hour)
}

// validateSettings adds the problems of the settings fields to Validate's.
func validateSettings(spec *v1alpha1.RdsSpec, p *problems) {
	if w := spec.Maintenancewindow; w != "" && !validMaintenanceWindow(w) {
		p.addf("maintenancewindow %q is not a four-hour window hh:mm-HH:MM (UTC) with minutes 00, 15, 30 or 45, e.g. 02:00-06:00.", w)
	}
	if d := spec.Backupperiod; d != "" && !validBackupPeriod(d) {
		p.addf("backupperiod %q is not days of the week 1 (Monday) to 7 (Sunday), comma-separated, e.g. 1,3,5.", d)
	}
	if spec.Stopped && !canStop(spec.Datastoretype) && spec.Datastoretype != "" {
		p.addf("stopped: OTC stops MySQL and PostgreSQL instances only, not %s.", spec.Datastoretype)
	}
}
