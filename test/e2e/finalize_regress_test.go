package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// finalizeActive creates the sample object, edited by edit, and syncs it until its instance is
// ACTIVE. uid tells objects of the same namespace/name apart.
func (w *world) finalizeActive(uid string, edit func(spec map[string]any)) *metacontroller {
	w.t.Helper()
	mc := w.newObject(edit)
	mc.parent["metadata"].(map[string]any)["uid"] = uid
	mc.sync()
	mc.sync()
	w.clock.Advance(otcsim.DefaultDurations().Create)
	resp := mc.sync()
	require.Equal(w.t, cloud.StatusActive, resp.Status.Status)
	return mc
}

// spec returns the object's spec for editing between calls, as a user would with kubectl edit.
func (m *metacontroller) spec() map[string]any { return m.obj.Spec() }

// TestRecreatedObjectTakesItsOwnFinalBackup: OTC backup names are unique in the project and the
// final backup outlives its instance. An object deleted and created again under the same
// namespace/name gets a new instance, whose final backup must not collide with the one kept from
// before (it did: 409 DBS.201204, and finalize waited for ever).
func TestRecreatedObjectTakesItsOwnFinalBackup(t *testing.T) {
	w := newWorld(t)
	d := otcsim.DefaultDurations()
	var names []string
	for _, uid := range []string{"uid-first", "uid-second"} {
		mc := w.finalizeActive(uid, nil)
		w.sim.ResetCounters()

		resp := mc.finalize()
		require.NotNil(t, resp.Status.FinalBackup, uid)
		assert.Equal(t, reconcile.ReasonFinalBackupInProgress, condition(resp.Status, v1alpha1.ConditionReady).Reason, uid)
		w.clock.Advance(d.Backup)
		resp = mc.finalize()
		assert.Equal(t, cloud.BackupCompleted, resp.Status.FinalBackup.Status, uid)
		w.clock.Advance(d.Delete)
		resp = mc.finalize()
		require.True(t, resp.Finalized, uid)

		assert.Equal(t, 1, w.sim.Calls(otcsim.OpCreateBackup), "exactly one final backup per instance")
		assert.Equal(t, 1, w.sim.Calls(otcsim.OpDeleteInstance))
		names = append(names, resp.Status.FinalBackup.Name)
	}
	assert.NotEqual(t, names[0], names[1], "each instance has its own final backup")
	completed := map[string]bool{}
	for _, b := range w.sim.Backups() {
		if b.Type == "manual" && b.Status == cloud.BackupCompleted {
			completed[b.Name] = true
		}
	}
	assert.Equal(t, map[string]bool{names[0]: true, names[1]: true}, completed, "both final backups are kept")
	assert.Empty(t, w.sim.Instances())
}

// TestFinalBackupNameTakenIsReported: when another instance's backup carries the final backup's
// name, OTC answers 409 and the name never frees itself: the hook says so in a stable condition
// instead of waiting silently, and skipfinalbackup finishes the deletion.
func TestFinalBackupNameTakenIsReported(t *testing.T) {
	w := newWorld(t)
	mc := w.finalizeActive("uid-1", nil)
	st := mc.sync().Status
	other, err := w.sim.AddInstance(otcsim.InstanceSpec{
		Name: "someone-else", Engine: "MySQL", Version: "8.0", Flavor: "rds.mysql.c2.medium",
		VolumeType: "COMMON", VolumeSize: 40, AZs: []string{"eu-de-01"},
		VpcID: otcsim.SeedVPCID, SubnetID: otcsim.SeedSubnetID, SecurityGroupID: otcsim.SeedSecurityGroupID,
	})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = w.cloud.CreateBackup(ctx, other, reconcile.FinalBackupName(st.Name, st.ID), "taken by hand")
	require.NoError(t, err)
	w.clock.Advance(otcsim.DefaultDurations().Backup)
	w.sim.ResetCounters()

	first := mc.finalize()
	assert.False(t, first.Finalized)
	ready := condition(first.Status, v1alpha1.ConditionReady)
	assert.Equal(t, reconcile.ReasonFinalBackupNameTaken, ready.Reason)
	assert.Contains(t, ready.Message, reconcile.FinalBackupName(st.Name, st.ID))
	assert.Equal(t, metav1.ConditionFalse, condition(first.Status, v1alpha1.ConditionSynced).Status)
	assert.Equal(t, float64(300), first.ResyncAfterSeconds, "nothing changes until the user acts")
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpCreateBackup))
	second := mc.finalize()
	assert.Equal(t, first, second, "the same observation gives the same answer")
	assert.Zero(t, w.sim.Calls(otcsim.OpDeleteInstance))

	mc.spec()["skipfinalbackup"] = true
	assert.False(t, mc.finalize().Finalized, "released before OTC deleted the instance")
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpDeleteInstance))
	w.clock.Advance(otcsim.DefaultDurations().Delete)
	resp := mc.finalize()
	assert.True(t, resp.Finalized)
	assert.Len(t, w.sim.Instances(), 1, "only the other instance is left")
}

