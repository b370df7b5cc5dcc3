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

// The attacks of issue #10 ("Ownership and tenancy"), each played over HTTP against the real SDK
// and the simulator as a user with kubectl rights in their own namespace only would. Each
// succeeded before instances carried ownership tags.

// tenant returns a Metacontroller for the Rds object namespace/name with this uid: the sample
// spec, edited by edit.
func (w *world) tenant(namespace, name, uid string, edit func(spec map[string]any)) *metacontroller {
	w.t.Helper()
	mc := w.newObject(edit)
	md := mc.parent["metadata"].(map[string]any)
	md["namespace"], md["name"], md["uid"] = namespace, name, uid
	return mc
}

// untilActive syncs, advancing the clock, until the instance is ACTIVE with its ownership tags and
// nothing in flight.
func (m *metacontroller) untilActive() *hookResponse {
	m.w.t.Helper()
	for range 10 {
		resp := m.sync()
		if in, ok := m.w.sim.Instance(resp.Status.ID); ok && resp.Status.Status == cloud.StatusActive &&
			resp.Status.Operation == nil && in.Tags[reconcile.TagOwnerUID] != "" {
			return m.sync()
		}
		m.w.clock.Advance(otcsim.DefaultDurations().Create)
	}
	m.w.t.Fatal("the instance never became ACTIVE")
	return nil
}

// setStatus replaces the parent's status as a user who may write it (or a forged backup) would.
func (m *metacontroller) setStatus(st v1alpha1.RdsStatus) { m.obj.SetStatus(st) }

// victim is the instance of rds1/my-rds-single, ACTIVE, with its ownership tags.
func (w *world) victim() (id string) {
	w.t.Helper()
	mc := w.tenant("rds1", "my-rds-single", "uid-victim", nil)
	return mc.untilActive().Status.ID
}

// TestAttackCopyAnotherNamespacesDatabase: an Rds in namespace evil names rds1's instance in
// restorefrom (by id or by name). It must get nothing: a stable refusal, no restore, no create.
func TestAttackCopyAnotherNamespacesDatabase(t *testing.T) {
	for _, byName := range []bool{false, true} {
		t.Run(map[bool]string{false: "by id", true: "by name"}[byName], func(t *testing.T) {
			w := newWorld(t)
			id := w.victim()
			victim, _ := w.sim.Instance(id)
			w.clock.Advance(time.Hour) // backups and binlogs to restore from
			source := id
			if byName {
				source = victim.Name
			}
			w.sim.ResetCounters()

			evil := w.tenant("evil", "copy", "uid-evil", func(spec map[string]any) {
				spec["password"] = "Evil-Passw0rd"
				spec["restorefrom"] = map[string]any{"instance": source, "restoretime": w.clock.Now().Add(-10 * time.Minute).UTC().Format(time.RFC3339)}
			})
			var resp *hookResponse
			for range 4 {
				resp = evil.sync()
				w.clock.Advance(10 * time.Second)
			}
			assert.Zero(t, w.sim.Calls(otcsim.OpRestoreToNew), "no copy of another namespace's data")
			assert.Zero(t, w.sim.MutatingCalls())
			assert.Len(t, w.sim.Instances(), 1)
			synced := condition(resp.Status, v1alpha1.ConditionSynced)
			assert.Equal(t, reconcile.ReasonRestoreSourceRefused, synced.Reason)
			assert.Equal(t, metav1.ConditionFalse, synced.Status)
			assert.NotContains(t, synced.Message, victim.PrivateIPs[0], "nothing of the other tenant's instance is told")
			again := evil.sync()
			assert.Equal(t, resp.Status.Conditions, again.Status.Conditions, "a stable condition")
		})
	}
}

