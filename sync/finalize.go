package sync

import (
	"context"
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/hook"
)

// AnnotationPasswordSaved on an Rds object with deletionpolicy Retain says the user copied the
// generated passwords out of its Secrets, so deleting the object (and the Secrets with it) may go on.
const AnnotationPasswordSaved = "otc.mcsps.de/password-saved"

// Reasons of a deletion that waits for the user. Each comes with the steady resync: nothing
// changes until the user acts.
const (
	// ReasonPasswordWouldBeLost: Retain keeps the instance, but a generated password lives only in
	// a Secret that is deleted with the object.
	ReasonPasswordWouldBeLost = "PasswordWouldBeLost"
	// ReasonFinalBackupImpossible: OTC cannot back up the instance in its current state.
	ReasonFinalBackupImpossible = "FinalBackupImpossible"
	// ReasonFinalBackupNameTaken: another instance's backup carries the final backup's name.
	ReasonFinalBackupNameTaken = "FinalBackupNameTaken"
)

// Finalize answers a finalize call. With deletionpolicy Delete it takes the instance apart one
// step per call: final backup, wait for it to complete, delete, wait until OTC no longer lists the
// instance; only then finalized is true. A failed final backup stops the deletion. With Retain it
// releases the instance (its tags say so, and no later object takes it over by name), unless a
// generated password would be lost with the object's Secrets. Only an instance whose tags name
// this object (or an untagged one with its name) is ever backed up, deleted or released: anything
// else status.id names is left alone.
func (r *Reconciler) Finalize(ctx context.Context, req *hook.Request) (*hook.FinalizeResponse, error) {
	unlock, err := r.serialise(ctx, req)
	if err != nil {
		return nil, err
	}
	defer unlock()
	c := r.begin(ctx, req)
	c.fresh = true // a deletion is decided on what OTC says now, never on the shared view
	done, err := c.finalize(ctx)
	if err != nil {
		return nil, err
	}
	// NOTE: children() echoes the connection Secret and the user Secrets while the deletion
	// waits: a child left out is deleted at once, and a generated password with it.
	// The log Job and its Secret are kept too, and followed to their end (logs.go).
	c.finalizeLogs()
	resp := &hook.FinalizeResponse{Status: &c.st, Children: append(c.children(), c.logChildren()...), Finalized: done}
	if !done {
		resp.ResyncAfterSeconds = c.resync.Seconds()
	}
	return resp, nil
}

func (c *call) finalize(ctx context.Context) (bool, error) {
	if ok, err := c.credentials(ctx); !ok || err != nil { // credentials.go: c.cloud from here on
		// NOTE: the create is issued only once the connection Secret is stored (create): without
		// an instance id and that Secret, nothing was ever created that could be left behind.
		return err == nil && c.st.ID == "" && c.observedSecret() == nil, err
	}
	retain := c.spec.Deletionpolicy == v1alpha1.DeletionPolicyRetain
	if retain && !c.passwordsSaved() {
		return false, nil
	}
	obs, err := c.observe(ctx)
	if err != nil {
		return false, c.cloudError(err)
	}
	inst := obs.inst
	switch {
	case inst == nil && retain:
		c.retained()
		return true, nil
	case inst == nil:
		c.st.Status, c.st.Operation = "", nil
		c.setReady(metav1.ConditionFalse, ReasonDeleting, "The instance is gone.")
		return true, nil
	case retain && obs.claim.Kind == Released && obs.claim.ReleasedBy == tagValue(c.me.UID):
		c.retained()
		return true, nil
	case !obs.claim.mine():
		c.log.Warn("finalize leaves an instance alone that is not this object's", "instance", inst.ID, "ownership", obs.claim.Kind.String())
		c.st.Status, c.st.Operation = "", nil
		c.setReady(metav1.ConditionFalse, ReasonInstanceNotOwned, fmt.Sprintf(
			"The OTC instance %s was left alone: its tags do not name this object, so it is not this object's to delete or release.", inst.ID))
		return true, nil
	case retain:
		return false, c.release(ctx, inst)
	}
	c.report(inst) // never lengthens the pending resync set above
	if op := c.st.Operation; op != nil && op.Type == OpDelete {
		c.deleting("The instance is being deleted.")
		return false, nil
	}
	if ok, err := c.finalBackup(ctx, inst); !ok || err != nil {
		return false, err
	}
	// NOTE: OTC deletes an instance in any state but a transitional one (FAILED, SHUTDOWN and
	// CREATE FAIL included); waiting for ACTIVE here would wait for ever on a broken instance.
	if transitional(inst.Status) {
		c.deleting("Waiting for the instance to finish " + inst.Status + " before deleting it.")
		return false, nil
	}
	var jobID string
	err = c.cloudCall(ctx, func(ctx context.Context) (err error) {
		jobID, err = c.cloud.DeleteInstance(ctx, inst.ID)
		return err
	})
	switch {
	case errors.Is(err, cloud.ErrNotFound):
		return true, nil
	case errors.Is(err, cloud.ErrBusy):
		c.deleting("The instance is busy; the delete will be retried.")
		return false, nil
	case err != nil:
		return false, c.cloudError(err)
	}
	c.log.Info("deleting instance", "instance", inst.ID, "job", jobID)
	c.st.Operation = &v1alpha1.Operation{Type: OpDelete, JobID: jobID, Generation: c.parent.Generation}
	c.deleting("The instance is being deleted.")
	return false, nil
}