// TestRetainHoldsAGeneratedPassword: with deletionpolicy Retain the instance outlives the object,
// but the connection Secret holding its generated root password would be garbage-collected with
// it. The deletion waits, keeping the Secret, until the user says the password is saved.
func TestRetainHoldsAGeneratedPassword(t *testing.T) {
	w := newWorld(t)
	mc := w.finalizeActive("uid-1", func(spec map[string]any) {
		delete(spec, "password")
		spec["deletionpolicy"] = "Retain"
	})
	stored := string(mc.secret("my-rds-single-connection").Data[reconcile.KeyPassword])
	require.NotEmpty(t, stored)
	w.sim.ResetCounters()

	first := mc.finalize()
	assert.False(t, first.Finalized)
	ready := condition(first.Status, v1alpha1.ConditionReady)
	assert.Equal(t, reconcile.ReasonPasswordWouldBeLost, ready.Reason)
	assert.Contains(t, ready.Message, "my-rds-single-connection")
	assert.Contains(t, ready.Message, reconcile.AnnotationPasswordSaved)
	assert.Equal(t, float64(300), first.ResyncAfterSeconds)
	require.NotNil(t, mc.secret("my-rds-single-connection"), "the Secret stays while the deletion waits")
	assert.Equal(t, stored, string(mc.secret("my-rds-single-connection").Data[reconcile.KeyPassword]))
	second := mc.finalize()
	assert.Equal(t, first, second, "the same observation gives the same answer")
	assert.Empty(t, w.sim.CallCounts(), "Retain makes no call to OTC")

	mc.parent["metadata"].(map[string]any)["annotations"] = map[string]any{reconcile.AnnotationPasswordSaved: "true"}
	resp := mc.finalize()
	assert.False(t, resp.Finalized, "the release tag first")
	resp = mc.finalize()
	assert.True(t, resp.Finalized)
	assert.Equal(t, reconcile.ReasonRetained, condition(resp.Status, v1alpha1.ConditionReady).Reason)
	assert.Equal(t, 1, w.sim.MutatingCalls(), "only the release tag")
	require.Len(t, w.sim.Instances(), 1)
	assert.Equal(t, cloud.StatusActive, w.sim.Instances()[0].Status, "the instance is left alone")
}

// TestFinalizeBrokenInstance: OTC cannot back up a FAILED, FROZEN or STORAGE FULL instance, and
// none of these states passes by itself. The deletion stops with a condition and no backup call (it
// used to wait for ACTIVE for ever); skipfinalbackup deletes the instance. A stopped (SHUTDOWN)
// MySQL or PostgreSQL instance is started for its final backup instead (sync's
// TestFinalizeStoppedInstanceEndToEnd).
func TestFinalizeBrokenInstance(t *testing.T) {
	for _, status := range []string{cloud.StatusFailed, cloud.StatusFrozen, cloud.StatusStorageFull} {
		t.Run(status, func(t *testing.T) {
			w := newWorld(t)
			mc := w.finalizeActive("uid-1", nil)
			id := mc.sync().Status.ID
			w.sim.SetInstanceStatus(id, status)
			w.sim.ResetCounters()

			first := mc.finalize()
			assert.False(t, first.Finalized)
			ready := condition(first.Status, v1alpha1.ConditionReady)
			assert.Equal(t, reconcile.ReasonFinalBackupImpossible, ready.Reason)
			assert.Equal(t, "OTC cannot back up a "+status+" instance; set skipfinalbackup or deletionpolicy Retain to finish deleting.", ready.Message)
			assert.Equal(t, float64(300), first.ResyncAfterSeconds)
			second := mc.finalize()
			assert.Equal(t, first, second, "the same observation gives the same answer")
			assert.Zero(t, w.sim.MutatingCalls(), "no backup is attempted, nothing is deleted")

			mc.spec()["skipfinalbackup"] = true
			resp := mc.finalize()
			assert.False(t, resp.Finalized)
			assert.Equal(t, reconcile.ReasonDeleting, condition(resp.Status, v1alpha1.ConditionReady).Reason)
			assert.Equal(t, 1, w.sim.Calls(otcsim.OpDeleteInstance), "OTC deletes a "+status+" instance")
			w.clock.Advance(otcsim.DefaultDurations().Delete)
			resp = mc.finalize()
			assert.True(t, resp.Finalized)
			assert.Equal(t, 1, w.sim.Calls(otcsim.OpDeleteInstance))
			assert.Empty(t, w.sim.Instances())
		})
	}
}