// TestAttackAdoptAnotherNamespacesInstance: instanceid naming rds1's instance is refused, and with
// skipfinalbackup the object's deletion deletes nothing.
func TestAttackAdoptAnotherNamespacesInstance(t *testing.T) {
	w := newWorld(t)
	id := w.victim()
	before, _ := w.sim.Instance(id)
	w.sim.ResetCounters()

	evil := w.tenant("evil", "steal", "uid-evil", func(spec map[string]any) {
		spec["instanceid"], spec["skipfinalbackup"], spec["password"] = id, true, "Evil-Passw0rd"
	})
	evil.sync()
	resp := evil.sync()
	assert.Empty(t, resp.Status.ID, "not adopted")
	assert.False(t, resp.Status.Adopted)
	assert.Equal(t, reconcile.ReasonAdoptionRefused, condition(resp.Status, v1alpha1.ConditionSynced).Reason)
	assert.NotContains(t, condition(resp.Status, v1alpha1.ConditionSynced).Message, id, "nothing of the other's instance is told")
	assert.Nil(t, evil.secret("steal-connection"), "no connection data for another's instance")

	fin := evil.finalize()
	assert.True(t, fin.Finalized)
	assert.Zero(t, w.sim.MutatingCalls(), "nothing changed, nothing deleted")
	after, ok := w.sim.Instance(id)
	require.True(t, ok)
	assert.Equal(t, before, after)

	// The policy can be tightened further, and nothing at all is adopted under Never; with the
	// default, an instance without tags is adopted and gets this object's tags.
	free, err := w.sim.AddInstance(otcsim.InstanceSpec{Name: "unowned-db", Flavor: "rds.mysql.c2.medium", VolumeType: "COMMON", VolumeSize: 40})
	require.NoError(t, err)
	ok2 := w.tenant("evil", "mine", "uid-mine", func(spec map[string]any) { spec["instanceid"] = free })
	ok2.sync()
	resp = ok2.sync()
	assert.Equal(t, free, resp.Status.ID)
	tags := w.sim.Instances()[len(w.sim.Instances())-1].Tags
	assert.Equal(t, "uid-mine", tags[reconcile.TagOwnerUID])
}

// TestAttackRetainUndoneByRecreatingTheName: rds1/ret1 with deletionpolicy Retain is deleted and
// its instance kept. A new rds1/ret1 (new uid, default Delete, another password) must not take it
// over, write its password into a connection Secret, or delete it; adopting it explicitly with
// instanceid and its password works.
func TestAttackRetainUndoneByRecreatingTheName(t *testing.T) {
	w := newWorld(t)
	first := w.tenant("rds1", "ret1", "uid-ret1-a", func(spec map[string]any) {
		spec["deletionpolicy"], spec["password"] = "Retain", "First-Passw0rd"
	})
	id := first.untilActive().Status.ID
	conn := first.secret("ret1-connection")
	require.NotNil(t, conn)
	resp := first.finalize()
	require.False(t, resp.Finalized, "the release tag first")
	resp = first.finalize()
	require.True(t, resp.Finalized)
	retained, ok := w.sim.Instance(id)
	require.True(t, ok, "the instance is kept")
	assert.Equal(t, "uid-ret1-a", retained.Tags[reconcile.TagReleasedBy])
	w.sim.ResetCounters()

	second := w.tenant("rds1", "ret1", "uid-ret1-b", func(spec map[string]any) { spec["password"] = "Second-Passw0rd" })
	for range 3 {
		resp = second.sync()
		w.clock.Advance(time.Minute)
	}
	assert.Empty(t, resp.Status.ID, "not taken over")
	ready := condition(resp.Status, v1alpha1.ConditionReady)
	assert.Equal(t, reconcile.ReasonInstanceNameTaken, ready.Reason)
	assert.Contains(t, ready.Message, "instanceid "+id, "the namespace's own released instance: it says how to adopt it")
	assert.Nil(t, second.secret("ret1-connection"), "its password is not written as the instance's")
	assert.Zero(t, w.sim.MutatingCalls(), "nothing created, nothing changed")

	fin := second.finalize()
	assert.True(t, fin.Finalized)
	assert.Zero(t, w.sim.MutatingCalls(), "its deletion deletes nothing")
	after, ok := w.sim.Instance(id)
	require.True(t, ok, "the retained instance survives")
	assert.Equal(t, retained, after, "untouched")

	// Explicit adoption with instanceid and the instance's password works.
	third := w.tenant("rds1", "ret1", "uid-ret1-c", func(spec map[string]any) {
		spec["instanceid"], spec["password"] = id, "First-Passw0rd"
	})
	for range 3 {
		resp = third.sync()
	}
	assert.Equal(t, id, resp.Status.ID)
	assert.True(t, resp.Status.Adopted)
	assert.Equal(t, reconcile.ReasonAvailable, condition(resp.Status, v1alpha1.ConditionReady).Reason)
	assert.Equal(t, metav1.ConditionTrue, condition(resp.Status, v1alpha1.ConditionSynced).Status)
	assert.Equal(t, "First-Passw0rd", string(third.secret("ret1-connection").Data[reconcile.KeyPassword]))
	assert.Equal(t, conn.Data[reconcile.KeyHost], third.secret("ret1-connection").Data[reconcile.KeyHost])
	adopted, _ := w.sim.Instance(id)
	assert.Equal(t, "uid-ret1-c", adopted.Tags[reconcile.TagOwnerUID])
	assert.NotContains(t, adopted.Tags, reconcile.TagReleasedBy, "the earlier release tag is removed")
	assert.Equal(t, 2, w.sim.Calls(otcsim.OpTagsAction), "the adoption's tags, then the stale release tag's removal")
}