// passwordsSaved holds a deletion with deletionpolicy Retain while a generated password would be
// lost: the instance lives on, but the Secrets holding the only copies of its generated passwords
// are garbage-collected with the object. It runs before any cloud call.
func (c *call) passwordsSaved() bool {
	if lost := c.generatedPasswordSecrets(); len(lost) > 0 && c.parent.Annotations[AnnotationPasswordSaved] != "true" {
		c.setReady(metav1.ConditionFalse, ReasonPasswordWouldBeLost, fmt.Sprintf(
			"The instance is kept in OTC, but generated passwords live only in the Secrets %s, which are deleted with this object. "+
				"Copy them, then annotate this object with %s=true (or set passwordsecretref) to finish deleting.",
			strings.Join(lost, ", "), AnnotationPasswordSaved))
		c.setSynced(metav1.ConditionFalse, ReasonPasswordWouldBeLost, "The deletion waits until the generated passwords are saved; see the Ready condition.")
		return false
	}
	return true
}

// release writes the tags that release the instance under deletionpolicy Retain (this object's
// ownership tags and rds-released-by=<uid>): the next call sees it released and finishes.
func (c *call) release(ctx context.Context, inst *cloud.Instance) error {
	err := c.cloudCall(ctx, func(ctx context.Context) error { return c.cloud.SetTags(ctx, inst.ID, c.me.releaseTags()) })
	switch {
	case errors.Is(err, cloud.ErrBusy):
		c.setReady(metav1.ConditionFalse, ReasonRetained, "The instance is busy; it is released (deletionpolicy Retain) when OTC accepts its release tag.")
		c.askClass(retry)
		return nil
	case err != nil:
		return c.cloudError(err)
	}
	c.log.Info("releasing instance", "instance", inst.ID)
	c.setReady(metav1.ConditionFalse, ReasonRetained, "The instance is being released: it stays in OTC (deletionpolicy Retain), tagged as released.")
	c.tell(syncedOK(ReasonReconcileSuccess, "The release tag was issued to OTC.", inFlight))
	return nil
}

// retained finishes a deletion with deletionpolicy Retain.
func (c *call) retained() {
	c.log.Info("retaining instance", "instance", c.st.ID)
	c.setReady(metav1.ConditionFalse, ReasonRetained, "The instance is left in OTC (deletionpolicy Retain), released: another Rds object takes it over only by adopting it with instanceid.")
}

// generatedPasswordSecrets names the observed Secrets that hold the only copy of a password the
// controller generated for an account that outlives the object: the root account unless the spec
// now gives its password, and each spec user without password or passwordsecretref. Accounts that
// already left the spec are not listed: the instance no longer belongs to anyone who would use them.
func (c *call) generatedPasswordSecrets() []string {
	var names []string
	if c.st.PasswordGenerated && c.spec.Password == "" && c.spec.Passwordsecretref == nil && c.observedSecret() != nil {
		names = append(names, c.st.ConnectionSecret)
	}
	for _, u := range c.spec.Users {
		name := UserSecretName(c.parent.Name, u.Name, u.Host)
		if u.Password == "" && u.Passwordsecretref == nil && c.req.Secrets[name] != nil {
			names = append(names, name)
		}
	}
	return names
}

