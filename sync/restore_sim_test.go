package reconcile_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/hook"
	"github.com/mcsps/rds-lambda-controller/test/metacontroller"
	"github.com/mcsps/rds-lambda-controller/test/testutil"
)

// restoreWorld runs one Rds object through the reconciler, the real OTC adapter and the simulator,
// with the Metacontroller stand-in feeding each answer back as the next request.
type restoreWorld struct {
	t     *testing.T
	sim   *otcsim.Sim
	clock *otcsim.ManualClock
	r     *reconcile.Reconciler
	// mc is the object as Metacontroller and the cluster hold it.
	mc *metacontroller.Object
}

func newRestoreWorld(t *testing.T) *restoreWorld { return newRestoreWorldWith(t, nil) }

// newRestoreWorldWith is newRestoreWorld with the reconciler's configuration changed by configure.
func newRestoreWorldWith(t *testing.T, configure func(*reconcile.Config)) *restoreWorld {
	t.Helper()
	clock := otcsim.NewManualClock(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC))
	srv := otcsim.NewServer(otcsim.Options{Clock: clock})
	t.Cleanup(srv.Close)
	client := testutil.Login(t, srv, nil)
	rc := reconcile.Config{Cloud: client, Now: clock.Now}
	if configure != nil {
		configure(&rc)
	}
	return &restoreWorld{t: t, sim: srv.Sim, clock: clock, r: reconcile.New(rc)}
}

// restoreSpec is a single MySQL instance in the simulator's seed network, with automated backups.
func restoreSpec() v1alpha1.RdsSpec {
	return v1alpha1.RdsSpec{
		Datastoretype: "MySQL", Datastoreversion: "8.0", Flavorref: "rds.mysql.n1.large.2",
		Volumetype: "CLOUDSSD", Volumesize: 40, Availabilityzone: "eu-de-01", Region: "eu-de",
		Vpc: otcsim.SeedVPCName, Subnet: otcsim.SeedSubnetName, Securitygroup: otcsim.SeedSecurityGroupName,
		Backupkeepdays: 7, Backupstarttime: "01:00-02:00", Password: "Restore-Passw0rd",
	}
}

// object starts a new Rds object in namespace team-a with no status and no children.
func (w *restoreWorld) object(name string, spec v1alpha1.RdsSpec) { w.objectIn("team-a", name, spec) }

// objectIn starts a new Rds object in namespace ns with no status and no children.
func (w *restoreWorld) objectIn(ns, name string, spec v1alpha1.RdsSpec) {
	w.mc = metacontroller.NewRds(v1alpha1.Rds{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + name), Generation: 1},
		Spec:       spec,
	})
}

// edit changes the spec as kubectl would: the generation moves.
func (w *restoreWorld) edit(change func(*v1alpha1.RdsSpec)) { w.mc.EditRds(change) }

// status is the stored status.
func (w *restoreWorld) status() *v1alpha1.RdsStatus {
	st := w.mc.Status()
	return &st
}

func (w *restoreWorld) sync() *hook.SyncResponse {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return w.syncCtx(ctx)
}

// syncCtx is sync with the caller's context.
func (w *restoreWorld) syncCtx(ctx context.Context) *hook.SyncResponse {
	w.t.Helper()
	resp, err := w.mc.Sync(ctx, w.r)
	require.NoError(w.t, err)
	return resp
}

// finalize deletes the object, if it is not being deleted yet, and calls finalize.
func (w *restoreWorld) finalize() *hook.FinalizeResponse {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w.mc.Delete(w.clock.Now())
	resp, err := w.mc.Finalize(ctx, w.r)
	require.NoError(w.t, err)
	return resp
}

