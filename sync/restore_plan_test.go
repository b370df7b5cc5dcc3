package sync

import (
	"errors"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

func TestPlanRestorePoint(t *testing.T) {
	at := t0.Add(-30 * time.Minute) // restoreAt
	source := func(edits ...func(*cloud.Instance)) *cloud.Instance {
		i := activeInstance()
		i.ID, i.Name = restoreSourceID, "source-db"
		for _, e := range edits {
			e(i)
		}
		return i
	}
	untagged := func(i *cloud.Instance) { i.Tags = map[string]string{} }
	otherNamespace := func(i *cloud.Instance) {
		i.Tags = owner{Cluster: "local", Namespace: "rds2", Name: "x", UID: "uid-9"}.tags()
	}
	fromBackup := &v1alpha1.RestoreFrom{Instance: restoreSourceID, Backupid: "backup-1"}
	fromTime := &v1alpha1.RestoreFrom{Instance: "source-db", Restoretime: restoreAt}
	in := func(from *v1alpha1.RestoreFrom, edits ...func(*restorePointInput)) restorePointInput {
		spec := sampleSpec()
		spec.Restorefrom = from
		in := restorePointInput{spec: &spec, me: planMe, sources: []*cloud.Instance{source()}}
		for _, e := range edits {
			e(&in)
		}
		return in
	}
	sources := func(s ...*cloud.Instance) func(*restorePointInput) {
		return func(in *restorePointInput) { in.sources = s }
	}
	readErr := func(err error) func(*restorePointInput) {
		return func(in *restorePointInput) { in.sources, in.sourcesErr = nil, err }
	}
	ownProject := func(in *restorePointInput) { in.ownProject = true }
	backups := func(status string) func(*restorePointInput) {
		return func(in *restorePointInput) {
			in.backups = &backupsRead{backups: []cloud.Backup{{ID: "other", Status: cloud.BackupCompleted}, {ID: "backup-1", Status: status}}}
		}
	}
	inRange := func(in *restorePointInput) {
		in.ranges = &rangesRead{ranges: []cloud.TimeRange{{Start: t0.Add(-24 * time.Hour), End: t0}}}
	}
	invalid := func(message string) restorePointPlan {
		return restorePointPlan{blocked: &blocked{outcome: notSynced(ReasonRestoreSourceInvalid, message, waitsForUser)}}
	}
	refusedPlan := func(string) restorePointPlan {
		return restorePointPlan{blocked: &blocked{tenancy: true, outcome: notSynced(ReasonRestoreSourceRefused,
			`The source instance in restorefrom is refused: no instance of an Rds object of this namespace has that id or name, and only such an instance can be restored from with the controller's credentials.`, waitsForUser)}}
	}
	busy := &cloud.Error{Kind: cloud.KindBusy}

	cases := map[string]struct {
		reason string
		in     restorePointInput
		want   restorePointPlan
	}{
		"from a backup: read the backups": {
			reason: "the backup must be a completed one of the source",
			in:     in(fromBackup),
			want:   restorePointPlan{needBackups: restoreSourceID},
		},
		"from a completed backup": {
			reason: "the point names the source and the backup",
			in:     in(fromBackup, backups(cloud.BackupCompleted)),
			want:   restorePointPlan{point: &cloud.RestorePoint{InstanceID: restoreSourceID, BackupID: "backup-1"}},
		},
		"backup still building": {
			reason: "only a completed backup restores",
			in:     in(fromBackup, backups(cloud.BackupBuilding)),
			want:   invalid("The backup backup-1 in restorefrom is BUILDING, not COMPLETED."),
		},
		"backup of another instance": {
			reason: "the backup must belong to the source",
			in:     in(&v1alpha1.RestoreFrom{Instance: restoreSourceID, Backupid: "backup-2"}, backups(cloud.BackupCompleted)),
			want:   invalid("The backup backup-2 in restorefrom is not a backup of instance " + restoreSourceID + "."),
		},
		"backups unreadable": {
			reason: "a cloud error, like any",
			in:     in(fromBackup, func(in *restorePointInput) { in.backups = &backupsRead{err: busy} }),
			want:   restorePointPlan{cloudErr: busy},
		},
		"from a time: read the periods": {
			reason: "the time must lie within the source's periods",
			in:     in(fromTime),
			want:   restorePointPlan{needRanges: restoreSourceID},
		},
		"from a time within the periods": {
			reason: "the point names the source and the time",
			in:     in(fromTime, inRange),
			want:   restorePointPlan{point: &cloud.RestorePoint{InstanceID: restoreSourceID, Time: at}},
		},
		"time out of range": {
			reason: "checked before anything is created",
			in:     in(&v1alpha1.RestoreFrom{Instance: "source-db", Restoretime: "2026-01-01T00:00:00Z"}, inRange),
			want: restorePointPlan{blocked: &blocked{outcome: notSynced(ReasonRestoreTimeOutOfRange,
				"restorefrom.restoretime 2026-01-01T00:00:00Z lies outside the periods OTC can restore instance "+restoreSourceID+" to (from its oldest kept backup until now).", waitsForUser)}},
		},
		"periods unreadable": {
			reason: "a cloud error, like any",
			in:     in(fromTime, func(in *restorePointInput) { in.ranges = &rangesRead{err: busy} }),
			want:   restorePointPlan{cloudErr: busy},
		},
		"source missing, controller's credentials": {
			reason: "refused like another namespace's: no tenant learns what exists",
			in:     in(&v1alpha1.RestoreFrom{Instance: "nowhere", Backupid: "b-1"}, sources()),
			want:   refusedPlan("nowhere"),
		},
		"source missing by id, controller's credentials": {
			reason: "the same answer for a read by id",
			in:     in(fromBackup, readErr(cloud.ErrNotFound)),
			want:   refusedPlan(restoreSourceID),
		},
		"source of another namespace": {
			reason: "with the controller's credentials only this namespace's instances are sources",
			in:     in(fromBackup, sources(source(otherNamespace))),
			want:   refusedPlan(restoreSourceID),
		},
		"untagged source": {
			reason: "an instance of no Rds object is no source with the controller's credentials",
			in:     in(fromTime, sources(source(untagged))),
			want:   refusedPlan("source-db"),
		},
		"another namespace's instance of the same name does not count": {
			reason: "among instances sharing the name only those of this namespace count",
			in:     in(fromTime, sources(source(otherNamespace), source(func(i *cloud.Instance) { i.ID = "src-2" })), inRange),
			want:   restorePointPlan{point: &cloud.RestorePoint{InstanceID: "src-2", Time: at}},
		},
		"source missing, own project": {
			reason: "the namespace's own project: say that it does not exist",
			in:     in(&v1alpha1.RestoreFrom{Instance: "nowhere", Backupid: "b-1"}, sources(), ownProject),
			want:   invalid(`The source instance "nowhere" in restorefrom does not exist in OTC.`),
		},
		"source missing by id, own project": {
			reason: "the same for a read by id",
			in:     in(fromBackup, readErr(cloud.ErrNotFound), ownProject),
			want:   invalid(`The source instance "` + restoreSourceID + `" in restorefrom does not exist in OTC.`),
		},
		"untagged source, own project": {
			reason: "the namespace's own project holds only what it may use",
			in:     in(fromBackup, sources(source(untagged)), ownProject, backups(cloud.BackupCompleted)),
			want:   restorePointPlan{point: &cloud.RestorePoint{InstanceID: restoreSourceID, BackupID: "backup-1"}},
		},
		"several of the name": {
			reason: "OTC lets instances share a name: ask for the id",
			in:     in(fromTime, sources(source(), source(func(i *cloud.Instance) { i.ID = "src-2" }))),
			want:   invalid(`Several OTC instances are named "source-db": name the source in restorefrom by its id.`),
		},
		"conflict answered": {
			reason: "a conflict of the read says the same",
			in:     in(fromTime, readErr(cloud.ErrConflict)),
			want:   invalid(`Several OTC instances are named "source-db": name the source in restorefrom by its id.`),
		},
		"source unreadable": {
			reason: "a cloud error, like any",
			in:     in(fromTime, readErr(busy)),
			want:   restorePointPlan{cloudErr: busy},
		},
		"source of another engine": {
			reason: "OTC keeps the source's engine",
			in:     in(fromBackup, sources(source(func(i *cloud.Instance) { i.Engine, i.Version = "PostgreSQL", "16" }))),
			want:   invalid("The source instance " + restoreSourceID + " cannot be restored into this one: it runs PostgreSQL, the spec asks for MySQL."),
		},
		"PostgreSQL source of another major version": {
			reason: "for PostgreSQL the major version is the part before the first dot",
			in: in(fromBackup, sources(source(func(i *cloud.Instance) { i.Engine, i.Version = "PostgreSQL", "15.4" })), func(in *restorePointInput) {
				in.spec.Datastoretype, in.spec.Datastoreversion = v1alpha1.EnginePostgreSQL, "16"
			}),
			want: invalid("The source instance " + restoreSourceID + " cannot be restored into this one: it runs version 15.4, the spec asks for 16."),
		},
		"source of another major version, volume too small": {
			reason: "every problem is said at once",
			in:     in(fromTime, sources(source(func(i *cloud.Instance) { i.Version, i.Volume.Size = "5.7", 100 }))),
			want: invalid("The source instance " + restoreSourceID +
				" cannot be restored into this one: it runs version 5.7, the spec asks for 8.0. volumesize 40 is smaller than its 100 GB."),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			before := slices.Clone(tc.in.sources)
			assert.Equal(t, tc.want, planRestorePoint(tc.in), tc.reason)
			assert.Equal(t, before, tc.in.sources, "the input is not changed")
		})
	}
}

