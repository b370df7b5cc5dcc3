package sync

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// Operation types of restores.
const (
	OpRestore      = "Restore"
	OpRestoreToNew = "RestoreToNew"
)

// Reasons of restores and adoption.
const (
	ReasonRestoring             = "Restoring"
	ReasonRestoreWaiting        = "RestoreWaiting"
	ReasonRestoreTimeOutOfRange = "RestoreTimeOutOfRange"
	ReasonRestoreRefused        = "RestoreRefused"
	ReasonRestoreFailed         = "RestoreFailed"
	ReasonRestoreSourceInvalid  = "RestoreSourceInvalid"
	ReasonAdoptionMismatch      = "AdoptionMismatch"
	ReasonPasswordUnknown       = "PasswordUnknown"
)

var (
	// instanceIDPattern is OTC's RDS instance id: 32 hex digits and a type suffix such as in01.
	instanceIDPattern = regexp.MustCompile(`^[0-9a-f]{32}in[0-9]{2}$`)
	// otcNamePattern is an OTC instance name or id; never empty, never a "*" wildcard.
	otcNamePattern  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{3,63}$`)
	backupIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)
)

// restoreProblems validates restorefrom and instanceid, in field order.
func restoreProblems(spec *v1alpha1.RdsSpec) []string {
	var p problems
	if rf := spec.Restorefrom; rf != nil {
		if !otcNamePattern.MatchString(rf.Instance) {
			p.addf("restorefrom.instance %q is not an OTC instance id or name.", rf.Instance)
		}
		switch {
		case (rf.Backupid == "") == (rf.Restoretime == ""):
			p.addf("restorefrom needs exactly one of backupid and restoretime.")
		case rf.Backupid != "" && !backupIDPattern.MatchString(rf.Backupid):
			p.addf("restorefrom.backupid %q is not a backup id.", rf.Backupid)
		case rf.Restoretime != "":
			if _, err := time.Parse(time.RFC3339, rf.Restoretime); err != nil {
				p.addf("restorefrom.restoretime %q is not an RFC3339 time such as 2026-11-22T10:00:00Z.", rf.Restoretime)
			}
		}
	}
	if spec.Instanceid != "" {
		if !instanceIDPattern.MatchString(spec.Instanceid) {
			p.addf("instanceid %q is not an OTC instance id (32 hex digits and a suffix such as in01).", spec.Instanceid)
		}
		if spec.Restorefrom != nil {
			p.addf("restorefrom and instanceid are both set: a new instance is restored or an existing one adopted, not both.")
		}
	}
	return p
}

// restoreBaseline is the record of the backuprestoretime an instance starts with.
//
// NOTE: the value present when the instance is created, restored into or adopted, or when the
// hooks first see an instance that predates this record, is never a request to restore: it was
// written before the instance existed, or was handled by the original operator. Restoring a
// brand-new or just adopted instance to it would at best fail and at worst roll back live data.
// Only a later change of the value asks for a restore.
func restoreBaseline(spec *v1alpha1.RdsSpec) *v1alpha1.RestoreStatus {
	return &v1alpha1.RestoreStatus{Time: spec.Backuprestoretime, Result: v1alpha1.RestoreSkipped}
}

// restoreInput is all that the in-place restore decision reads: the spec, status.operation as
// the last call left it, status.restore and status.operation as this call has them so far, the
// instance as observed, and what the plan asked to be read or made.
type restoreInput struct {
	spec       *v1alpha1.RdsSpec
	prior      *v1alpha1.Operation     // as the last call left it; report may have ended it since
	rec        *v1alpha1.RestoreStatus // this call's status.restore so far
	op         *v1alpha1.Operation     // this call's status.operation so far
	inst       *cloud.Instance
	generation int64
	// job is the restore job the last call issued; nil until the plan asked for it (needJob).
	job *jobRead
	// ranges are the instance's restorable periods; nil until the plan asked for them (needRanges).
	ranges *rangesRead
	// answer is RestoreInPlace's answer; nil until the plan's action was made.
	answer *actAnswer
}

// jobRead is a read of an OTC job (GetJob): the job, or the read's error.
type jobRead struct {
	job *cloud.Job
	err error
}

// rangesRead is a read of an instance's restorable periods (ListRestoreTimes), or its error.
type rangesRead struct {
	ranges []cloud.TimeRange
	err    error
}

// contains reports whether at lies within one of the periods.
func (r *rangesRead) contains(at time.Time) bool {
	return slices.ContainsFunc(r.ranges, func(tr cloud.TimeRange) bool { return tr.Contains(at) })
}

// restorePlan is the decision of the in-place restore step.
//
// A plan that asks for a read (needJob, needRanges) or makes an action is made again with what was
// read or answered: only a plan without them is applied.
type restorePlan struct {
	// restore and operation are status.restore and status.operation as the step leaves them.
	restore   *v1alpha1.RestoreStatus
	operation *v1alpha1.Operation
	// reapplyDatabases asks for the databases and users to be applied again: a restore rolled
	// them back too.
	reapplyDatabases bool
	// ready and synced are the conditions the step sets, if any.
	ready, synced *outcome
	// cloudErr is a failed read or call, reported like any cloud error (cloudError).
	cloudErr error
	// stop holds the later steps of the call.
	stop bool
	logs []logLine
	// action is the restore to send; the plan is made again with its answer (restoreInput.answer).
	action *action
	// needJob names the restore job to read, needRanges the instance whose restorable periods to
	// read, before the plan can be made.
	needJob    string
	needRanges string
}

// planRestore decides the point-in-time restore of the instance in place: a backuprestoretime
// that differs from the one handled last restores once, if it lies within OTC's restorable
// periods. It follows a restore an earlier call issued first. It calls nothing.
func planRestore(in restoreInput) restorePlan {
	p := restorePlan{restore: in.rec, operation: in.op}
	if in.rec == nil {
		p.restore = restoreBaseline(in.spec)
		return p
	}
	p, done := followRestore(in, p)
	if done {
		return p
	}
	return planNewRestore(in, p)
}

// followRestore follows the restore an earlier call issued: it stops the call while it runs
// (done). When it is over, the databases and users are applied again: the restore rolled them
// back too.
func followRestore(in restoreInput, p restorePlan) (_ restorePlan, done bool) {
	prev := in.prior
	if prev == nil || prev.Type != OpRestore {
		return p, false
	}
	op := *prev
	message := "The instance is being restored to " + prev.Target + "."
	switch {
	case in.inst.Status == cloud.StatusRestoring, prev.JobID == "" && in.op != nil:
		// The answer of a lost restore had no job to ask: a busy instance is taken as restoring.
		p.operation = &op
		p.synced = ptr.To(syncedOK(ReasonReconcileSuccess, message, inFlight).underway())
		p.stop = true
		return p, true
	case prev.JobID == "":
		// The answer was lost and the instance is no longer busy: the result stays Issued.
		p.reapplyDatabases = true
		return p, false
	case in.job == nil:
		// NOTE: another status than RESTORING does not say that the restore is over, nor that it
		// runs: OTC may list the instance ACTIVE before it shows RESTORING, and a change issued by
		// the call that saw the restore end (whose answer may never have been applied) shows
		// MODIFYING. Only the job says.
		return restorePlan{needJob: prev.JobID}, true
	}
	switch job, err := in.job.job, in.job.err; {
	case errors.Is(err, cloud.ErrNotFound) || (err == nil && job.Status == cloud.JobRunning):
		// NOTE: OTC does not know a job during its first second.
		p.operation = &op
		p.ready, p.synced = restoring(message, outcome.underway)
		p.stop = true
		return p, true
	case err != nil:
		p.operation = &op
		p.cloudErr, p.stop = err, true
		return p, true
	case job.Status == cloud.JobFailed:
		p.logs = append(p.logs, logLine{slog.LevelWarn, "restore failed", []any{"job", prev.JobID, "reason", job.FailReason}})
		p.restore = withResult(p.restore, v1alpha1.RestoreFailed)
	default:
		p.restore = withResult(p.restore, v1alpha1.RestoreCompleted)
	}
	if p.operation != nil && p.operation.Type == OpRestore {
		p.operation = nil // the instance is busy with something else, which the later steps see
	}
	p.reapplyDatabases = true
	return p, false
}

// planNewRestore decides a restore to a backuprestoretime not handled yet.
func planNewRestore(in restoreInput, p restorePlan) restorePlan {
	want := in.spec.Backuprestoretime
	if want == "" || want == p.restore.Time {
		p.synced = restoreOutcome(in.spec, p.restore)
		return p
	}
	at, perr := time.Parse(time.RFC3339, want)
	if perr != nil { // Validate refuses it first; never restore to a time we cannot read
		// NOTE: report has set Ready already, so this Synced is all that invalid would set.
		p.synced = ptr.To(notSynced(ReasonInvalidSpec, fmt.Sprintf(
			"backuprestoretime %q is not an RFC3339 time such as 2026-11-22T10:00:00Z.", want), waitsForUser))
		p.stop = true
		return p
	}
	if in.spec.Datastoretype == v1alpha1.EnginePostgreSQL {
		p.restore = &v1alpha1.RestoreStatus{Time: want, Result: v1alpha1.RestoreRefused}
		p.synced = restoreOutcome(in.spec, p.restore)
		return p
	}
	if p.operation != nil || !usable(in.inst.Status) {
		waiting := fmt.Sprintf("The restore to %s waits for the instance to be ACTIVE with no other operation running.", want)
		if p.operation != nil || transitional(in.inst.Status) {
			// NOTE: a pending restore holds the later steps while OTC is busy: a day-2 change
			// started as it ends would keep the instance busy, and the restore rolls back whatever
			// it changed anyway.
			p.synced = ptr.To(syncedOK(ReasonRestoreWaiting, waiting, inFlight))
			p.stop = true
			return p
		}
		// FAILED, FROZEN, STORAGE FULL, SHUTDOWN...: nothing ends by itself, and only a later step
		// may free the instance (storage growth is the way out of STORAGE FULL). The later steps
		// run; a Synced they set replaces this one. The resync stays steady.
		p.synced = ptr.To(syncedOK(ReasonRestoreWaiting, waiting, waitsForUser))
		return p
	}
	switch r := in.ranges; {
	case r == nil:
		return restorePlan{needRanges: in.inst.ID}
	case r.err != nil:
		p.cloudErr, p.stop = r.err, true
		return p
	case !r.contains(at):
		p.restore = &v1alpha1.RestoreStatus{Time: want, Result: v1alpha1.RestoreOutOfRange}
		p.synced = restoreOutcome(in.spec, p.restore)
		return p
	}
	if in.answer == nil {
		return restorePlan{action: &action{kind: actRestoreInPlace, instance: in.inst.ID, at: at}, stop: true}
	}
	return restoreAnswered(in, p, want)
}

// restoreAnswered decides what status records of RestoreInPlace's answer.
func restoreAnswered(in restoreInput, p restorePlan, want string) restorePlan {
	jobID, err := in.answer.jobID, in.answer.err
	p.stop = true
	switch kind := cloud.KindOf(err); {
	case err == nil:
	case errors.Is(err, errViewStale):
		p.cloudErr = err // never sent: decided again on a fresh read
		return p
	case kind == cloud.KindInvalid || kind == cloud.KindConflict || kind == cloud.KindNotFound:
		// OTC answered and refused: nothing happened, and the same request would be refused again.
		p.logs = append(p.logs, logLine{slog.LevelWarn, "restore refused", []any{"instance", in.inst.ID, "error", err.Error()}})
		p.restore = &v1alpha1.RestoreStatus{Time: want, Result: v1alpha1.RestoreRefused}
		p.synced = ptr.To(restoreOutcome(in.spec, p.restore).made()) // OTC's refusal of the call's change
		return p
	case kind != cloud.KindUnavailable && kind != cloud.KindUnknown:
		// Busy, throttled, unauthorized: OTC answered and did nothing; the next call tries again.
		p.cloudErr = err
		return p
	default:
		// NOTE: no answer (or an unreadable one) may mean OTC restored all the same. The request
		// is recorded as issued and never sent again: a second restore would roll back whatever
		// was written since the first one.
		p.logs = append(p.logs, logLine{slog.LevelWarn, "restore answer lost; recorded as issued", []any{"instance", in.inst.ID, "error", err.Error()}})
	}
	p.logs = append(p.logs, logLine{slog.LevelInfo, "restoring instance", []any{"instance", in.inst.ID, "time", want, "job", jobID}})
	p.reapplyDatabases = true
	p.restore = &v1alpha1.RestoreStatus{Time: want, Result: v1alpha1.RestoreIssued, JobID: jobID}
	p.operation = &v1alpha1.Operation{Type: OpRestore, JobID: jobID, Generation: in.generation, Target: want}
	p.ready, p.synced = restoring("The instance is being restored to "+want+".", outcome.made)
	return p
}

// restoring is the outcome while a restore runs, as pending reports it: Ready False with the
// message, Synced True, about the restore this call made (made) or one under way (underway).
func restoring(message string, about func(outcome) outcome) (ready, synced *outcome) {
	return ptr.To(notReady(ReasonRestoring, message, inFlight)),
		ptr.To(about(syncedOK(ReasonReconcileSuccess, "The change was issued to OTC.", inFlight)))
}

// withResult is a copy of the record with another result.
func withResult(rec *v1alpha1.RestoreStatus, result string) *v1alpha1.RestoreStatus {
	out := *rec
	out.Result = result
	return &out
}

// restore is the point-in-time restore step: it plans, reads what the plan asks for, plans
// again, makes the plan's restore and plans with its answer, and applies the plan.
func (c *call) restore(ctx context.Context, inst *cloud.Instance) (stop bool, err error) {
	in := restoreInput{
		spec: c.spec, prior: c.parent.Status.Operation, rec: c.st.Restore, op: c.st.Operation,
		inst: inst, generation: c.parent.Generation,
	}
	p := planRestore(in)
	if p.needJob != "" {
		in.job = c.readJob(ctx, p.needJob)
		p = planRestore(in)
	}
	if p.needRanges != "" {
		in.ranges = c.readRanges(ctx, p.needRanges)
		p = planRestore(in)
	}
	if p.action != nil {
		in.answer = c.answer(ctx, *p.action)
		p = planRestore(in)
	}
	c.st.Restore, c.st.Operation = p.restore, p.operation
	if p.reapplyDatabases {
		c.reapplyDatabases()
	}
	c.logAll(ctx, p.logs)
	c.tellAll(p.ready, p.synced)
	if p.cloudErr != nil {
		return true, c.cloudError(p.cloudErr)
	}
	return p.stop, nil
}

// readJob reads an OTC job.
func (c *call) readJob(ctx context.Context, id string) *jobRead {
	r := &jobRead{}
	r.err = c.cloudCall(ctx, func(ctx context.Context) (err error) {
		r.job, err = c.cloud.GetJob(ctx, id)
		return err
	})
	return r
}

// readRanges reads the periods OTC can restore an instance to.
func (c *call) readRanges(ctx context.Context, instanceID string) *rangesRead {
	r := &rangesRead{}
	r.err = c.cloudCall(ctx, func(ctx context.Context) (err error) {
		r.ranges, err = c.cloud.ListRestoreTimes(ctx, instanceID)
		return err
	})
	return r
}

// restoreOutcome states again, from status alone, why the current backuprestoretime was not
// restored: the condition stays while the value stays, and never changes from call to call.
func restoreOutcome(spec *v1alpha1.RdsSpec, rec *v1alpha1.RestoreStatus) *outcome {
	if rec == nil || rec.Time == "" || rec.Time != spec.Backuprestoretime {
		return nil
	}
	switch rec.Result {
	case v1alpha1.RestoreOutOfRange:
		return ptr.To(notSynced(ReasonRestoreTimeOutOfRange, fmt.Sprintf(
			"backuprestoretime %s lies outside the periods OTC can restore this instance to (from the oldest kept backup until now), so nothing was restored. Set a time within them.", rec.Time), waitsForUser))
	case v1alpha1.RestoreRefused:
		msg := fmt.Sprintf("OTC refused the restore to %s, so nothing was restored. Set another backuprestoretime or remove it.", rec.Time)
		if spec.Datastoretype == v1alpha1.EnginePostgreSQL {
			msg = "OTC cannot restore a PostgreSQL instance in place to a point in time; create a new Rds with restorefrom instead, and remove backuprestoretime."
		}
		return ptr.To(notSynced(ReasonRestoreRefused, msg, waitsForUser))
	case v1alpha1.RestoreFailed:
		return ptr.To(notSynced(ReasonRestoreFailed, fmt.Sprintf(
			"The restore to %s failed in OTC. Check the instance; set another backuprestoretime to try again, or remove it.", rec.Time), waitsForUser))
	}
	return nil
}

// restorePointInput is what the check of spec.restorefrom reads: the spec, this object as
// ownership tags name it, whether the call uses the namespace's own OTC project, and the reads.
type restorePointInput struct {
	spec       *v1alpha1.RdsSpec
	me         owner
	ownProject bool
	// sources are the instances read for restorefrom.instance: the one with that id, or those
	// with that name; sourcesErr is the read's error.
	sources    []*cloud.Instance
	sourcesErr error
	// backups are the source's backups; nil until the plan asked for them (needBackups).
	backups *backupsRead
	// ranges are the source's restorable periods; nil until the plan asked for them (needRanges).
	ranges *rangesRead
}

// backupsRead is a read of an instance's backups (ListBackups), or its error.
type backupsRead struct {
	backups []cloud.Backup
	err     error
}

// blocked is why a reference in the spec (restorefrom, instanceid) is not used: a Synced=False
// outcome, whose Ready follows refused when the tenancy rules refuse it (tenancy), else
// waitForUser.
type blocked struct {
	outcome
	tenancy bool
}

// block reports why a reference in the spec is not used.
func (c *call) block(b blocked) {
	if b.tenancy {
		c.refused(b.reason, b.message)
		return
	}
	c.waitForUser(b.reason, b.message)
}

// restorePointPlan is the decision on spec.restorefrom before a restore into a new instance. A plan
// that asks for a read (needBackups, needRanges) is made again with what was read.
type restorePointPlan struct {
	// point is where to restore from; nil: the call stops, blocked or cloudErr says why.
	point    *cloud.RestorePoint
	blocked  *blocked
	cloudErr error
	// needBackups and needRanges name the source whose backups or restorable periods to read.
	needBackups string
	needRanges  string
}

// planRestorePoint resolves and checks spec.restorefrom from what was read of the source. It
// calls nothing.
func planRestorePoint(in restorePointInput) restorePointPlan {
	rf := in.spec.Restorefrom
	waitFor := func(reason, message string) restorePointPlan {
		return restorePointPlan{blocked: &blocked{outcome: notSynced(reason, message, waitsForUser)}}
	}
	// NOTE: with the controller's credentials, a source of another namespace and one that does not
	// exist answer alike (refused): instance names are computable, and different answers would
	// tell a tenant which Rds objects other namespaces have. Among instances sharing the name only
	// those of this namespace count. The tenancy boundary comes before anything else is checked
	// or read of the source.
	sources := in.sources
	if !in.ownProject {
		sources = slices.DeleteFunc(slices.Clone(sources), func(src *cloud.Instance) bool {
			return restoreSourceRefusal(classify(src, in.me), in.me, in.ownProject) != ""
		})
	}
	switch err := in.sourcesErr; {
	case (errors.Is(err, cloud.ErrNotFound) || (err == nil && len(sources) == 0)) && !in.ownProject:
		return restorePointPlan{blocked: &blocked{tenancy: true, outcome: notSynced(ReasonRestoreSourceRefused, fmt.Sprintf(
			"The source instance in restorefrom is refused: %s", restoreSourceRefusal(claim{}, in.me, false)), waitsForUser)}}
	case errors.Is(err, cloud.ErrNotFound) || (err == nil && len(sources) == 0):
		return waitFor(ReasonRestoreSourceInvalid, fmt.Sprintf("The source instance %q in restorefrom does not exist in OTC.", rf.Instance))
	case errors.Is(err, cloud.ErrConflict) || (err == nil && len(sources) > 1):
		return waitFor(ReasonRestoreSourceInvalid, fmt.Sprintf("Several OTC instances are named %q: name the source in restorefrom by its id.", rf.Instance))
	case err != nil:
		return restorePointPlan{cloudErr: err}
	}
	src := sources[0]
	if problems := sourceProblems(in.spec, src); len(problems) > 0 {
		return waitFor(ReasonRestoreSourceInvalid, fmt.Sprintf("The source instance %s cannot be restored into this one: %s", src.ID, joinSentences(problems)))
	}
	point := &cloud.RestorePoint{InstanceID: src.ID, BackupID: rf.Backupid}
	if rf.Backupid != "" {
		switch b := in.backups; {
		case b == nil:
			return restorePointPlan{needBackups: src.ID}
		case b.err != nil:
			return restorePointPlan{cloudErr: b.err}
		}
		i := slices.IndexFunc(in.backups.backups, func(b cloud.Backup) bool { return b.ID == rf.Backupid })
		switch {
		case i < 0:
			return waitFor(ReasonRestoreSourceInvalid, fmt.Sprintf("The backup %s in restorefrom is not a backup of instance %s.", rf.Backupid, src.ID))
		case in.backups.backups[i].Status != cloud.BackupCompleted:
			return waitFor(ReasonRestoreSourceInvalid, fmt.Sprintf("The backup %s in restorefrom is %s, not COMPLETED.", rf.Backupid, in.backups.backups[i].Status))
		}
		return restorePointPlan{point: point}
	}
	point.Time, _ = time.Parse(time.RFC3339, rf.Restoretime) // validated
	switch r := in.ranges; {
	case r == nil:
		return restorePointPlan{needRanges: src.ID}
	case r.err != nil:
		return restorePointPlan{cloudErr: r.err}
	case !r.contains(point.Time):
		return waitFor(ReasonRestoreTimeOutOfRange, fmt.Sprintf(
			"restorefrom.restoretime %s lies outside the periods OTC can restore instance %s to (from its oldest kept backup until now).", rf.Restoretime, src.ID))
	}
	return restorePointPlan{point: point}
}

// restorePoint resolves and checks spec.restorefrom before a restore into a new instance: it reads
// the source, plans, reads what the plan asks for and plans again. A nil point means the call
// stops: a condition says why.
func (c *call) restorePoint(ctx context.Context) (*cloud.RestorePoint, error) {
	in := restorePointInput{spec: c.spec, me: c.me, ownProject: c.ownProject}
	in.sources, in.sourcesErr = c.readSources(ctx, c.spec.Restorefrom.Instance)
	p := planRestorePoint(in)
	if p.needBackups != "" {
		r := &backupsRead{}
		r.err = c.cloudCall(ctx, func(ctx context.Context) (err error) {
			r.backups, err = c.cloud.ListBackups(ctx, p.needBackups)
			return err
		})
		in.backups = r
		p = planRestorePoint(in)
	}
	if p.needRanges != "" {
		in.ranges = c.readRanges(ctx, p.needRanges)
		p = planRestorePoint(in)
	}
	switch {
	case p.cloudErr != nil:
		return nil, c.cloudError(p.cloudErr)
	case p.blocked != nil:
		c.block(*p.blocked)
	}
	return p.point, nil
}

// readSources reads the instances restorefrom.instance names: the one with that id, or those with
// that name.
func (c *call) readSources(ctx context.Context, ref string) (found []*cloud.Instance, err error) {
	err = c.cloudCall(ctx, func(ctx context.Context) error {
		if !instanceIDPattern.MatchString(ref) {
			var err error
			found, err = c.cloud.FindInstancesByName(ctx, ref)
			return err
		}
		src, err := c.cloud.GetInstance(ctx, ref)
		if err != nil {
			return err
		}
		found = []*cloud.Instance{src}
		return nil
	})
	return found, err
}

// sourceProblems compares a restore source with the spec: OTC keeps engine and version.
func sourceProblems(spec *v1alpha1.RdsSpec, src *cloud.Instance) []string {
	var p problems
	if !strings.EqualFold(src.Engine, spec.Datastoretype) {
		p.addf("it runs %s, the spec asks for %s.", src.Engine, spec.Datastoretype)
	} else if !sameMajorVersion(spec.Datastoretype, src.Version, spec.Datastoreversion) {
		p.addf("it runs version %s, the spec asks for %s.", src.Version, spec.Datastoreversion)
	}
	if spec.Restorefrom.Restoretime != "" && spec.Volumesize < src.Volume.Size {
		p.addf("volumesize %d is smaller than its %d GB.", spec.Volumesize, src.Volume.Size)
	}
	return p
}

// sameMajorVersion reports whether two versions of an engine share the major version: the first
// two parts for MySQL (8.0), the part before the first dot otherwise (16, 2022_SE).
func sameMajorVersion(engine, a, b string) bool {
	major := func(v string) string {
		parts := strings.Split(v, ".")
		if engine == v1alpha1.EngineMySQL && len(parts) > 1 {
			return parts[0] + "." + parts[1]
		}
		return parts[0]
	}
	return major(a) == major(b)
}

// adoptInput is what the adoption decision reads: the spec, the adoption policy, this object as
// ownership tags name it, the region of the controller's client, the instance spec.instanceid names
// as read, and the answer to the plan's action.
type adoptInput struct {
	spec      *v1alpha1.RdsSpec
	policy    AdoptionPolicy
	me        owner
	region    string
	target    *cloud.Instance
	targetErr error
	// answer is SetTags's answer; nil until the plan's action was made.
	answer *actAnswer
}

// adoptPlan is the decision on spec.instanceid. A plan with an action is made again with its answer.
type adoptPlan struct {
	// take says the instance is taken over: status records it as adopted. tagged says the tags
	// were this call's one change.
	take, tagged bool
	// clearStatus empties status.status: there is no instance to report.
	clearStatus bool
	blocked     *blocked
	// ready and synced are the conditions the step sets, if any.
	ready, synced *outcome
	cloudErr      error
	logs          []logLine
	// action writes this object's ownership tags before the instance is taken over.
	action *action
}

// planAdopt decides whether the instance named in spec.instanceid is taken over: the adoption
// policy must allow it and it must be what the spec describes. The adoption's one change writes
// this object's ownership tags; an instance already tagged as this object's (an earlier answer was
// lost) is taken over without a change. It calls nothing.
func planAdopt(in adoptInput) adoptPlan {
	id := in.spec.Instanceid
	inst := in.target
	var cl claim
	switch err := in.targetErr; {
	case err == nil:
		cl = classify(inst, in.me) // by id, never by name: no name makes it ours
	case !errors.Is(err, cloud.ErrNotFound):
		return adoptPlan{cloudErr: err}
	}
	// NOTE: an instance this object may not adopt and one that does not exist are refused in the
	// same words, which name no instance: different answers would tell a tenant which ids exist
	// and whose they are. The log keeps the details for the operator.
	switch {
	case inst != nil && cl.Kind == Ours:
		// this object adopted it already (a lost answer)
	case in.policy == AdoptNever:
		return adoptPlan{clearStatus: true, blocked: &blocked{tenancy: true, outcome: notSynced(ReasonAdoptionRefused,
			"Nothing is adopted: the controller's adoption policy is Never. Nothing is created in place of the instance named in instanceid.", waitsForUser)}}
	case inst == nil || adoptionRefusal(in.policy, cl, in.me) != "":
		p := adoptPlan{clearStatus: true, blocked: &blocked{tenancy: true, outcome: notSynced(ReasonAdoptionRefused,
			"No OTC instance this object may adopt has the id named in instanceid, so nothing is adopted and nothing is created in its place: "+adoptable(in.policy), waitsForUser)}}
		if inst != nil {
			p.logs = []logLine{{slog.LevelWarn, "adoption refused", []any{"instance", id, "ownership", cl.Kind.String(), "why", adoptionRefusal(in.policy, cl, in.me)}}}
		}
		return p
	}
	if problems := adoptionProblems(in.spec, in.region, inst); len(problems) > 0 {
		return adoptPlan{
			ready: &outcome{cond: v1alpha1.ConditionReady, status: metav1.ConditionFalse, reason: ReasonAdoptionMismatch,
				message: "The instance named in instanceid is not adopted; see the Synced condition.", class: waitsForUser},
			synced: ptr.To(notSynced(ReasonAdoptionMismatch,
				fmt.Sprintf("The OTC instance %s does not match the spec, so it is not adopted: %s", id, joinSentences(problems)), waitsForUser)),
		}
	}
	p := adoptPlan{take: true, logs: []logLine{{slog.LevelInfo, "adopted instance", []any{"instance", inst.ID, "was", cl.Kind.String()}}}}
	if cl.Kind == Ours {
		return p
	}
	// NOTE: the tags are written before status records the instance: were the answer lost,
	// the next call finds it tagged as ours and takes it over without a second change.
	switch a := in.answer; {
	case a == nil:
		return adoptPlan{action: &action{kind: actSetTags, instance: inst.ID, tags: in.me.tags()}}
	case errors.Is(a.err, cloud.ErrBusy):
		return adoptPlan{synced: ptr.To(syncedOK(ReasonInstanceBusy, "The instance is busy; it is adopted when OTC accepts its ownership tags.", inFlight))}
	case a.err != nil:
		return adoptPlan{cloudErr: a.err}
	}
	p.tagged = true
	return p
}

// adopt takes over the instance named in spec.instanceid (planAdopt). It returns nil when the
// instance is not adopted (a condition says why, and nothing changed), and adopted true when its
// ownership tags were this call's change.
func (c *call) adopt(ctx context.Context) (inst *cloud.Instance, adopted bool, err error) {
	in := adoptInput{spec: c.spec, policy: c.r.cfg.Adoption, me: c.me, region: c.cloud.Region()}
	in.targetErr = c.cloudCall(ctx, func(ctx context.Context) (err error) {
		in.target, err = c.cloud.GetInstance(ctx, c.spec.Instanceid)
		return err
	})
	p := planAdopt(in)
	if p.action != nil {
		in.answer = c.answer(ctx, *p.action)
		p = planAdopt(in)
	}
	if p.clearStatus {
		c.st.Status = ""
	}
	c.logAll(ctx, p.logs)
	if p.blocked != nil {
		c.block(*p.blocked)
	}
	c.tellAll(p.ready, p.synced)
	if p.cloudErr != nil {
		return nil, false, c.cloudError(p.cloudErr)
	}
	if !p.take {
		return nil, false, nil
	}
	c.st.ID = in.target.ID
	c.st.Adopted = true
	c.st.PasswordGenerated = false
	c.st.Restore = restoreBaseline(c.spec)
	return in.target, p.tagged, nil
}

// adoptable says which instances the adoption policy lets an object adopt.
func adoptable(policy AdoptionPolicy) string {
	if policy == AdoptSameNamespace {
		return "the controller adopts only an instance that an Rds object of this namespace released (deletionpolicy Retain)."
	}
	return "the controller adopts only an instance without ownership tags, or one that an Rds object of this namespace released (deletionpolicy Retain)."
}

// refused reports a reference the tenancy rules refuse (InvalidSpec-style: the user must change
// the spec): a stable Synced and, unless set already, Ready condition, and no cloud change.
func (c *call) refused(reason, message string) {
	c.tell(notSynced(reason, message, waitsForUser))
	if getCondition(&c.st, v1alpha1.ConditionReady) == nil || c.st.ID == "" {
		c.tell(notReady(reason, "The spec names an instance this object may not use; see the Synced condition.", waitsForUser))
	}
}

// adoptionProblems lists what makes the instance differ from the spec in ways no change can fix.
// region is the region of the controller's client.
func adoptionProblems(spec *v1alpha1.RdsSpec, region string, inst *cloud.Instance) []string {
	var p problems
	if !strings.EqualFold(inst.Engine, spec.Datastoretype) {
		p.addf("it runs %s, the spec asks for %s.", inst.Engine, spec.Datastoretype)
	} else if !sameMajorVersion(spec.Datastoretype, inst.Version, spec.Datastoreversion) {
		p.addf("it runs version %s, the spec asks for %s.", inst.Version, spec.Datastoreversion)
	}
	if spec.Region != region || (inst.Region != "" && inst.Region != region) {
		shown := inst.Region
		if shown == "" {
			shown = region
		}
		p.addf("it is in region %s, the spec asks for %s.", shown, spec.Region)
	}
	switch {
	case inst.Type == "Replica":
		p.addf("it is a read replica.")
	case strings.EqualFold(inst.Type, "Ha") != IsHA(spec):
		want := "Single"
		if IsHA(spec) {
			want = "Ha"
		}
		p.addf("it is of type %s, the spec's hamode asks for %s.", inst.Type, want)
	}
	return p
}

// restorePointText shows a restore point in status.operation.target.
func restorePointText(p cloud.RestorePoint) string {
	if p.BackupID != "" {
		return "backup " + p.BackupID + " of " + p.InstanceID
	}
	return p.InstanceID + " at " + p.Time.UTC().Format(time.RFC3339)
}