// syncUntilActive syncs, advancing the clock between calls, until the instance is ACTIVE with no
// operation in flight.
func (w *restoreWorld) syncUntilActive() {
	w.t.Helper()
	for range 20 {
		w.sync()
		if st := w.status(); st.Status == otcsim.StatusActive && st.Operation == nil {
			return
		}
		w.clock.Advance(10 * time.Second)
	}
	w.t.Fatalf("not ACTIVE: %+v", w.status())
}

func (w *restoreWorld) synced() v1alpha1.Condition {
	w.t.Helper()
	for _, c := range w.status().Conditions {
		if c.Type == v1alpha1.ConditionSynced {
			return c
		}
	}
	w.t.Fatal("no Synced condition")
	return v1alpha1.Condition{}
}

// created makes an ACTIVE instance through the hooks and lets an hour of backups and binlogs pass.
func (w *restoreWorld) created() string {
	w.object("orders", restoreSpec())
	w.syncUntilActive()
	w.clock.Advance(time.Hour)
	w.sync()
	require.NotNil(w.t, w.status().Restore)
	require.Equal(w.t, v1alpha1.RestoreSkipped, w.status().Restore.Result)
	return w.status().ID
}

func TestE2EPointInTimeRestoreOnce(t *testing.T) {
	w := newRestoreWorld(t)
	id := w.created()
	at := w.clock.Now().Add(-30 * time.Minute).UTC().Format(time.RFC3339)
	w.sim.ResetCounters()

	w.edit(func(s *v1alpha1.RdsSpec) { s.Backuprestoretime = at })
	w.sync()
	require.Equal(t, 1, w.sim.Calls(otcsim.OpRestorePITR), "one restore")
	assert.Equal(t, v1alpha1.RestoreIssued, w.status().Restore.Result)
	require.NotNil(t, w.status().Operation)
	assert.Equal(t, reconcile.OpRestore, w.status().Operation.Type)
	in, _ := w.sim.Instance(id)
	assert.Equal(t, otcsim.StatusRestoring, in.Status)

	w.sync() // RESTORING: nothing else happens
	w.clock.Advance(otcsim.DefaultDurations().Restore + 2*time.Second)
	w.syncUntilActive()
	assert.Equal(t, v1alpha1.RestoreCompleted, w.status().Restore.Result, "the job confirmed it")
	assert.Equal(t, at, w.status().Restore.Time)

	// The same request again, after more time: nothing more.
	w.clock.Advance(time.Hour)
	w.sync()
	w.sync()
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpRestorePITR))
	assert.Equal(t, 1, w.sim.MutatingCalls(), "the restore was the only change")
	assert.Equal(t, metav1.ConditionTrue, w.synced().Status)
}

func TestE2ERestoreTimeRefused(t *testing.T) {
	w := newRestoreWorld(t)
	w.created()

	t.Run("out of range", func(t *testing.T) {
		w.sim.ResetCounters()
		before := w.clock.Now().Add(-48 * time.Hour).UTC().Format(time.RFC3339)
		w.edit(func(s *v1alpha1.RdsSpec) { s.Backuprestoretime = before })
		w.sync()
		first := w.synced()
		assert.Equal(t, reconcile.ReasonRestoreTimeOutOfRange, first.Reason)
		assert.Equal(t, metav1.ConditionFalse, first.Status)
		assert.Equal(t, v1alpha1.RestoreOutOfRange, w.status().Restore.Result)
		w.clock.Advance(time.Minute)
		w.sync()
		assert.Equal(t, first, w.synced(), "the same condition, word for word")
		assert.Equal(t, 1, w.sim.Calls(otcsim.OpListRestoreTimes), "remembered, not asked again")
		assert.Zero(t, w.sim.Calls(otcsim.OpRestorePITR))
		assert.Zero(t, w.sim.MutatingCalls())
	})
	t.Run("invalid time", func(t *testing.T) {
		w.sim.ResetCounters()
		w.edit(func(s *v1alpha1.RdsSpec) { s.Backuprestoretime = "2026-13-45T25:00:00Z" })
		w.sync()
		assert.Equal(t, reconcile.ReasonInvalidSpec, w.synced().Reason)
		assert.Empty(t, w.sim.CallCounts(), "no call at all")
	})
}

