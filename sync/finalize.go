package sync

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/hook"
)

// Finalize answers a finalize call. With deletionpolicy Delete it takes the instance apart one
// step per call: final backup, wait for it to complete, delete, wait until OTC no longer lists the
// instance; only then finalized is true. A failed final backup stops the deletion.
func (r *Reconciler) Finalize(ctx context.Context, req *hook.Request) (*hook.FinalizeResponse, error) {
	c := r.begin(ctx, req)
	done, err := c.finalize(ctx)
	if err != nil {
		return nil, err
	}
	resp := &hook.FinalizeResponse{Status: &c.st, Children: c.children(), Finalized: done}
	if !done {
		resp.ResyncAfterSeconds = c.resync.Seconds()
	}
	return resp, nil
}

func (c *call) finalize(ctx context.Context) (bool, error) {
	c.resync = c.r.cfg.ResyncPending
	if c.spec.Deletionpolicy == v1alpha1.DeletionPolicyRetain {
		c.log.Info("retaining instance", "instance", c.st.ID)
		c.setReady(metav1.ConditionFalse, ReasonRetained, "The instance is left in OTC (deletionpolicy Retain).")
		return true, nil
	}
	inst, err := c.observe(ctx)
	if err != nil {
		return false, c.cloudError(err)
	}
	if inst == nil {
		c.st.Status, c.st.Operation = "", nil
		c.setReady(metav1.ConditionFalse, ReasonDeleting, "The instance is gone.")
		return true, nil
	}
	c.report(inst)
	c.resync = c.r.cfg.ResyncPending
	if op := c.st.Operation; op != nil && op.Type == OpDelete {
		c.deleting("The instance is being deleted.")
		return false, nil
	}
	if ok, err := c.finalBackup(ctx, inst); !ok || err != nil {
		return false, err
	}
	if !usable(inst.Status) && inst.Status != cloud.StatusCreateFail && inst.Status != cloud.StatusFailed {
		c.deleting("Waiting for the instance to finish " + inst.Status + " before deleting it.")
		return false, nil
	}
	var jobID string
	err = c.cloudCall(ctx, func(ctx context.Context) (err error) {
		jobID, err = c.r.cfg.Cloud.DeleteInstance(ctx, inst.ID)
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

// finalBackup makes sure a completed final backup exists. It reports true once deletion may go on.
func (c *call) finalBackup(ctx context.Context, inst *cloud.Instance) (bool, error) {
	// NOTE: a CREATE FAIL instance never held data, and OTC cannot back it up.
	if c.spec.Skipfinalbackup || inst.Status == cloud.StatusCreateFail {
		return true, nil
	}
	name := FinalBackupName(c.st.Name)
	var backups []cloud.Backup
	if err := c.cloudCall(ctx, func(ctx context.Context) (err error) {
		backups, err = c.r.cfg.Cloud.ListBackups(ctx, inst.ID)
		return err
	}); err != nil {
		return false, c.cloudError(err)
	}
	for _, b := range backups {
		if b.Name != name {
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
			c.setReady(metav1.ConditionFalse, ReasonFinalBackupFailed,
				fmt.Sprintf("The final backup %s failed, so the instance is not deleted. Set skipfinalbackup or deletionpolicy Retain to finish deleting.", b.Name))
			c.setSynced(metav1.ConditionFalse, ReasonFinalBackupFailed, "The final backup failed.")
			c.resync = c.r.cfg.ResyncSteady
			return false, nil
		default:
			c.deleting("Waiting for the final backup " + b.Name + " to complete.")
			return false, nil
		}
	}
	if !usable(inst.Status) {
		c.deleting("Waiting for the instance to finish " + inst.Status + " before the final backup.")
		return false, nil
	}
	var b *cloud.Backup
	err := c.cloudCall(ctx, func(ctx context.Context) (err error) {
		b, err = c.r.cfg.Cloud.CreateBackup(ctx, inst.ID, name, "Final backup before deletion by the Rds object "+c.parent.Namespace+"/"+c.parent.Name)
		return err
	})
	switch {
	case errors.Is(err, cloud.ErrBusy), errors.Is(err, cloud.ErrConflict):
		// Busy: another backup runs. Conflict: ours exists already, from a lost response.
		c.deleting("Waiting to start the final backup.")
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

func (c *call) deleting(message string) {
	reason := ReasonDeleting
	if fb := c.st.FinalBackup; fb != nil && fb.Status != cloud.BackupCompleted && (c.st.Operation == nil || c.st.Operation.Type != OpDelete) {
		reason = ReasonFinalBackup
	}
	c.setReady(metav1.ConditionFalse, reason, message)
	c.setSynced(metav1.ConditionTrue, ReasonReconciled, "Deletion is in progress.")
	c.resync = c.r.cfg.ResyncPending
}