// TestAttackForgedStatusID: status.id pointing at another object's instance gets nothing from
// sync and deletes nothing in finalize.
func TestAttackForgedStatusID(t *testing.T) {
	w := newWorld(t)
	id := w.victim()
	before, _ := w.sim.Instance(id)
	w.sim.ResetCounters()

	evil := w.tenant("evil", "forged", "uid-evil", func(spec map[string]any) {
		spec["password"], spec["skipfinalbackup"] = "Evil-Passw0rd", true
	})
	evil.setStatus(v1alpha1.RdsStatus{ID: id})
	resp := evil.sync()
	ready := condition(resp.Status, v1alpha1.ConditionReady)
	assert.Equal(t, reconcile.ReasonInstanceNotFound, ready.Reason, "another's instance reads as one that does not exist")
	assert.NotContains(t, ready.Message, id)
	assert.Empty(t, resp.Status.Endpoint, "nothing of the instance is reported")
	assert.Nil(t, evil.secret("forged-connection"), "no connection data for another's instance")

	fin := evil.finalize()
	assert.True(t, fin.Finalized)
	assert.Equal(t, reconcile.ReasonDeleting, condition(fin.Status, v1alpha1.ConditionReady).Reason)
	assert.Equal(t, "The instance is gone.", condition(fin.Status, v1alpha1.ConditionReady).Message, "as for an instance OTC does not list")
	assert.Zero(t, w.sim.MutatingCalls(), "no backup, no delete, no tag")
	after, ok := w.sim.Instance(id)
	require.True(t, ok)
	assert.Equal(t, before, after)
}