func TestE2ERestoreLostAnswer(t *testing.T) {
	w := newRestoreWorld(t)
	id := w.created()
	w.sim.ResetCounters()
	w.sim.AddFault(otcsim.Fault{Op: otcsim.OpRestorePITR, Kind: otcsim.FaultCommitThenDrop, Count: 1})

	at := w.clock.Now().Add(-20 * time.Minute).UTC().Format(time.RFC3339)
	w.edit(func(s *v1alpha1.RdsSpec) { s.Backuprestoretime = at })
	w.sync()
	assert.Equal(t, v1alpha1.RestoreIssued, w.status().Restore.Result, "recorded as issued although the answer was lost")
	in, _ := w.sim.Instance(id)
	assert.Equal(t, otcsim.StatusRestoring, in.Status, "OTC did restore")

	for range 5 {
		w.clock.Advance(5 * time.Second)
		w.sync()
	}
	w.syncUntilActive()
	w.sync()
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpRestorePITR), "exactly once")
	assert.Equal(t, 1, w.sim.MutatingCalls())
	assert.Equal(t, v1alpha1.RestoreIssued, w.status().Restore.Result, "no job to confirm it: it stays Issued")
}

func TestE2ERestoreIntoNewInstance(t *testing.T) {
	cases := map[string]struct {
		reason string
		from   func(sourceID, backupID string, now time.Time) *v1alpha1.RestoreFrom
		fault  bool
	}{
		"from a point in time": {
			reason: "a time within the source's periods",
			from: func(src, _ string, now time.Time) *v1alpha1.RestoreFrom {
				return &v1alpha1.RestoreFrom{Instance: src, Restoretime: now.Add(-10 * time.Minute).UTC().Format(time.RFC3339)}
			},
		},
		"from a backup, source by name": {
			reason: "the source's automated backup",
			from: func(_, backup string, _ time.Time) *v1alpha1.RestoreFrom {
				return &v1alpha1.RestoreFrom{Instance: "legacy-orders", Backupid: backup}
			},
		},
		"lost answer": {
			reason: "the deterministic name finds the instance the lost restore made",
			from: func(src, _ string, now time.Time) *v1alpha1.RestoreFrom {
				return &v1alpha1.RestoreFrom{Instance: src, Restoretime: now.Add(-10 * time.Minute).UTC().Format(time.RFC3339)}
			},
			fault: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := newRestoreWorld(t)
			src, err := w.sim.AddInstance(otcsim.InstanceSpec{Name: "legacy-orders", VolumeSize: 40, Tags: ownedBy("team-a", "orders")})
			require.NoError(t, err)
			w.clock.Advance(time.Hour)
			var backupID string
			for _, b := range w.sim.Backups() {
				if b.InstanceID == src {
					backupID = b.ID
				}
			}
			require.NotEmpty(t, backupID)
			w.sim.ResetCounters()
			if tc.fault {
				w.sim.AddFault(otcsim.Fault{Op: otcsim.OpRestoreToNew, Kind: otcsim.FaultCommitThenDrop, Count: 1})
			}

			spec := restoreSpec()
			spec.Restorefrom = tc.from(src, backupID, w.clock.Now())
			w.object("orders-copy", spec)
			w.syncUntilActive()
			w.clock.Advance(time.Hour)
			w.sync()
			w.sync()

			assert.Equal(t, 1, w.sim.Calls(otcsim.OpRestoreToNew), tc.reason)
			assert.Zero(t, w.sim.Calls(otcsim.OpCreateInstance), "never a plain create")
			assert.Equal(t, 2, w.sim.MutatingCalls(), "the restore, then its ownership tags")
			require.Len(t, w.sim.Instances(), 2, "the source and its copy")
			in, ok := w.sim.Instance(w.status().ID)
			require.True(t, ok)
			assert.Equal(t, reconcile.InstanceName("local", "team-a", "orders-copy"), in.Name)
			assert.Equal(t, ownedBy("team-a", "orders-copy"), in.Tags)
			assert.Equal(t, otcsim.StatusActive, in.Status)
			assert.Equal(t, "Restore-Passw0rd", string(w.mc.Secrets["orders-copy-connection"].Data[reconcile.KeyPassword]))
			assert.NotEmpty(t, w.mc.Secrets["orders-copy-connection"].Data[reconcile.KeyHost])
		})
	}
}

