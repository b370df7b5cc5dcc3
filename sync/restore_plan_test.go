package reconcile

import (
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// The decisions of restore.go, as pure functions of what was read: no cloud, fake or real.
// planMe is the object the plan tests decide for: rds1/my-rds-single, uid-1, cluster local.
var planMe = owner{Cluster: "local", Namespace: "rds1", Name: "my-rds-single", UID: "uid-1"}

func TestPlanRestore(t *testing.T) {
	at := t0.Add(-30 * time.Minute) // restoreAt
	ranges := &rangesRead{ranges: []cloud.TimeRange{{Start: t0.Add(-24 * time.Hour), End: t0}}}
	skipped := restoreHandled("", v1alpha1.RestoreSkipped)
	issued := &v1alpha1.RestoreStatus{Time: restoreAt, Result: v1alpha1.RestoreIssued, JobID: "job-r"}
	restoreOp := &v1alpha1.Operation{Type: OpRestore, JobID: "job-r", Generation: 2, Target: restoreAt}
	lostOp := &v1alpha1.Operation{Type: OpRestore, Generation: 2, Target: restoreAt}
	earlierOp := &v1alpha1.Operation{Type: OpRestore, JobID: "job-e", Generation: 1, Target: "2026-11-22T08:00:00Z"}
	earlier := &v1alpha1.RestoreStatus{Time: "2026-11-22T08:00:00Z", Result: v1alpha1.RestoreIssued, JobID: "job-e"}
	resizeOp := &v1alpha1.Operation{Type: OpResize, JobID: "job-x", Target: "rds.mysql.n1.large.2"}
	running := "The instance is being restored to " + restoreAt + "."
	restoringReady, restoringSynced := restoring(running, outcome.made) // the restore this call made
	_, runningSynced := restoring(running, outcome.underway)            // a restore an earlier call made
	busy := &cloud.Error{Kind: cloud.KindBusy, Code: "DBS.200019"}
	lost := &cloud.Error{Kind: cloud.KindUnavailable, Op: "RestoreInPlace", Message: "connection closed before the answer"}
	refusedErr := &cloud.Error{Kind: cloud.KindInvalid, Code: "DBS.200001", Message: "Parameter error."}
	sendRestore := &action{kind: actRestoreInPlace, instance: "inst-1", at: at}

	// in is the input of the usual case: backuprestoretime restoreAt not handled yet, the
	// instance ACTIVE with nothing in flight, generation 3.
	in := func(edits ...func(*restoreInput)) restoreInput {
		spec := sampleSpec()
		spec.Backuprestoretime = restoreAt
		in := restoreInput{spec: &spec, rec: skipped, inst: activeInstance(), generation: 3}
		for _, e := range edits {
			e(&in)
		}
		return in
	}
	status := func(s string) func(*restoreInput) { return func(in *restoreInput) { in.inst.Status = s } }
	rec := func(r *v1alpha1.RestoreStatus) func(*restoreInput) { return func(in *restoreInput) { in.rec = r } }
	want := func(v string) func(*restoreInput) { return func(in *restoreInput) { in.spec.Backuprestoretime = v } }
	inRange := func(in *restoreInput) { in.ranges = ranges }
	answer := func(jobID string, err error) func(*restoreInput) {
		return func(in *restoreInput) { inRange(in); in.answer = &actAnswer{jobID: jobID, err: err} }
	}
	// following is a call after the one that issued the restore op: status as it left it.
	following := func(op *v1alpha1.Operation) func(*restoreInput) {
		return func(in *restoreInput) { in.prior, in.op, in.rec = op, op, issued }
	}
	job := func(status string, err error) func(*restoreInput) {
		return func(in *restoreInput) {
			in.job = &jobRead{err: err}
			if err == nil {
				in.job.job = &cloud.Job{ID: "job-r", Status: status, FailReason: "disk"}
			}
		}
	}
	issuedPlan := func(jobID string, logs ...logLine) restorePlan {
		return restorePlan{
			restore:          &v1alpha1.RestoreStatus{Time: restoreAt, Result: v1alpha1.RestoreIssued, JobID: jobID},
			operation:        &v1alpha1.Operation{Type: OpRestore, JobID: jobID, Generation: 3, Target: restoreAt},
			reapplyDatabases: true,
			ready:            restoringReady, synced: restoringSynced,
			stop: true,
			logs: append(logs, logLine{slog.LevelInfo, "restoring instance", []any{"instance", "inst-1", "time", restoreAt, "job", jobID}}),
		}
	}
	waiting := "The restore to " + restoreAt + " waits for the instance to be ACTIVE with no other operation running."

	cases := map[string]struct {
		reason string
		in     restoreInput
		want   restorePlan
	}{
		"first sight records the baseline": {
			reason: "a backuprestoretime present when the hooks first see the instance is never a request",
			in:     in(rec(nil)),
			want:   restorePlan{restore: restoreHandled(restoreAt, v1alpha1.RestoreSkipped)},
		},
		"no value: nothing to do": {
			reason: "removing backuprestoretime is not a request",
			in:     in(want("")),
			want:   restorePlan{restore: skipped},
		},
		"handled value: nothing to do": {
			reason: "a value restored once is not restored again, and says nothing",
			in:     in(rec(restoreHandled(restoreAt, v1alpha1.RestoreCompleted))),
			want:   restorePlan{restore: restoreHandled(restoreAt, v1alpha1.RestoreCompleted)},
		},
		"handled value out of range: said again from status": {
			reason: "the refusal stays while the value stays, without asking OTC",
			in:     in(rec(restoreHandled(restoreAt, v1alpha1.RestoreOutOfRange))),
			want: restorePlan{restore: restoreHandled(restoreAt, v1alpha1.RestoreOutOfRange),
				synced: restoreOutcome(&v1alpha1.RdsSpec{Backuprestoretime: restoreAt}, restoreHandled(restoreAt, v1alpha1.RestoreOutOfRange))},
		},
		"unreadable time is an invalid spec": {
			reason: "never restore to a time that cannot be read; the later steps wait",
			in:     in(want("yesterday")),
			want: restorePlan{restore: skipped, stop: true, synced: ptr.To(notSynced(ReasonInvalidSpec,
				`backuprestoretime "yesterday" is not an RFC3339 time such as 2026-11-22T10:00:00Z.`, waitsForUser))},
		},
		"PostgreSQL is refused without a call": {
			reason: "OTC restores PostgreSQL only into another instance; the later steps run",
			in:     in(func(in *restoreInput) { in.spec.Datastoretype = v1alpha1.EnginePostgreSQL }),
			want: restorePlan{restore: restoreHandled(restoreAt, v1alpha1.RestoreRefused), synced: ptr.To(notSynced(ReasonRestoreRefused,
				"OTC cannot restore a PostgreSQL instance in place to a point in time; create a new Rds with restorefrom instead, and remove backuprestoretime.", waitsForUser))},
		},
		"another operation runs: the restore waits and holds the later steps": {
			reason: "no restore while OTC is busy with another change",
			in:     in(func(in *restoreInput) { in.op = resizeOp }, status(cloud.StatusModifying)),
			want:   restorePlan{restore: skipped, operation: resizeOp, stop: true, synced: ptr.To(syncedOK(ReasonRestoreWaiting, waiting, inFlight))},
		},
		"transitional instance: the restore waits and holds the later steps": {
			reason: "a backup runs: it ends by itself, so look again soon",
			in:     in(status(cloud.StatusBackingUp)),
			want:   restorePlan{restore: skipped, stop: true, synced: ptr.To(syncedOK(ReasonRestoreWaiting, waiting, inFlight))},
		},
		"terminal instance: the restore waits, the later steps run": {
			reason: "STORAGE FULL ends only by a later step (storage growth), at the steady pace",
			in:     in(status(cloud.StatusStorageFull)),
			want:   restorePlan{restore: skipped, synced: ptr.To(syncedOK(ReasonRestoreWaiting, waiting, waitsForUser))},
		},
		"periods unknown: read them": {
			reason: "only a time within OTC's periods is restored",
			in:     in(),
			want:   restorePlan{needRanges: "inst-1"},
		},
		"periods unreadable: a cloud error": {
			reason: "nothing is sent without knowing the periods",
			in:     in(func(in *restoreInput) { in.ranges = &rangesRead{err: busy} }),
			want:   restorePlan{restore: skipped, stop: true, cloudErr: busy},
		},
		"out of range: recorded, nothing sent": {
			reason: "a time outside the periods cannot be restored; the later steps run",
			in:     in(want("2026-11-01T00:00:00Z"), inRange),
			want: restorePlan{restore: restoreHandled("2026-11-01T00:00:00Z", v1alpha1.RestoreOutOfRange), synced: ptr.To(notSynced(ReasonRestoreTimeOutOfRange,
				"backuprestoretime 2026-11-01T00:00:00Z lies outside the periods OTC can restore this instance to (from the oldest kept backup until now), so nothing was restored. Set a time within them.", waitsForUser))},
		},
		"the end of a period is within it": {
			reason: "both ends of a period are restorable",
			in:     in(want(t0.Format(time.RFC3339)), inRange),
			want:   restorePlan{action: &action{kind: actRestoreInPlace, instance: "inst-1", at: t0}, stop: true},
		},
		"in range: the one action": {
			reason: "an ACTIVE idle instance and a time in range: send the restore",
			in:     in(inRange),
			want:   restorePlan{action: sendRestore, stop: true},
		},
		"accepted: recorded as issued": {
			reason: "the job is followed; the databases are applied again once it is over",
			in:     in(answer("job-r", nil)),
			want:   issuedPlan("job-r"),
		},
		"answer lost: recorded as issued, never sent again": {
			reason: "OTC may have restored: a second restore would roll back what was written since",
			in:     in(answer("", lost)),
			want: issuedPlan("", logLine{slog.LevelWarn, "restore answer lost; recorded as issued",
				[]any{"instance", "inst-1", "error", lost.Error()}}),
		},
		"unreadable answer: recorded as issued": {
			reason: "an error of no known kind may hide a restore as well",
			in:     in(answer("", errors.New("garbled"))),
			want:   issuedPlan("", logLine{slog.LevelWarn, "restore answer lost; recorded as issued", []any{"instance", "inst-1", "error", "garbled"}}),
		},
		"refused: recorded, not sent again": {
			reason: "OTC refused the content: the same request would be refused again",
			in:     in(answer("", refusedErr)),
			want: restorePlan{restore: restoreHandled(restoreAt, v1alpha1.RestoreRefused), stop: true,
				logs: []logLine{{slog.LevelWarn, "restore refused", []any{"instance", "inst-1", "error", refusedErr.Error()}}},
				synced: ptr.To(notSynced(ReasonRestoreRefused,
					"OTC refused the restore to "+restoreAt+", so nothing was restored. Set another backuprestoretime or remove it.", waitsForUser).made())},
		},
		"not found is a refusal": {
			reason: "NotFound and Conflict are answers that nothing happened",
			in:     in(answer("", cloud.ErrNotFound)),
			want: restorePlan{restore: restoreHandled(restoreAt, v1alpha1.RestoreRefused), stop: true,
				logs: []logLine{{slog.LevelWarn, "restore refused", []any{"instance", "inst-1", "error", cloud.ErrNotFound.Error()}}},
				synced: ptr.To(notSynced(ReasonRestoreRefused,
					"OTC refused the restore to "+restoreAt+", so nothing was restored. Set another backuprestoretime or remove it.", waitsForUser).made())},
		},
		"busy: tried again": {
			reason: "OTC answered that it did nothing: the request stays open",
			in:     in(answer("", busy)),
			want:   restorePlan{restore: skipped, stop: true, cloudErr: busy},
		},
		"throttled: tried again": {
			reason: "throttling goes back as a 429 (cloudError); nothing is recorded",
			in:     in(answer("", cloud.ErrThrottled)),
			want:   restorePlan{restore: skipped, stop: true, cloudErr: cloud.ErrThrottled},
		},
		"unauthorized: tried again": {
			reason: "refused credentials did nothing",
			in:     in(answer("", cloud.ErrUnauthorized)),
			want:   restorePlan{restore: skipped, stop: true, cloudErr: cloud.ErrUnauthorized},
		},
		"decided on the shared view: never sent": {
			reason: "the call is made again on a fresh read",
			in:     in(answer("", errViewStale)),
			want:   restorePlan{restore: skipped, stop: true, cloudErr: errViewStale},
		},

		"RESTORING: the call stops": {
			reason: "while OTC shows RESTORING nothing else is done, and the job is not read",
			in:     in(following(restoreOp), status(cloud.StatusRestoring)),
			want:   restorePlan{restore: issued, operation: restoreOp, stop: true, synced: ptr.To(syncedOK(ReasonReconcileSuccess, running, inFlight).underway())},
		},
		"lost answer, instance busy: taken as restoring": {
			reason: "no job to ask: a busy instance is taken as restoring",
			in:     in(following(lostOp), rec(restoreHandled(restoreAt, v1alpha1.RestoreIssued)), status(cloud.StatusModifying)),
			want: restorePlan{restore: restoreHandled(restoreAt, v1alpha1.RestoreIssued), operation: lostOp, stop: true,
				synced: ptr.To(syncedOK(ReasonReconcileSuccess, running, inFlight).underway())},
		},
		"lost answer, instance ACTIVE again: over, result stays Issued": {
			reason: "report ended the operation; the databases are applied again",
			in:     in(following(lostOp), rec(restoreHandled(restoreAt, v1alpha1.RestoreIssued)), func(in *restoreInput) { in.op = nil }),
			want:   restorePlan{restore: restoreHandled(restoreAt, v1alpha1.RestoreIssued), reapplyDatabases: true},
		},
		"issued restore: read its job": {
			reason: "only the job says whether a restore is over",
			in:     in(following(restoreOp)),
			want:   restorePlan{needJob: "job-r"},
		},
		"job running": {
			reason: "OTC may list ACTIVE before RESTORING",
			in:     in(following(restoreOp), job(cloud.JobRunning, nil)),
			want:   restorePlan{restore: issued, operation: restoreOp, stop: true, ready: restoringReady, synced: runningSynced},
		},
		"job not known yet": {
			reason: "OTC does not know a job during its first second",
			in:     in(following(restoreOp), job("", cloud.ErrNotFound)),
			want:   restorePlan{restore: issued, operation: restoreOp, stop: true, ready: restoringReady, synced: runningSynced},
		},
		"job unreadable: the operation stays": {
			reason: "a failed read says nothing of the restore",
			in:     in(following(restoreOp), job("", busy)),
			want:   restorePlan{restore: issued, operation: restoreOp, stop: true, cloudErr: busy},
		},
		"job completed": {
			reason: "the restore is over: recorded, the operation ended, the databases applied again",
			in:     in(following(restoreOp), job(cloud.JobCompleted, nil)),
			want:   restorePlan{restore: &v1alpha1.RestoreStatus{Time: restoreAt, Result: v1alpha1.RestoreCompleted, JobID: "job-r"}, reapplyDatabases: true},
		},
		"job failed": {
			reason: "a failed restore is reported, not retried",
			in:     in(following(restoreOp), job(cloud.JobFailed, nil)),
			want: restorePlan{restore: &v1alpha1.RestoreStatus{Time: restoreAt, Result: v1alpha1.RestoreFailed, JobID: "job-r"}, reapplyDatabases: true,
				logs: []logLine{{slog.LevelWarn, "restore failed", []any{"job", "job-r", "reason", "disk"}}},
				synced: ptr.To(notSynced(ReasonRestoreFailed,
					"The restore to "+restoreAt+" failed in OTC. Check the instance; set another backuprestoretime to try again, or remove it.", waitsForUser))},
		},
		"job completed, another operation runs": {
			reason: "MODIFYING after the job: a change the call that saw the restore end issued, which the later steps see",
			in:     in(following(restoreOp), func(in *restoreInput) { in.op = resizeOp }, status(cloud.StatusModifying), job(cloud.JobCompleted, nil)),
			want: restorePlan{restore: &v1alpha1.RestoreStatus{Time: restoreAt, Result: v1alpha1.RestoreCompleted, JobID: "job-r"}, operation: resizeOp,
				reapplyDatabases: true},
		},
		"job completed, a new time asked meanwhile: its periods are read": {
			reason: "the next restore is decided in the same call",
			in:     in(following(earlierOp), rec(earlier), job(cloud.JobCompleted, nil)),
			want:   restorePlan{needRanges: "inst-1"},
		},
		"job completed, a new time asked meanwhile: restored": {
			reason: "the earlier restore's record and operation are replaced by the new one's",
			in:     in(following(earlierOp), rec(earlier), job(cloud.JobCompleted, nil), answer("job-r", nil)),
			want:   issuedPlan("job-r"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, planRestore(tc.in), tc.reason)
		})
	}
}