// TestMigrationFromLegacyNames: instances created before ownership tags carry the legacy name and
// no tags. With status.id they are tagged and kept; without it (a create whose answer the old
// version lost) they are found by the legacy name and taken over. Nothing is created.
func TestMigrationFromLegacyNames(t *testing.T) {
	for _, withStatus := range []bool{true, false} {
		t.Run(map[bool]string{true: "status.id", false: "lost create"}[withStatus], func(t *testing.T) {
			w := newWorld(t)
			legacy := reconcile.LegacyInstanceName("rds1", "my-rds-single")
			id, err := w.sim.AddInstance(otcsim.InstanceSpec{Name: legacy, Flavor: "rds.mysql.c2.medium", VolumeType: "COMMON", VolumeSize: 40})
			require.NoError(t, err)
			w.sim.ResetCounters()
			mc := w.newObject(nil)
			if withStatus {
				mc.setStatus(v1alpha1.RdsStatus{ID: id, Name: legacy, Status: cloud.StatusActive})
			}
			resp := mc.sync()
			assert.Equal(t, id, resp.Status.ID)
			assert.Equal(t, 1, w.sim.Calls(otcsim.OpTagsAction), "the first change writes the ownership tags")
			in, _ := w.sim.Instance(id)
			assert.Equal(t, "6a3c7f0e-1d2b-4c5a-9e8f-0123456789ab", in.Tags[reconcile.TagOwnerUID])
			assert.Equal(t, "local", in.Tags[reconcile.TagOwnerCluster])
			for range 3 {
				resp = mc.sync()
			}
			assert.Equal(t, legacy, resp.Status.Name, "the instance keeps its name")
			assert.Equal(t, reconcile.ReasonAvailable, condition(resp.Status, v1alpha1.ConditionReady).Reason)
			assert.Zero(t, w.sim.Calls(otcsim.OpCreateInstance))
			assert.Len(t, w.sim.Instances(), 1)
			assert.Equal(t, 1, w.sim.Calls(otcsim.OpTagsAction), "the tags were written once, before any other change")
		})
	}
}

// TestLegacyRetainedInstanceIsNotTakenOverByANewObject: an instance the version before tags
// retained (deletionpolicy Retain) has its legacy name and no tags. An object created again under
// the same namespace/name a day later computes that name, but the instance is older than the
// object, so it cannot be its own: nothing is written to it, its name is reported taken, and
// adopting it by instanceid is the way to take it over.
func TestLegacyRetainedInstanceIsNotTakenOverByANewObject(t *testing.T) {
	w := newWorld(t)
	legacy := reconcile.LegacyInstanceName("rds1", "my-rds-single")
	id, err := w.sim.AddInstance(otcsim.InstanceSpec{Name: legacy, Flavor: "rds.mysql.c2.medium", VolumeType: "COMMON", VolumeSize: 40})
	require.NoError(t, err)
	w.clock.Advance(24 * time.Hour)
	w.sim.ResetCounters()
	mc := w.newObject(nil)
	mc.parent["metadata"].(map[string]any)["creationTimestamp"] = w.clock.Now().UTC().Format(time.RFC3339)
	var resp *hookResponse
	for range 3 {
		resp = mc.sync()
	}
	assert.Zero(t, w.sim.MutatingCalls(), "no tags, no create")
	assert.Empty(t, resp.Status.ID)
	ready := condition(resp.Status, v1alpha1.ConditionReady)
	assert.Equal(t, reconcile.ReasonInstanceNameTaken, ready.Reason)
	assert.NotContains(t, ready.Message, id, "an untagged instance is not proven the namespace's: not named")
	assert.Contains(t, ready.Message, "adopt it: set instanceid to its id", "how to adopt it")
	in, _ := w.sim.Instance(id)
	assert.Empty(t, in.Tags)
}