func TestE2EAdoption(t *testing.T) {
	t.Run("adopted and handed back untouched", func(t *testing.T) {
		w := newRestoreWorld(t)
		id, err := w.sim.AddInstance(otcsim.InstanceSpec{Name: "legacy-orders", VolumeSize: 40, Flavor: "rds.mysql.n1.large.2", VolumeType: "CLOUDSSD"})
		require.NoError(t, err)
		before, _ := w.sim.Instance(id)
		w.sim.ResetCounters()

		spec := restoreSpec()
		spec.Instanceid, spec.Deletionpolicy = id, v1alpha1.DeletionPolicyRetain
		spec.Backupkeepdays, spec.Backupstarttime = 0, ""
		spec.Backuprestoretime = w.clock.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
		w.object("legacy", spec)
		for range 3 {
			w.sync()
			w.clock.Advance(time.Minute)
		}
		st := w.status()
		assert.Equal(t, id, st.ID)
		assert.True(t, st.Adopted)
		assert.Equal(t, v1alpha1.RestoreSkipped, st.Restore.Result, "a restore time set at adoption is not a request")
		assert.Equal(t, metav1.ConditionTrue, w.synced().Status, w.synced().Message)
		conn := w.mc.Secrets["legacy-connection"]
		require.NotNil(t, conn)
		assert.Equal(t, "Restore-Passw0rd", string(conn.Data[reconcile.KeyPassword]))
		assert.Equal(t, 1, w.sim.MutatingCalls(), "adoption creates nothing and changes only the ownership tags")
		assert.Equal(t, 1, w.sim.Calls(otcsim.OpTagsAction))
		assert.Len(t, w.sim.Instances(), 1)

		w.sim.ResetCounters()
		resp := w.finalize()
		assert.False(t, resp.Finalized, "Retain releases the instance first")
		resp = w.finalize()
		assert.True(t, resp.Finalized)
		assert.Equal(t, 1, w.sim.MutatingCalls(), "Retain changes only the tags")
		after, ok := w.sim.Instance(id)
		require.True(t, ok)
		assert.Equal(t, map[string]string{
			"rds-owner-cluster": "local", "rds-owner-namespace": "team-a", "rds-owner-name": "legacy",
			"rds-owner-uid": "uid-legacy", "rds-released-by": "uid-legacy",
		}, after.Tags, "released by the object that adopted it")
		after.Tags = before.Tags
		assert.Equal(t, before, after, "otherwise untouched")
	})
	t.Run("mismatch is not adopted and not deleted", func(t *testing.T) {
		w := newRestoreWorld(t)
		id, err := w.sim.AddInstance(otcsim.InstanceSpec{Name: "legacy-pg", Engine: "PostgreSQL", Version: "16", Flavor: "rds.pg.n1.large.2"})
		require.NoError(t, err)
		w.sim.ResetCounters()

		spec := restoreSpec()
		spec.Instanceid = id
		w.object("legacy", spec)
		w.sync()
		assert.Empty(t, w.status().ID)
		assert.Equal(t, reconcile.ReasonAdoptionMismatch, w.synced().Reason)
		resp := w.finalize()
		assert.True(t, resp.Finalized, "nothing was taken over, so there is nothing to delete")
		assert.Zero(t, w.sim.MutatingCalls())
		_, ok := w.sim.Instance(id)
		assert.True(t, ok)
	})
}

