package reconcile

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

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

// restoreStep is the point-in-time restore step as the loop runs it (loop.go).
type restoreStep struct {
	in restoreInput
	p  restorePlan
}

func newRestoreStep(c *call, inst *cloud.Instance) *restoreStep {
	return &restoreStep{in: restoreInput{
		spec: c.spec, prior: c.parent.Status.Operation, rec: c.st.Restore, op: c.st.Operation,
		inst: inst, generation: c.parent.Generation,
	}}
}

func (s *restoreStep) plan() head {
	s.p = planRestore(s.in)
	h := head{tells: told(s.p.ready, s.p.synced), act: s.p.action, stop: s.p.stop, err: s.p.cloudErr, logs: s.p.logs}
	switch {
	case s.p.needJob != "":
		h.needs = []need{{kind: readJob, id: s.p.needJob}}
	case s.p.needRanges != "":
		h.needs = []need{{kind: readRestoreTimes, id: s.p.needRanges}}
	}
	return h
}

func (s *restoreStep) saw(n need, r seen) {
	switch n.kind {
	case readJob:
		s.in.job = &jobRead{job: r.job, err: r.err}
	case readRestoreTimes:
		s.in.ranges = &rangesRead{ranges: r.ranges, err: r.err}
	}
}

func (s *restoreStep) answered(res acted, err error) {
	s.in.answer = answerOf(res, err)
}

func (s *restoreStep) render(a *answer) {
	a.st.Restore, a.st.Operation = s.p.restore, s.p.operation
	if s.p.reapplyDatabases {
		a.st.DatabasesAndUsers = forgetApplied(a.st.DatabasesAndUsers)
	}
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