// TestDuplicateInstancesAreReported: a create race between two replicas left a second untagged
// instance with the object's name. Before the tags make the status one ours, the controller looks
// once: the other is reported with its id, never deleted, and nothing more is created. The
// report ends when the other instance is gone.
func TestDuplicateInstancesAreReported(t *testing.T) {
	w := newWorld(t)
	mc := w.newObject(nil)
	mc.sync()
	resp := mc.sync()
	id := resp.Status.ID
	require.NotEmpty(t, id)
	other, err := w.sim.AddInstance(otcsim.InstanceSpec{Name: "rds-race-loser", Flavor: "rds.mysql.c2.medium", VolumeType: "COMMON", VolumeSize: 40})
	require.NoError(t, err)
	require.NoError(t, w.sim.SetInstanceName(other, resp.Status.Name), "OTC lets instances share a name")
	w.sim.ResetCounters()

	resp = mc.sync()
	assert.Equal(t, id, resp.Status.ID, "the one in status is kept")
	assert.Equal(t, []string{other}, resp.Status.Duplicates)
	dup := condition(resp.Status, v1alpha1.ConditionInstanceDuplicates)
	require.NotNil(t, dup)
	assert.Equal(t, reconcile.ReasonDuplicateInstances, dup.Reason)
	assert.Contains(t, dup.Message, other)
	w.clock.Advance(otcsim.DefaultDurations().Create)
	for range 3 {
		resp = mc.sync()
	}
	assert.Equal(t, []string{other}, resp.Status.Duplicates, "still reported")
	assert.Equal(t, reconcile.ReasonAvailable, condition(resp.Status, v1alpha1.ConditionReady).Reason)
	assert.Zero(t, w.sim.Calls(otcsim.OpDeleteInstance), "never deleted by the controller")
	assert.Zero(t, w.sim.Calls(otcsim.OpCreateInstance), "nothing more created")
	assert.Equal(t, 1, w.sim.MutatingCalls(), "only the ownership tags of the kept one")
	loser, _ := w.sim.Instance(other)
	assert.Empty(t, loser.Tags, "the other is left as it is")

	// The user deletes it in OTC: the report ends.
	_, err = w.cloud.DeleteInstance(context.Background(), other)
	require.NoError(t, err)
	w.clock.Advance(otcsim.DefaultDurations().Delete)
	resp = mc.sync()
	assert.Empty(t, resp.Status.Duplicates)
	assert.Nil(t, condition(resp.Status, v1alpha1.ConditionInstanceDuplicates))

	// Both answers lost: two untagged instances with the name and no status.id. The older is
	// taken over, the other reported.
	w2 := newWorld(t)
	name := reconcile.InstanceName("local", "rds1", "my-rds-single")
	older, err := w2.sim.AddInstance(otcsim.InstanceSpec{Name: name, Flavor: "rds.mysql.c2.medium", VolumeType: "COMMON", VolumeSize: 40})
	require.NoError(t, err)
	w2.clock.Advance(time.Minute)
	newer, err := w2.sim.AddInstance(otcsim.InstanceSpec{Name: "rds-race-2", Flavor: "rds.mysql.c2.medium", VolumeType: "COMMON", VolumeSize: 40})
	require.NoError(t, err)
	require.NoError(t, w2.sim.SetInstanceName(newer, name))
	mc2 := w2.newObject(nil)
	resp = mc2.sync()
	assert.Equal(t, older, resp.Status.ID)
	assert.Equal(t, []string{newer}, resp.Status.Duplicates)
	assert.Zero(t, w2.sim.Calls(otcsim.OpCreateInstance))
}

// The attacks of issue #17 items 3, 5 and 6: a refusal tells nothing of another's instance, and
// finalize trusts no status field that only the status vouches for.

// unknownID is a well-formed OTC instance id that the simulator does not know.
const unknownID = "00000000000000000000000000000000in01"

// refusal is what an answer says in Ready and Synced, without the transition times.
func refusal(st v1alpha1.RdsStatus) [2]string {
	ready, synced := condition(st, v1alpha1.ConditionReady), condition(st, v1alpha1.ConditionSynced)
	return [2]string{ready.Reason + ": " + ready.Message, synced.Reason + ": " + synced.Message}
}