// finalBackup makes sure a completed final backup exists. It reports true once deletion may go on.
func (c *call) finalBackup(ctx context.Context, inst *cloud.Instance) (bool, error) {
	// NOTE: a CREATE FAIL instance never held data, and OTC cannot back it up.
	if c.spec.Skipfinalbackup || inst.Status == cloud.StatusCreateFail {
		return true, nil
	}
	name := FinalBackupName(c.st.Name, inst.ID)
	var backups []cloud.Backup
	if err := c.cloudCall(ctx, func(ctx context.Context) (err error) {
		backups, err = c.cloud.ListBackups(ctx, inst.ID)
		return err
	}); err != nil {
		return false, c.cloudError(err)
	}
	for _, b := range backups {
		// The recorded id also finds a backup started under an earlier naming scheme.
		if b.Name != name && (c.st.FinalBackup == nil || c.st.FinalBackup.ID != b.ID) {
			continue
		}
		c.st.FinalBackup = &v1alpha1.Backup{ID: b.ID, Name: b.Name, Status: b.Status}
		switch b.Status {
		case cloud.BackupCompleted:
			if op := c.st.Operation; op != nil && op.Type == OpBackup {
				c.st.Operation = nil
			}
			return true, nil
		case cloud.BackupFailed:
			c.waitForDecision(ReasonFinalBackupFailed,
				fmt.Sprintf("The final backup %s failed, so the instance is not deleted. Set skipfinalbackup or deletionpolicy Retain to finish deleting.", b.Name),
				"The final backup failed.")
			return false, nil
		default:
			c.deleting("Waiting for the final backup " + b.Name + " to complete.")
			return false, nil
		}
	}
	if !usable(inst.Status) {
		if transitional(inst.Status) {
			c.deleting("Waiting for the instance to finish " + inst.Status + " before the final backup.")
			return false, nil
		}
		// NOTE: FAILED, SHUTDOWN, FROZEN and STORAGE FULL do not pass by themselves, and OTC
		// refuses a backup in each: only the user can decide to delete without one.
		c.waitForDecision(ReasonFinalBackupImpossible,
			fmt.Sprintf("OTC cannot back up a %s instance; set skipfinalbackup or deletionpolicy Retain to finish deleting.", inst.Status),
			"The final backup cannot be taken.")
		return false, nil
	}
	var b *cloud.Backup
	err := c.cloudCall(ctx, func(ctx context.Context) (err error) {
		b, err = c.cloud.CreateBackup(ctx, inst.ID, name, "Final backup before deletion by the Rds object "+c.parent.Namespace+"/"+c.parent.Name)
		return err
	})
	switch {
	case errors.Is(err, cloud.ErrBusy):
		// Another backup runs, or the instance is changing: try again.
		c.deleting("Waiting to start the final backup.")
		return false, nil
	case errors.Is(err, cloud.ErrConflict):
		// NOTE: the name is taken (DBS.201204) although this instance's backups above do not carry
		// it, so a backup of another instance does: it will not go away by itself. A backup of ours
		// from a lost response shows up in the list, at the latest when the steady resync looks again.
		c.waitForDecision(ReasonFinalBackupNameTaken,
			fmt.Sprintf("The final backup name %s is taken by a backup of another instance. Delete or rename that backup, or set skipfinalbackup or deletionpolicy Retain to finish deleting.", name),
			"The final backup cannot be started.")
		return false, nil
	case err != nil:
		return false, c.cloudError(err)
	}
	c.log.Info("started final backup", "instance", inst.ID, "backup", b.ID)
	c.st.FinalBackup = &v1alpha1.Backup{ID: b.ID, Name: name, Status: b.Status}
	c.st.Operation = &v1alpha1.Operation{Type: OpBackup, Generation: c.parent.Generation, Target: name}
	c.deleting("Waiting for the final backup " + name + " to complete.")
	return false, nil
}

// waitForDecision stops the deletion until the user changes the spec: a stable Ready and Synced
// condition and the steady resync.
func (c *call) waitForDecision(reason, ready, synced string) {
	c.setReady(metav1.ConditionFalse, reason, ready)
	c.setSynced(metav1.ConditionFalse, reason, synced)
}

func (c *call) deleting(message string) {
	reason := ReasonDeleting
	if fb := c.st.FinalBackup; fb != nil && fb.Status != cloud.BackupCompleted && (c.st.Operation == nil || c.st.Operation.Type != OpDelete) {
		reason = ReasonFinalBackupInProgress
	}
	c.setReady(metav1.ConditionFalse, reason, message)
	c.setSynced(metav1.ConditionTrue, ReasonReconcileSuccess, "Deletion is in progress.")
	c.askClass(inFlight)
}