func TestE2ERestoreBusyAndFailed(t *testing.T) {
	t.Run("busy instance: the restore waits, then runs once", func(t *testing.T) {
		w := newRestoreWorld(t)
		id := w.created()
		w.sim.ResetCounters()
		w.sim.SetInstanceStatus(id, otcsim.StatusBackingUp)
		at := w.clock.Now().Add(-15 * time.Minute).UTC().Format(time.RFC3339)
		w.edit(func(s *v1alpha1.RdsSpec) { s.Backuprestoretime = at })
		w.sync()
		w.sync()
		assert.Equal(t, reconcile.ReasonRestoreWaiting, w.synced().Reason)
		assert.Equal(t, v1alpha1.RestoreSkipped, w.status().Restore.Result, "not handled yet")
		assert.Zero(t, w.sim.MutatingCalls())

		w.sim.SetInstanceStatus(id, otcsim.StatusActive)
		w.sync()
		w.clock.Advance(otcsim.DefaultDurations().Restore + 2*time.Second)
		w.syncUntilActive()
		w.sync()
		assert.Equal(t, 1, w.sim.Calls(otcsim.OpRestorePITR))
		assert.Equal(t, v1alpha1.RestoreCompleted, w.status().Restore.Result)
	})
	t.Run("failed restore is reported, not retried", func(t *testing.T) {
		w := newRestoreWorld(t)
		id := w.created()
		w.sim.ResetCounters()
		at := w.clock.Now().Add(-15 * time.Minute).UTC().Format(time.RFC3339)
		w.edit(func(s *v1alpha1.RdsSpec) { s.Backuprestoretime = at })
		w.sync()
		w.clock.Advance(2 * time.Second) // OTC knows the job after its first second
		w.sim.SetInstanceStatus(id, otcsim.StatusFailed)
		w.sync()
		w.clock.Advance(time.Minute)
		w.sync()
		assert.Equal(t, v1alpha1.RestoreFailed, w.status().Restore.Result)
		assert.Equal(t, reconcile.ReasonRestoreFailed, w.synced().Reason)
		assert.Nil(t, w.status().Operation)
		assert.Equal(t, 1, w.sim.Calls(otcsim.OpRestorePITR))
	})
}

// TestE2ERestoreTimeAtCreationIsNotARequest: an object created with a backuprestoretime (copied
// from another object, or exported from the original operator) never restores its new instance,
// even once the time lies within the instance's restorable periods.
func TestE2ERestoreTimeAtCreationIsNotARequest(t *testing.T) {
	w := newRestoreWorld(t)
	spec := restoreSpec()
	spec.Backuprestoretime = w.clock.Now().Add(10 * time.Minute).UTC().Format(time.RFC3339)
	w.object("orders", spec)
	w.syncUntilActive()
	w.clock.Advance(2 * time.Hour) // the time is restorable now
	w.sync()
	w.sync()
	assert.Zero(t, w.sim.Calls(otcsim.OpRestorePITR))
	assert.Zero(t, w.sim.Calls(otcsim.OpListRestoreTimes), "not even looked at")
	assert.Equal(t, &v1alpha1.RestoreStatus{Time: spec.Backuprestoretime, Result: v1alpha1.RestoreSkipped}, w.status().Restore)
	assert.Equal(t, metav1.ConditionTrue, w.synced().Status)
}

// ownedBy are the ownership tags of the Rds object namespace/name (uid "uid-"+name) in the
// simulator's cluster "local".
func ownedBy(namespace, name string) map[string]string {
	return map[string]string{
		reconcile.TagOwnerCluster: "local", reconcile.TagOwnerNamespace: namespace, reconcile.TagOwnerName: name, reconcile.TagOwnerUID: "uid-" + name,
	}
}