// TestAttackRefusalTellsNothing: whatever a request names, another object's instance and one that
// does not exist are answered alike, and no condition names the other instance (issue #17 item 3).
func TestAttackRefusalTellsNothing(t *testing.T) {
	w := newWorld(t)
	id := w.victim()
	victim, _ := w.sim.Instance(id)
	told := func(answer [2]string) {
		t.Helper()
		for _, s := range answer {
			assert.NotContains(t, s, id, "the other instance's id")
			assert.NotContains(t, s, victim.Name, "the other instance's name")
			assert.NotContains(t, s, "my-rds-single", "the other object's name")
			assert.NotContains(t, s, "rds1", "the other object's namespace")
		}
	}

	t.Run("forged status.id", func(t *testing.T) {
		answer := func(statusID string) [2]string {
			evil := w.tenant("evil", "forged", "uid-evil", func(spec map[string]any) { spec["password"] = "Evil-Passw0rd" })
			evil.setStatus(v1alpha1.RdsStatus{ID: statusID})
			resp := evil.sync()
			assert.Empty(t, resp.Status.Endpoint)
			assert.Empty(t, resp.Status.Status)
			return refusal(resp.Status)
		}
		theirs := answer(id)
		told(theirs)
		assert.Equal(t, answer(unknownID), theirs, "another's instance reads as one that does not exist")
	})

	t.Run("instanceid", func(t *testing.T) {
		answer := func(instanceID string) [2]string {
			evil := w.tenant("evil", "steal", "uid-evil", func(spec map[string]any) {
				spec["instanceid"], spec["password"] = instanceID, "Evil-Passw0rd"
			})
			return refusal(evil.sync().Status)
		}
		theirs := answer(id)
		told(theirs)
		assert.Equal(t, answer(unknownID), theirs, "another's instance reads as one that does not exist")
	})

	t.Run("restorefrom", func(t *testing.T) {
		answer := func(source string) [2]string {
			evil := w.tenant("evil", "copy", "uid-evil", func(spec map[string]any) {
				spec["password"] = "Evil-Passw0rd"
				spec["restorefrom"] = map[string]any{"instance": source, "restoretime": w.clock.Now().Add(-10 * time.Minute).UTC().Format(time.RFC3339)}
			})
			var resp *hookResponse
			for range 3 {
				resp = evil.sync()
			}
			return refusal(resp.Status)
		}
		theirs := answer(id)
		told(theirs)
		assert.Equal(t, answer(unknownID), theirs, "another's instance reads as one that does not exist")
		assert.Equal(t, answer(victim.Name), theirs, "by name too")
	})

	t.Run("the object's name, another uid", func(t *testing.T) {
		// A forged /sync for rds1/my-rds-single with a uid of its own finds the victim's instance
		// under the name it computes: it learns that the name is taken, and nothing of the instance.
		w.sim.ResetCounters()
		forged := w.tenant("rds1", "my-rds-single", "uid-forged", nil)
		resp := forged.sync()
		ready := condition(resp.Status, v1alpha1.ConditionReady)
		assert.Equal(t, reconcile.ReasonInstanceNameTaken, ready.Reason)
		assert.NotContains(t, ready.Message, id)
		assert.NotContains(t, ready.Message, "instanceid", "adopting another live object's instance is refused: no such advice")
		assert.Contains(t, ready.Message, "another name", "advice that leads somewhere")
		assert.Zero(t, w.sim.MutatingCalls())
		assert.Contains(t, w.logText(), `"msg":"instance name taken"`, "the operator's log keeps the details")
		assert.Contains(t, w.logText(), `"instance":"`+id+`"`)
	})
}

