package reconcile

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// TestPlanFinalize decides every branch of a finalize call from plain inputs: no cloud, no fake.
func TestPlanFinalize(t *testing.T) {
	me := owner{Cluster: "local", Namespace: "rds1", Name: "my-rds-single", UID: "uid-1"}
	name := InstanceName("local", "rds1", "my-rds-single")
	finalName := FinalBackupName(name, "inst-1")
	const generation = 3

	// input is a finalize call of an ACTIVE instance of this object, observed and reported, with
	// deletionpolicy Delete and the backup list not read; each edit changes what a case is about.
	input := func(edits ...func(*finalizeInput)) finalizeInput {
		spec := sampleSpec()
		in := finalizeInput{
			spec: &spec, st: v1alpha1.RdsStatus{ID: "inst-1", Name: name, Status: cloud.StatusActive},
			me: me, object: "rds1/my-rds-single", generation: generation,
			observed: true, inst: activeInstance(), claim: claim{Kind: Ours}, reported: true,
		}
		for _, edit := range edits {
			edit(&in)
		}
		return in
	}
	retain := func(in *finalizeInput) { in.spec.Deletionpolicy = v1alpha1.DeletionPolicyRetain }
	unobserved := func(in *finalizeInput) { in.observed, in.inst, in.claim, in.reported = false, nil, claim{}, false }
	gone := func(in *finalizeInput) { in.inst, in.claim, in.reported = nil, claim{}, false }
	unreported := func(in *finalizeInput) { in.reported = false }
	lost := func(in *finalizeInput) { in.lost = []string{"my-rds-single-connection", "my-rds-single-app"} }
	skip := func(in *finalizeInput) { in.spec.Skipfinalbackup = true }
	inState := func(status string) func(*finalizeInput) {
		return func(in *finalizeInput) { in.inst.Status, in.st.Status = status, status }
	}
	withClaim := func(cl claim) func(*finalizeInput) { return func(in *finalizeInput) { in.claim = cl } }
	withOp := func(op *v1alpha1.Operation) func(*finalizeInput) {
		return func(in *finalizeInput) { in.st.Operation = op }
	}
	recorded := func(b *v1alpha1.Backup) func(*finalizeInput) {
		return func(in *finalizeInput) { in.st.FinalBackup = b }
	}
	listed := func(bs ...cloud.Backup) func(*finalizeInput) {
		return func(in *finalizeInput) {
			in.backups = append([]cloud.Backup{{ID: "auto-1", Name: "auto", Type: "auto", Status: cloud.BackupCompleted}}, bs...)
		}
	}
	final := func(status string) cloud.Backup {
		return cloud.Backup{ID: "b-1", Name: finalName, Type: "manual", Status: status}
	}
	deletedAt := func(at time.Time) func(*finalizeInput) { return func(in *finalizeInput) { in.deletionStart = at } }
	searchedNone := func(in *finalizeInput) {
		in.setAside, in.setAsideClaim = in.inst, in.claim
		in.searched, in.inst, in.claim, in.reported = true, nil, claim{}, false
	}
	searchedFound := func(in *finalizeInput) {
		in.setAside, in.setAsideClaim = in.inst, in.claim
		if in.setAside != nil {
			in.setAside = activeInstance()
			in.setAside.ID = "inst-1"
		}
		in.searched, in.inst, in.claim = true, activeInstance(), claim{Kind: Ours}
	}
	answered := func(a actAnswer) func(*finalizeInput) { return func(in *finalizeInput) { in.answer = &a } }
	busy := &cloud.Error{Kind: cloud.KindBusy, Code: "DBS.201205"}
	conflict := &cloud.Error{Kind: cloud.KindConflict, Code: "DBS.201204"}
	unavailable := &cloud.Error{Kind: cloud.KindUnavailable}
	notFound := &cloud.Error{Kind: cloud.KindNotFound}

	completed := &v1alpha1.Backup{ID: "b-1", Name: finalName, Status: cloud.BackupCompleted}
	opBackup := &v1alpha1.Operation{Type: OpBackup, Generation: 2, Target: finalName}
	opDelete := &v1alpha1.Operation{Type: OpDelete, JobID: "job-d", Generation: generation}
	deleteInstance := &action{kind: actDeleteInstance, instance: "inst-1"}
	startBackup := finalizePlan{act: &action{kind: actCreateBackup, instance: "inst-1", backup: finalName,
		about: "Final backup before deletion by the Rds object rds1/my-rds-single"}}
	deleting := func(reason, message string) (*outcome, *outcome) {
		return ptr.To(notReady(reason, message, inFlight)), ptr.To(syncedOK(ReasonReconcileSuccess, "Deletion is in progress.", inFlight))
	}
	waits := func(reason, ready, synced string) (*outcome, *outcome) {
		return ptr.To(notReady(reason, ready, waitsForUser)), ptr.To(notSynced(reason, synced, waitsForUser))
	}
	// plan is a final plan of an ACTIVE instance with the given conditions.
	plan := func(ready, synced *outcome) finalizePlan {
		return finalizePlan{instanceStatus: cloud.StatusActive, ready: ready, synced: synced}
	}
	with := func(p finalizePlan, edit func(*finalizePlan)) finalizePlan { edit(&p); return p }
	retainedReady := ptr.To(notReady(ReasonRetained, "The instance is left in OTC (deletionpolicy Retain), released: another Rds object takes it over only by adopting it with instanceid.", settled))

	cases := map[string]struct {
		reason string
		in     finalizeInput
		want   finalizePlan
	}{
		// deletionpolicy Retain
		"retain with unsaved generated passwords holds before any cloud call": {
			reason: "the Secrets holding the only copies are deleted with the object",
			in:     input(retain, unobserved, lost),
			want: finalizePlan{instanceStatus: cloud.StatusActive,
				ready: ptr.To(notReady(ReasonPasswordWouldBeLost,
					"The instance is kept in OTC, but generated passwords live only in the Secrets my-rds-single-connection, my-rds-single-app, which are deleted with this object. "+
						"Copy them, then annotate this object with "+AnnotationPasswordSaved+"=true (or set passwordsecretref) to finish deleting.", waitsForUser)),
				synced: ptr.To(notSynced(ReasonPasswordWouldBeLost, "The deletion waits until the generated passwords are saved; see the Ready condition.", waitsForUser)),
			},
		},
		"retain with saved passwords looks at the instance": {
			reason: "the annotation says the user copied them",
			in:     input(retain, unobserved, lost, func(in *finalizeInput) { in.saved = true }),
			want:   finalizePlan{observe: true},
		},
		"delete does not hold on generated passwords": {
			reason: "the instance goes, and its passwords with it",
			in:     input(unobserved, lost),
			want:   finalizePlan{observe: true},
		},
		"retain, gone: finalized": {
			reason: "nothing to release",
			in:     input(retain, gone, searchedNone),
			want: finalizePlan{instanceStatus: cloud.StatusActive, ready: retainedReady, finalized: true,
				events: []logLine{{level: slog.LevelInfo, msg: "retaining instance", args: []any{"instance", "inst-1"}}}},
		},
		"retain, released by this object: finalized": {
			reason: "the release tag of an earlier call was written",
			in:     input(retain, unreported, withClaim(claim{Kind: Released, ReleasedBy: "uid-1"})),
			want: finalizePlan{instanceStatus: cloud.StatusActive, ready: retainedReady, finalized: true,
				events: []logLine{{level: slog.LevelInfo, msg: "retaining instance", args: []any{"instance", "inst-1"}}}},
		},
		"retain, mine: the release tag is the one change": {
			reason: "the ownership tags and rds-released-by in one SetTags, before any report",
			in:     input(retain, unreported),
			want:   finalizePlan{act: &action{kind: actSetTags, instance: "inst-1", tags: me.releaseTags()}},
		},
		"retain, release issued": {
			reason: "the next call sees the instance released and finishes",
			in:     input(retain, unreported, answered(actAnswer{})),
			want: with(plan(ptr.To(notReady(ReasonRetained, "The instance is being released: it stays in OTC (deletionpolicy Retain), tagged as released.", settled)),
				ptr.To(syncedOK(ReasonReconcileSuccess, "The release tag was issued to OTC.", inFlight))), func(p *finalizePlan) {
				p.events = []logLine{{level: slog.LevelInfo, msg: "releasing instance", args: []any{"instance", "inst-1"}}}
			}),
		},
		"retain, release refused as busy": {
			reason: "a busy instance takes the tag later: Ready says so, and the call comes again soon",
			in:     input(retain, unreported, answered(actAnswer{err: busy})),
			want:   plan(ptr.To(notReady(ReasonRetained, "The instance is busy; it is released (deletionpolicy Retain) when OTC accepts its release tag.", retry)), nil),
		},
		"retain, release failed": {
			reason: "any other error is sorted by cloudError",
			in:     input(retain, unreported, answered(actAnswer{err: unavailable})),
			want:   finalizePlan{instanceStatus: cloud.StatusActive, failed: unavailable},
		},
		"retain, released by another object: look for the object's own": {
			reason: "a release tag of another uid makes the instance not this object's; status.id proves nothing",
			in:     input(retain, unreported, withClaim(claim{Kind: Released, ReleasedBy: "uid-0"})),
			want:   finalizePlan{search: true},
		},
		"retain, released by another object, none of its own: finalized as gone": {
			reason: "the same answer as for an instance OTC does not list; the log says which was left alone",
			in:     input(retain, unreported, withClaim(claim{Kind: Released, ReleasedBy: "uid-0"}), searchedNone),
			want: finalizePlan{instanceStatus: cloud.StatusActive, ready: retainedReady, finalized: true,
				events: []logLine{
					{level: slog.LevelWarn, msg: "finalize leaves an instance alone that is not this object's", args: []any{"instance", "inst-1", "ownership", "Released"}},
					{level: slog.LevelInfo, msg: "retaining instance", args: []any{"instance", "inst-1"}},
				}},
		},

		// status.id not this object's, or gone
		"not mine: look for the object's own": {
			reason: "a forged status.id proves nothing: the object's instance is looked for by its names and tags",
			in:     input(unreported, withClaim(claim{Kind: OwnedByOther}), withOp(opBackup)),
			want:   finalizePlan{search: true},
		},
		"not listed: look for the object's own": {
			reason: "a well-formed id OTC does not know proves nothing either",
			in:     input(gone),
			want:   finalizePlan{search: true},
		},
		"adopting, nothing taken over yet: look for the object's own": {
			reason: "an adoption whose answer was lost left the instance tagged as this object's, with no status.id",
			in:     input(gone, func(in *finalizeInput) { in.st.ID, in.spec.Instanceid = "", "inst-7" }),
			want:   finalizePlan{search: true},
		},
		"no status.id nor instanceid: look for the object's own by its tags too": {
			reason: "both are the tenant's to clear, and an adopted instance keeps its own name: the names found nothing, the tags may (found in review, issue #17)",
			in:     input(gone, func(in *finalizeInput) { in.st.ID = "" }),
			want:   finalizePlan{search: true},
		},
		"no status.id nor instanceid, none of its own: finalized": {
			reason: "only when no instance of the object exists does the object go",
			in:     input(gone, searchedNone, func(in *finalizeInput) { in.st.ID = "" }),
			want:   finalizePlan{finalized: true, ready: ptr.To(notReady(ReasonDeleting, "The instance is gone.", settled))},
		},
		"not mine, none of its own: left alone, finalized as gone": {
			reason: "the same answer as for an instance OTC does not list, naming nothing; the log keeps the details",
			in:     input(unreported, withClaim(claim{Kind: OwnedByOther}), withOp(opBackup), searchedNone),
			want: finalizePlan{finalized: true, ready: ptr.To(notReady(ReasonDeleting, "The instance is gone.", settled)),
				events: []logLine{{level: slog.LevelWarn, msg: "finalize leaves an instance alone that is not this object's", args: []any{"instance", "inst-1", "ownership", "OwnedByOther"}}}},
		},
		"not listed, none of its own: finalized": {
			reason: "only when no instance of the object exists does the object go",
			in:     input(gone, searchedNone),
			want:   finalizePlan{finalized: true, ready: ptr.To(notReady(ReasonDeleting, "The instance is gone.", settled))},
		},
		"namespace login, none of its own in its project: look in the controller's too": {
			reason: "status.credentialsSecret is the tenant's to forge: the instance may be in the controller's project (found in review, issue #17)",
			in:     input(gone, searchedNone, func(in *finalizeInput) { in.login, in.ownToo = "otc-credentials", true }),
			want:   finalizePlan{searchOwn: true},
		},
		"namespace login, its own in the controller's project: wait": {
			reason: "the namespace login cannot back it up or delete it, and the object must not go while it exists",
			in: input(gone, searchedNone, func(in *finalizeInput) {
				in.login, in.ownToo, in.lookedInOwn, in.inOwn = "otc-credentials", true, true, activeInstance()
			}),
			want: finalizePlan{instanceStatus: cloud.StatusActive,
				synced: ptr.To(notSynced(ReasonCredentialsChanged, credentialsChanged("", "otc-credentials"), waitsForUser)),
				ready:  ptr.To(notReady(ReasonDeletionWaitsForCredentials, msgDeletionWaitsForCredentials, waitsForUser)),
				events: []logLine{{level: slog.LevelWarn, msg: "finalize found the object's instance in the controller's project, not its login's", args: []any{"instance", "inst-1", "secret", "otc-credentials"}}},
			},
		},
		"namespace login, none in either project: finalized": {
			reason: "only when no instance of the object exists where the controller can look does the object go",
			in:     input(gone, searchedNone, func(in *finalizeInput) { in.login, in.ownToo, in.lookedInOwn = "otc-credentials", true, true }),
			want:   finalizePlan{finalized: true, ready: ptr.To(notReady(ReasonDeleting, "The instance is gone.", settled))},
		},
		"namespace login under Required: its project only": {
			reason: "the controller's own login serves no Rds, so no object's instance is made in its project",
			in:     input(gone, searchedNone, func(in *finalizeInput) { in.login = "otc-credentials" }),
			want:   finalizePlan{finalized: true, ready: ptr.To(notReady(ReasonDeleting, "The instance is gone.", settled))},
		},
		"not listed, its own found by name: report it": {
			reason: "the instance found is backed up and deleted as usual, starting with its report",
			in:     input(gone, searchedFound),
			want:   finalizePlan{report: true},
		},
		"not listed, its own found by name and reported: its final backup first": {
			reason: "as usual: the backup list is read",
			in:     input(gone, searchedFound, func(in *finalizeInput) { in.reported = true }),
			want:   finalizePlan{needBackups: true},
		},
		"not mine, its own found by name: the log says what was left alone": {
			reason: "the instance status.id named is left alone; the object's own is deleted as usual",
			in:     input(withClaim(claim{Kind: OwnedByOther}), searchedFound, listed(final(cloud.BackupCompleted))),
			want:   finalizePlan{act: deleteInstance},
		},
		"gone: finalized": {
			reason: "only a fresh observation of absence, by id and by the object's names, releases the object",
			in:     input(gone, withOp(opDelete), searchedNone),
			want:   finalizePlan{finalized: true, ready: ptr.To(notReady(ReasonDeleting, "The instance is gone.", settled))},
		},

		// Delete
		"mine, not reported: report first": {
			reason: "the deletion decides on the instance as status reports it",
			in:     input(unreported),
			want:   finalizePlan{report: true},
		},
		"delete in flight: wait": {
			reason: "no backup list and no second delete while OTC still lists the instance",
			in:     input(withOp(opDelete), recorded(completed)),
			want: with(plan(deleting(ReasonDeleting, "The instance is being deleted.")), func(p *finalizePlan) {
				p.operation, p.finalBackup = opDelete, completed
			}),
		},
		"backups not read: read them": {
			reason: "the final backup is found in the instance's list",
			in:     input(),
			want:   finalizePlan{needBackups: true},
		},
		"final backup completed: delete": {
			reason: "the one change of this call is the delete",
			in:     input(listed(final(cloud.BackupCompleted))),
			want:   finalizePlan{act: deleteInstance},
		},
		"final backup completed, delete issued": {
			reason: "the running backup operation ends, the delete operation is recorded with its job",
			in:     input(listed(final(cloud.BackupCompleted)), withOp(opBackup), answered(actAnswer{jobID: "job-d"})),
			want: with(plan(deleting(ReasonDeleting, "The instance is being deleted.")), func(p *finalizePlan) {
				p.finalBackup, p.operation = completed, opDelete
				p.events = []logLine{{level: slog.LevelInfo, msg: "deleting instance", args: []any{"instance", "inst-1", "job", "job-d"}}}
			}),
		},
		"final backup completed, delete answered not found: finalized": {
			reason: "the instance went meanwhile",
			in:     input(listed(final(cloud.BackupCompleted)), answered(actAnswer{err: notFound})),
			want:   finalizePlan{instanceStatus: cloud.StatusActive, finalBackup: completed, finalized: true},
		},
		"final backup completed, delete refused as busy: wait": {
			reason: "a busy instance is deleted on a later call",
			in:     input(listed(final(cloud.BackupCompleted)), answered(actAnswer{err: busy})),
			want: with(plan(deleting(ReasonDeleting, "The instance is busy; the delete will be retried.")), func(p *finalizePlan) {
				p.finalBackup = completed
			}),
		},
		"final backup completed, delete failed": {
			reason: "any other error is sorted by cloudError; the backup found stays recorded",
			in:     input(listed(final(cloud.BackupCompleted)), answered(actAnswer{err: unavailable})),
			want:   finalizePlan{instanceStatus: cloud.StatusActive, finalBackup: completed, failed: unavailable},
		},
		"final backup completed, transitional instance: the delete waits": {
			reason: "OTC refuses a delete while the instance changes",
			in:     input(inState(cloud.StatusRebooting), listed(final(cloud.BackupCompleted))),
			want: finalizePlan{instanceStatus: cloud.StatusRebooting, finalBackup: completed,
				ready:  ptr.To(notReady(ReasonDeleting, "Waiting for the instance to finish REBOOTING before deleting it.", inFlight)),
				synced: ptr.To(syncedOK(ReasonReconcileSuccess, "Deletion is in progress.", inFlight))},
		},
		"final backup completed, terminal instance: delete": {
			reason: "OTC deletes a FAILED instance",
			in:     input(inState(cloud.StatusFailed), listed(final(cloud.BackupCompleted))),
			want:   finalizePlan{act: deleteInstance},
		},
		"final backup failed: the user decides": {
			reason: "a failed final backup stops the deletion",
			in:     input(listed(final(cloud.BackupFailed))),
			want: with(plan(waits(ReasonFinalBackupFailed,
				"The final backup "+finalName+" failed, so the instance is not deleted. Set skipfinalbackup or deletionpolicy Retain to finish deleting.",
				"The final backup failed.")), func(p *finalizePlan) {
				p.finalBackup = &v1alpha1.Backup{ID: "b-1", Name: finalName, Status: cloud.BackupFailed}
			}),
		},
		"final backup running: wait": {
			reason: "never delete before the backup completed",
			in:     input(listed(final(cloud.BackupBuilding)), withOp(opBackup)),
			want: with(plan(deleting(ReasonFinalBackupInProgress, "Waiting for the final backup "+finalName+" to complete.")), func(p *finalizePlan) {
				p.finalBackup, p.operation = &v1alpha1.Backup{ID: "b-1", Name: finalName, Status: cloud.BackupBuilding}, opBackup
			}),
		},
		"status.finalBackup naming an automated backup: a final backup is started": {
			reason: "status vouches for nothing: a completed automated backup is not the final backup",
			in:     input(recorded(&v1alpha1.Backup{ID: "auto-1", Name: "auto", Status: cloud.BackupCompleted}), listed()),
			want:   startBackup,
		},
		"status.finalBackup naming a manual backup of another name: a final backup is started": {
			reason: "only the name the controller gives the final backup counts",
			in: input(recorded(&v1alpha1.Backup{ID: "b-old", Name: "rds-old-final", Status: cloud.BackupCompleted}),
				listed(cloud.Backup{ID: "b-old", Name: "rds-old-final", Type: "manual", Status: cloud.BackupCompleted, Begin: t0.Add(time.Hour)})),
			want: startBackup,
		},
		"a backup of the final name begun before the deletion: the user decides": {
			reason: "it is not this deletion's final backup, and OTC refuses a second backup of the name",
			in: input(deletedAt(t0.Add(time.Hour)), recorded(&v1alpha1.Backup{ID: "b-1", Name: finalName, Status: cloud.BackupCompleted}),
				listed(cloud.Backup{ID: "b-1", Name: finalName, Type: "manual", Status: cloud.BackupCompleted, Begin: t0})),
			want: with(plan(waits(ReasonFinalBackupNameTaken,
				"The final backup name "+finalName+" is taken by a backup of this instance made before the deletion began, which is not taken as its final backup. Delete or rename that backup, or set skipfinalbackup or deletionpolicy Retain to finish deleting.",
				"The final backup cannot be started.")), func(p *finalizePlan) {
				p.events = []logLine{{level: slog.LevelWarn, msg: "final backup name taken by an earlier backup", args: []any{"instance", "inst-1", "backup", "b-1", "begin", t0}}}
			}),
		},
		"a backup of the final name begun after the deletion: it is the final backup": {
			reason: "the one this deletion started",
			in:     input(deletedAt(t0), listed(cloud.Backup{ID: "b-1", Name: finalName, Type: "manual", Status: cloud.BackupCompleted, Begin: t0.Add(time.Minute)})),
			want:   finalizePlan{act: deleteInstance},
		},
		"a backup of the final name begun a minute before the deletion: the clocks disagree": {
			reason: "OTC's clock may run behind the API server's",
			in:     input(deletedAt(t0), listed(cloud.Backup{ID: "b-1", Name: finalName, Type: "manual", Status: cloud.BackupCompleted, Begin: t0.Add(-time.Minute)})),
			want:   finalizePlan{act: deleteInstance},
		},
		"final backup missing, usable instance: start it": {
			reason: "the one change of this call is the backup, under its deterministic name",
			in:     input(listed()),
			want: finalizePlan{act: &action{kind: actCreateBackup, instance: "inst-1", backup: finalName,
				about: "Final backup before deletion by the Rds object rds1/my-rds-single"}},
		},
		"final backup started": {
			reason: "status records the backup and the operation, and the call looks again soon",
			in:     input(listed(), answered(actAnswer{backup: &cloud.Backup{ID: "b-1", Name: finalName, Status: cloud.BackupBuilding}})),
			want: with(plan(deleting(ReasonFinalBackupInProgress, "Waiting for the final backup "+finalName+" to complete.")), func(p *finalizePlan) {
				p.finalBackup = &v1alpha1.Backup{ID: "b-1", Name: finalName, Status: cloud.BackupBuilding}
				p.operation = &v1alpha1.Operation{Type: OpBackup, Generation: generation, Target: finalName}
				p.events = []logLine{{level: slog.LevelInfo, msg: "started final backup", args: []any{"instance", "inst-1", "backup", "b-1"}}}
			}),
		},
		"final backup refused as busy: wait": {
			reason: "an automated backup in progress refuses ours; a later call starts it",
			in:     input(listed(), answered(actAnswer{err: busy})),
			want:   plan(deleting(ReasonDeleting, "Waiting to start the final backup.")),
		},
		"final backup name taken: the user decides": {
			reason: "409 DBS.201204 for a name this instance's list does not show never resolves by waiting",
			in:     input(listed(), answered(actAnswer{err: conflict})),
			want: plan(waits(ReasonFinalBackupNameTaken,
				"The final backup name "+finalName+" is taken by a backup of another instance. Delete or rename that backup, or set skipfinalbackup or deletionpolicy Retain to finish deleting.",
				"The final backup cannot be started.")),
		},
		"final backup start failed": {
			reason: "any other error is sorted by cloudError",
			in:     input(listed(), answered(actAnswer{err: unavailable})),
			want:   finalizePlan{instanceStatus: cloud.StatusActive, failed: unavailable},
		},
		"final backup missing, transitional instance: wait": {
			reason: "MODIFYING passes by itself",
			in:     input(inState(cloud.StatusModifying), listed()),
			want: finalizePlan{instanceStatus: cloud.StatusModifying,
				ready:  ptr.To(notReady(ReasonDeleting, "Waiting for the instance to finish MODIFYING before the final backup.", inFlight)),
				synced: ptr.To(syncedOK(ReasonReconcileSuccess, "Deletion is in progress.", inFlight))},
		},
		"final backup missing, terminal instance: the user decides": {
			reason: "OTC cannot back up a FAILED instance, and FAILED does not pass by itself",
			in:     input(inState(cloud.StatusFailed), listed()),
			want: with(plan(waits(ReasonFinalBackupImpossible,
				"OTC cannot back up a FAILED instance; set skipfinalbackup or deletionpolicy Retain to finish deleting.",
				"The final backup cannot be taken.")), func(p *finalizePlan) { p.instanceStatus = cloud.StatusFailed }),
		},
		"skipfinalbackup: delete without reading backups": {
			reason: "the user chose to delete without a backup",
			in:     input(skip, inState(cloud.StatusShutdown)),
			want:   finalizePlan{act: deleteInstance},
		},
		"skipfinalbackup, transitional instance: the delete waits": {
			reason: "a backup recorded earlier and not completed still names the wait",
			in:     input(skip, inState(cloud.StatusBackingUp), recorded(&v1alpha1.Backup{ID: "b-1", Name: finalName, Status: cloud.BackupBuilding})),
			want: finalizePlan{instanceStatus: cloud.StatusBackingUp, finalBackup: &v1alpha1.Backup{ID: "b-1", Name: finalName, Status: cloud.BackupBuilding},
				ready:  ptr.To(notReady(ReasonFinalBackupInProgress, "Waiting for the instance to finish BACKING UP before deleting it.", inFlight)),
				synced: ptr.To(syncedOK(ReasonReconcileSuccess, "Deletion is in progress.", inFlight))},
		},
		"stopped instance: started for its final backup": {
			reason: "OTC backs up only a running instance: the start comes before the backup list is read",
			in:     input(inState(cloud.StatusShutdown)),
			want:   finalizePlan{act: &action{kind: actStart, instance: "inst-1"}},
		},
		"stopped instance, start sent: the start is recorded": {
			reason: "the start is an operation with OTC's job, followed by the next calls",
			in:     input(inState(cloud.StatusShutdown), answered(actAnswer{jobID: "job-s"})),
			want: finalizePlan{instanceStatus: cloud.StatusShutdown,
				operation: &v1alpha1.Operation{Type: OpStart, JobID: "job-s", Generation: generation, Target: cloud.StatusActive},
				ready:     ptr.To(notReady(ReasonDeleting, "Starting the stopped instance before it is deleted.", inFlight)),
				synced:    ptr.To(syncedOK(ReasonReconcileSuccess, "Deletion is in progress.", inFlight)),
				events:    []logLine{{level: slog.LevelInfo, msg: "starting stopped instance before deletion", args: []any{"instance", "inst-1", "job", "job-s"}}}},
		},
		"stopped instance, start in flight: its job is read": {
			reason: "OTC lists the instance SHUTDOWN while it starts",
			in:     input(inState(cloud.StatusShutdown), withOp(&v1alpha1.Operation{Type: OpStart, JobID: "job-s", Target: cloud.StatusActive})),
			want:   finalizePlan{needJob: "job-s"},
		},
		"stopped MySQL instance with skipfinalbackup: deleted as it is": {
			reason: "OTC deletes a stopped MySQL instance; no backup needs it running",
			in:     input(skip, inState(cloud.StatusShutdown)),
			want:   finalizePlan{act: deleteInstance},
		},
		"stopped PostgreSQL instance with skipfinalbackup: started first": {
			reason: "OTC does not delete a stopped PostgreSQL instance",
			in:     input(skip, inState(cloud.StatusShutdown), func(in *finalizeInput) { in.inst.Engine = v1alpha1.EnginePostgreSQL }),
			want:   finalizePlan{act: &action{kind: actStart, instance: "inst-1"}},
		},
		"CREATE FAIL: delete without a backup": {
			reason: "an instance that was never created holds no data, and OTC cannot back it up",
			in:     input(inState(cloud.StatusCreateFail)),
			want:   finalizePlan{act: deleteInstance},
		},
		"CREATE FAIL, delete issued": {
			reason: "the delete operation is recorded with its job",
			in:     input(inState(cloud.StatusCreateFail), answered(actAnswer{jobID: "job-d"})),
			want: finalizePlan{instanceStatus: cloud.StatusCreateFail, operation: opDelete,
				ready:  ptr.To(notReady(ReasonDeleting, "The instance is being deleted.", inFlight)),
				synced: ptr.To(syncedOK(ReasonReconcileSuccess, "Deletion is in progress.", inFlight)),
				events: []logLine{{level: slog.LevelInfo, msg: "deleting instance", args: []any{"instance", "inst-1", "job", "job-d"}}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			before := tc.in.st.DeepCopy()
			assert.Equal(t, tc.want, planFinalize(tc.in), tc.reason)
			assert.Equal(t, *before, tc.in.st, "planFinalize changes nothing it is given")
		})
	}
}