func TestPlanAdopt(t *testing.T) {
	target := func(edits ...func(*cloud.Instance)) *cloud.Instance {
		i := activeInstance()
		i.ID, i.Name, i.Region, i.Tags = restoreAdoptID, "legacy-db", "eu-de", map[string]string{}
		for _, e := range edits {
			e(i)
		}
		return i
	}
	in := func(edits ...func(*adoptInput)) adoptInput {
		spec := sampleSpec()
		spec.Instanceid = restoreAdoptID
		in := adoptInput{spec: &spec, policy: AdoptUnowned, me: planMe, region: "eu-de", target: target()}
		for _, e := range edits {
			e(&in)
		}
		return in
	}
	inst := func(edits ...func(*cloud.Instance)) func(*adoptInput) {
		return func(in *adoptInput) { in.target = target(edits...) }
	}
	answered := func(err error) func(*adoptInput) { return func(in *adoptInput) { in.answer = &actAnswer{err: err} } }
	ours := func(i *cloud.Instance) { i.Tags = planMe.tags() }
	adoptedLog := func(was string) []logLine {
		return []logLine{{slog.LevelInfo, "adopted instance", []any{"instance", restoreAdoptID, "was", was}}}
	}
	mismatch := func(problems string) adoptPlan {
		return adoptPlan{
			ready: &outcome{cond: v1alpha1.ConditionReady, status: metav1.ConditionFalse, reason: ReasonAdoptionMismatch,
				message: "The instance named in instanceid is not adopted; see the Synced condition.", class: waitsForUser},
			synced: ptr.To(notSynced(ReasonAdoptionMismatch, "The OTC instance "+restoreAdoptID+" does not match the spec, so it is not adopted: "+problems, waitsForUser)),
		}
	}
	// refusedPlan is the one answer to an instance this object may not adopt and to one that does
	// not exist: it names no instance; the log keeps what the instance was (ownership, why).
	refusedPlan := func(policy AdoptionPolicy, logged ...any) adoptPlan {
		p := adoptPlan{clearStatus: true, blocked: &blocked{tenancy: true, outcome: notSynced(ReasonAdoptionRefused,
			"No OTC instance this object may adopt has the id named in instanceid, so nothing is adopted and nothing is created in its place: "+adoptable(policy), waitsForUser)}}
		if logged != nil {
			p.logs = []logLine{{slog.LevelWarn, "adoption refused", append([]any{"instance", restoreAdoptID}, logged...)}}
		}
		return p
	}
	neverPlan := adoptPlan{clearStatus: true, blocked: &blocked{tenancy: true, outcome: notSynced(ReasonAdoptionRefused,
		"Nothing is adopted: the controller's adoption policy is Never. Nothing is created in place of the instance named in instanceid.", waitsForUser)}}
	busy := &cloud.Error{Kind: cloud.KindBusy, Code: "DBS.200019"}

	cases := map[string]struct {
		reason string
		in     adoptInput
		want   adoptPlan
	}{
		"unowned and matching: write the tags": {
			reason: "the adoption's one change: this object's ownership tags",
			in:     in(),
			want:   adoptPlan{action: &action{kind: actSetTags, instance: restoreAdoptID, tags: planMe.tags()}},
		},
		"tags written: taken over": {
			reason: "status records the instance, and the tags were the call's change",
			in:     in(answered(nil)),
			want:   adoptPlan{take: true, tagged: true, logs: adoptedLog("Unowned")},
		},
		"tagged as ours already: taken over without a change": {
			reason: "an earlier answer was lost; no second change",
			in:     in(inst(ours)),
			want:   adoptPlan{take: true, logs: adoptedLog("Ours")},
		},
		"tags refused as busy: later": {
			reason: "adopted when OTC accepts the tags; look again soon",
			in:     in(answered(busy)),
			want: adoptPlan{synced: ptr.To(syncedOK(ReasonInstanceBusy,
				"The instance is busy; it is adopted when OTC accepts its ownership tags.", inFlight))},
		},
		"tags failed otherwise: a cloud error": {
			reason: "like any cloud error",
			in:     in(answered(cloud.ErrUnavailable)),
			want:   adoptPlan{cloudErr: cloud.ErrUnavailable},
		},
		"target missing: nothing created": {
			reason: "refused as an instance not this object's to adopt is: creating something instead would surprise, and telling which ids exist would tell too much",
			in:     in(func(in *adoptInput) { in.target, in.targetErr = nil, cloud.ErrNotFound }),
			want:   refusedPlan(AdoptUnowned),
		},
		"target missing under SameNamespace": {
			reason: "the rule said is the policy's",
			in:     in(func(in *adoptInput) { in.target, in.targetErr, in.policy = nil, cloud.ErrNotFound, AdoptSameNamespace }),
			want:   refusedPlan(AdoptSameNamespace),
		},
		"target missing under Never": {
			reason: "under Never every adoption is refused alike, whether the instance exists or not",
			in:     in(func(in *adoptInput) { in.target, in.targetErr, in.policy = nil, cloud.ErrNotFound, AdoptNever }),
			want:   neverPlan,
		},
		"released by another namespace": {
			reason: "another tenant's released instance reads as one that does not exist",
			in: in(inst(func(i *cloud.Instance) {
				i.Tags = owner{Cluster: "local", Namespace: "rds2", Name: "db", UID: "uid-9"}.releaseTags()
			})),
			want: refusedPlan(AdoptUnowned, "ownership", "Released", "why", "it was released by an Rds object of another namespace or cluster."),
		},
		"untagged under SameNamespace": {
			reason: "an instance the policy does not let this object adopt reads as one that does not exist",
			in:     in(func(in *adoptInput) { in.policy = AdoptSameNamespace }),
			want: refusedPlan(AdoptSameNamespace, "ownership", "Unowned", "why",
				"it carries no ownership tags, and the controller's adoption policy is SameNamespace: only an instance released by an Rds object of this namespace is adopted."),
		},
		"target unreadable": {
			reason: "a cloud error, like any",
			in:     in(func(in *adoptInput) { in.target, in.targetErr = nil, busy }),
			want:   adoptPlan{cloudErr: busy},
		},
		"policy Never": {
			reason: "the controller adopts nothing",
			in:     in(func(in *adoptInput) { in.policy = AdoptNever }),
			want:   neverPlan,
		},
		"owned by another object": {
			reason: "no object takes another's instance",
			in:     in(inst(func(i *cloud.Instance) { i.Tags = ownerTags("uid-9") })),
			want:   refusedPlan(AdoptUnowned, "ownership", "OwnedByOther", "why", "it belongs to another Rds object."),
		},
		"tagged as ours but refused by policy Never": {
			reason: "an instance this object adopted already stays adopted",
			in:     in(inst(ours), func(in *adoptInput) { in.policy = AdoptNever }),
			want:   adoptPlan{take: true, logs: adoptedLog("Ours")},
		},
		"engine mismatch": {
			reason: "an instance of another engine is not what the spec describes",
			in:     in(inst(func(i *cloud.Instance) { i.Engine, i.Version = "PostgreSQL", "16" })),
			want:   mismatch("it runs PostgreSQL, the spec asks for MySQL."),
		},
		"version mismatch": {
			reason: "another major version",
			in:     in(inst(func(i *cloud.Instance) { i.Version = "5.7" })),
			want:   mismatch("it runs version 5.7, the spec asks for 8.0."),
		},
		"region and HA mismatch": {
			reason: "every problem is said at once",
			in:     in(inst(func(i *cloud.Instance) { i.Region, i.Type = "eu-nl", "Ha" })),
			want:   mismatch("it is in region eu-nl, the spec asks for eu-de. it is of type Ha, the spec's hamode asks for Single."),
		},
		"client of another region, instance shows none": {
			reason: "the client's region stands in for the instance's",
			in:     in(inst(func(i *cloud.Instance) { i.Region = "" }), func(in *adoptInput) { in.region = "eu-nl" }),
			want:   mismatch("it is in region eu-nl, the spec asks for eu-de."),
		},
		"read replica": {
			reason: "a replica is never adopted",
			in:     in(inst(func(i *cloud.Instance) { i.Type = "Replica" })),
			want:   mismatch("it is a read replica."),
		},
		"single asked as Ha": {
			reason: "the spec's hamode names the type",
			in:     in(func(in *adoptInput) { in.spec.Hamode = "Ha" }),
			want:   mismatch("it is of type Single, the spec's hamode asks for Ha."),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, planAdopt(tc.in), tc.reason)
		})
	}
}