// TestAttackForgedFinalBackup: status.finalBackup naming a backup the controller did not start for
// this deletion (an automated one, a manual one of another name, or one of its name made before
// the deletion began) is not taken as the final backup: a proper one is made before the delete
// (issue #17 item 5).
func TestAttackForgedFinalBackup(t *testing.T) {
	d := otcsim.DefaultDurations()
	backupOf := func(w *world, id, typ string) otcsim.BackupView {
		for _, b := range w.sim.Backups() {
			if b.InstanceID == id && b.Type == typ {
				return b
			}
		}
		w.t.Fatalf("no %s backup of %s", typ, id)
		return otcsim.BackupView{}
	}
	cases := map[string]func(w *world, st v1alpha1.RdsStatus) otcsim.BackupView{
		"an automated backup": func(w *world, st v1alpha1.RdsStatus) otcsim.BackupView {
			return backupOf(w, st.ID, "auto")
		},
		"a manual backup of another name": func(w *world, st v1alpha1.RdsStatus) otcsim.BackupView {
			_, err := w.cloud.CreateBackup(context.Background(), st.ID, "before-the-deletion", "by hand")
			require.NoError(t, err)
			w.clock.Advance(d.Backup)
			return backupOf(w, st.ID, "manual")
		},
	}
	for desc, forge := range cases {
		t.Run(desc, func(t *testing.T) {
			w := newWorld(t)
			mc := w.finalizeActive("uid-1", nil)
			st := mc.sync().Status
			w.clock.Advance(time.Hour)
			b := forge(w, st)
			require.Equal(t, cloud.BackupCompleted, b.Status)
			st.FinalBackup = &v1alpha1.Backup{ID: b.ID, Name: b.Name, Status: cloud.BackupCompleted}
			mc.setStatus(st)
			mc.obj.Delete(w.clock.Now())
			w.sim.ResetCounters()

			resp := mc.finalize()
			assert.False(t, resp.Finalized)
			assert.Zero(t, w.sim.Calls(otcsim.OpDeleteInstance), "no delete without the final backup")
			assert.Equal(t, 1, w.sim.Calls(otcsim.OpCreateBackup), "a proper final backup is started")
			assert.Equal(t, reconcile.FinalBackupName(st.Name, st.ID), resp.Status.FinalBackup.Name)
			w.clock.Advance(d.Backup)
			mc.finalize()
			w.clock.Advance(d.Delete)
			resp = mc.finalize()
			assert.True(t, resp.Finalized)
			assert.Equal(t, 1, w.sim.Calls(otcsim.OpCreateBackup))
		})
	}

	t.Run("a backup of its name made before the deletion began", func(t *testing.T) {
		w := newWorld(t)
		mc := w.finalizeActive("uid-1", nil)
		st := mc.sync().Status
		name := reconcile.FinalBackupName(st.Name, st.ID)
		_, err := w.cloud.CreateBackup(context.Background(), st.ID, name, "by hand")
		require.NoError(t, err)
		w.clock.Advance(d.Backup + time.Hour)
		mc.obj.Delete(w.clock.Now())
		w.sim.ResetCounters()

		mc.finalize()
		resp := mc.finalize()
		assert.False(t, resp.Finalized)
		assert.Zero(t, w.sim.Calls(otcsim.OpDeleteInstance), "a backup older than the deletion is not its final backup")
		ready := condition(resp.Status, v1alpha1.ConditionReady)
		assert.Equal(t, reconcile.ReasonFinalBackupNameTaken, ready.Reason)
		assert.Contains(t, ready.Message, "before the deletion began")
	})
}

// TestAttackForgedStatusIDInFinalize: status.id naming an instance OTC does not list (or another
// object's) makes finalize look for the object's instance by its names and tags; the one found is
// backed up and deleted as usual, and the object goes only when no instance of its own is left
// (issue #17 item 6).
func TestAttackForgedStatusIDInFinalize(t *testing.T) {
	for _, forged := range []string{"unknown", "another object's"} {
		t.Run(forged, func(t *testing.T) {
			w := newWorld(t)
			d := otcsim.DefaultDurations()
			other := ""
			if forged != "unknown" {
				other = w.tenant("rds2", "db", "uid-other", nil).untilActive().Status.ID
			}
			mc := w.finalizeActive("uid-1", nil)
			st := mc.sync().Status
			own := st.ID
			st.ID = unknownID
			if other != "" {
				st.ID = other
			}
			mc.setStatus(st)
			w.sim.ResetCounters()

			resp := mc.finalize()
			assert.False(t, resp.Finalized, "the object's instance still exists")
			assert.Equal(t, own, resp.Status.ID, "status says the instance found")
			assert.Equal(t, 1, w.sim.Calls(otcsim.OpCreateBackup), "its final backup")
			w.clock.Advance(d.Backup)
			assert.False(t, mc.finalize().Finalized, "released before OTC deleted the instance")
			assert.Equal(t, 1, w.sim.Calls(otcsim.OpDeleteInstance))
			w.clock.Advance(d.Delete)
			resp = mc.finalize()
			assert.True(t, resp.Finalized)
			_, ok := w.sim.Instance(own)
			assert.False(t, ok, "the object's instance is deleted")
			if other != "" {
				_, ok = w.sim.Instance(other)
				assert.True(t, ok, "the other object's instance is untouched")
			}
		})
	}
}