func TestRestoreOutcome(t *testing.T) {
	spec := func(engine string) *v1alpha1.RdsSpec {
		return &v1alpha1.RdsSpec{Datastoretype: engine, Backuprestoretime: restoreAt}
	}
	cases := map[string]struct {
		reason string
		spec   *v1alpha1.RdsSpec
		rec    *v1alpha1.RestoreStatus
		want   *outcome
	}{
		"no record":  {reason: "nothing handled yet", spec: spec("MySQL")},
		"no time":    {reason: "a baseline without a value", spec: spec("MySQL"), rec: restoreHandled("", v1alpha1.RestoreSkipped)},
		"other time": {reason: "the record is of another value", spec: spec("MySQL"), rec: restoreHandled("2026-11-01T00:00:00Z", v1alpha1.RestoreOutOfRange)},
		"completed":  {reason: "nothing to say", spec: spec("MySQL"), rec: restoreHandled(restoreAt, v1alpha1.RestoreCompleted)},
		"out of range": {reason: "the value must change", spec: spec("MySQL"), rec: restoreHandled(restoreAt, v1alpha1.RestoreOutOfRange),
			want: ptr.To(notSynced(ReasonRestoreTimeOutOfRange, "backuprestoretime "+restoreAt+" lies outside the periods OTC can restore this instance to (from the oldest kept backup until now), so nothing was restored. Set a time within them.", waitsForUser))},
		"refused": {reason: "OTC refused it", spec: spec("MySQL"), rec: restoreHandled(restoreAt, v1alpha1.RestoreRefused),
			want: ptr.To(notSynced(ReasonRestoreRefused, "OTC refused the restore to "+restoreAt+", so nothing was restored. Set another backuprestoretime or remove it.", waitsForUser))},
		"refused PostgreSQL": {reason: "say where the way is", spec: spec("PostgreSQL"), rec: restoreHandled(restoreAt, v1alpha1.RestoreRefused),
			want: ptr.To(notSynced(ReasonRestoreRefused, "OTC cannot restore a PostgreSQL instance in place to a point in time; create a new Rds with restorefrom instead, and remove backuprestoretime.", waitsForUser))},
		"failed": {reason: "OTC's job failed", spec: spec("MySQL"), rec: restoreHandled(restoreAt, v1alpha1.RestoreFailed),
			want: ptr.To(notSynced(ReasonRestoreFailed, "The restore to "+restoreAt+" failed in OTC. Check the instance; set another backuprestoretime to try again, or remove it.", waitsForUser))},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, restoreOutcome(tc.spec, tc.rec), tc.reason)
		})
	}
}
