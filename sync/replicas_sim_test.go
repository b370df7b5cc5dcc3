package reconcile_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/hook"
)

// replicas are the read replicas of the world's instance OTC lists, by their rds-replica tag (or,
// untagged, their OTC name).
func (w *day2World) replicas() map[string][]otcsim.InstanceView {
	w.t.Helper()
	out := map[string][]otcsim.InstanceView{}
	for _, v := range w.sim.Instances() {
		if v.Type != otcsim.TypeReplica {
			continue
		}
		require.Equal(w.t, w.status().ID, v.ReplicaOf, "a replica only of the object's own instance")
		key := v.Tags[reconcile.TagReplica]
		if key == "" {
			key = v.Name
		}
		out[key] = append(out[key], v)
	}
	return out
}

// syncOneChange makes one call and checks it made at most one change in OTC.
func (w *day2World) syncOneChange() *hook.SyncResponse {
	w.t.Helper()
	before := w.sim.MutatingCalls()
	resp := w.sync()
	require.LessOrEqual(w.t, w.sim.MutatingCalls()-before, 1, "at most one change per call")
	return resp
}

// settleReplicas calls until the status reports every declared replica ACTIVE with no operation
// in flight, moving the clock on after each call; at most n calls.
func (w *day2World) settleReplicas(n int) {
	w.t.Helper()
	for range n {
		resp := w.syncOneChange()
		st := w.status()
		if st.Operation == nil && len(st.ReadReplicas) == len(w.mc.Rds().Spec.Readreplicas) &&
			!slices.ContainsFunc(st.ReadReplicas, func(r v1alpha1.ReadReplicaStatus) bool { return r.Status != "ACTIVE" }) &&
			resp.ResyncAfterSeconds > 60 {
			return
		}
		w.clock.Advance(min(time.Duration(resp.ResyncAfterSeconds)*time.Second, 10*time.Second))
	}
	w.t.Fatalf("the read replicas did not settle: %+v, conditions %+v", w.status().ReadReplicas, w.status().Conditions)
}

func (w *day2World) connectionSecret() *corev1.Secret {
	w.t.Helper()
	for _, c := range w.last.Children {
		if s, ok := c.(*corev1.Secret); ok && s.Name == w.status().ConnectionSecret {
			return s
		}
	}
	w.t.Fatal("no connection Secret in the answer")
	return nil
}

func twoReplicas(s *v1alpha1.RdsSpec) {
	s.Readreplicas = []v1alpha1.ReadReplica{
		{Name: "r1", Flavorref: "rds.mysql.n1.large.2.rr", Availabilityzone: "eu-de-02"},
		{Name: "r2", Flavorref: "rds.mysql.n1.large.2.rr", Availabilityzone: "eu-de-03"},
	}
}

// TestReadReplicasEndToEnd: through the real SDK and the simulator, two replicas declared are two
// creates over many calls, each tagged as the object's before anything else; their endpoints reach
// the connection Secret; one resized, one removed (deleted), each change once and one a call; then
// the primary deleted leaves nothing in OTC.
func TestReadReplicasEndToEnd(t *testing.T) {
	w := newDay2World(t, nil, nil)
	w.edit(twoReplicas)
	w.settleReplicas(40)

	rrs := w.replicas()
	require.Len(t, rrs, 2)
	assert.Equal(t, 2, w.sim.Calls(otcsim.OpCreateReplica), "two replicas, two creates")
	for i, name := range []string{"r1", "r2"} {
		require.Len(t, rrs[name], 1, name)
		v := rrs[name][0]
		assert.Equal(t, reconcile.ReplicaInstanceName("local", "team-a", "shop", name), v.Name)
		assert.Equal(t, "uid-day2", v.Tags[reconcile.TagOwnerUID], "the ownership tags, as on the primary")
		st := w.status().ReadReplicas[i]
		assert.Equal(t, name, st.Name)
		assert.Equal(t, v.ID, st.ID)
		assert.Equal(t, "rds.mysql.n1.large.2.rr", st.Flavor)
		assert.Equal(t, 40, st.Volume, "the primary's volume")
		assert.NotEmpty(t, st.Endpoint)
	}
	st := w.status()
	assert.Equal(t, st.ReadReplicas[0].Endpoint+","+st.ReadReplicas[1].Endpoint, string(w.connectionSecret().Data[reconcile.KeyReaderHosts]))
	w.requireSettled("two replicas")

	w.edit(func(s *v1alpha1.RdsSpec) { s.Readreplicas[0].Flavorref = "rds.mysql.n1.xlarge.2.rr" })
	w.settleReplicas(20)
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpResize), "one resize")
	assert.Equal(t, "rds.mysql.n1.xlarge.2.rr", w.replicas()["r1"][0].Flavor)
	w.edit(func(s *v1alpha1.RdsSpec) { s.Readreplicas[0].Volumesize = 60 })
	w.settleReplicas(20)
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpEnlargeVolume), "one growth")
	assert.Equal(t, 60, w.replicas()["r1"][0].VolumeSize)

	r2 := w.replicas()["r2"][0].ID
	w.edit(func(s *v1alpha1.RdsSpec) { s.Readreplicas = s.Readreplicas[:1] })
	w.settleReplicas(20)
	_, listed := w.sim.Instance(r2)
	assert.False(t, listed, "a replica left out of readreplicas is deleted")
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpDeleteInstance))
	require.Len(t, w.status().ReadReplicas, 1)
	assert.Equal(t, w.status().ReadReplicas[0].Endpoint, string(w.connectionSecret().Data[reconcile.KeyReaderHosts]))
	w.requireSettled("one replica")

	// The primary deleted: its final backup, its delete, and nothing left in OTC.
	w.mc.Delete(w.clock.Now())
	for i := 0; !w.mc.Gone(); i++ {
		require.Less(t, i, 30, "the deletion finishes")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		resp, err := w.mc.Finalize(ctx, w.r)
		cancel()
		require.NoError(t, err)
		w.clock.Advance(min(time.Duration(resp.ResyncAfterSeconds)*time.Second, 10*time.Second))
	}
	assert.Empty(t, w.sim.Instances(), "no instance and no replica is left billed")
}

// finalizeAll deletes the object and calls finalize until it is released.
func (w *day2World) finalizeAll() {
	w.t.Helper()
	w.mc.Delete(w.clock.Now())
	for i := 0; !w.mc.Gone(); i++ {
		require.Less(w.t, i, 30, "the deletion finishes")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		resp, err := w.mc.Finalize(ctx, w.r)
		cancel()
		require.NoError(w.t, err)
		w.clock.Advance(min(time.Duration(resp.ResyncAfterSeconds)*time.Second, 10*time.Second))
	}
}

// TestReadReplicasRetain: deletionpolicy Retain keeps the replicas with the primary, each released
// the same way (the release tag of the object), before the primary.
func TestReadReplicasRetain(t *testing.T) {
	w := newDay2World(t, func(s *v1alpha1.RdsSpec) { s.Deletionpolicy = v1alpha1.DeletionPolicyRetain }, nil)
	w.edit(twoReplicas)
	w.settleReplicas(40)
	w.finalizeAll()
	all := w.sim.Instances()
	require.Len(t, all, 3, "the primary and its two replicas stay")
	for _, v := range all {
		assert.Equal(t, "uid-day2", v.Tags[reconcile.TagReleasedBy], "%s %s is released", v.Type, v.Name)
	}
	assert.Zero(t, w.sim.Calls(otcsim.OpDeleteInstance))
}

// TestReadReplicaCreateAnswerLost: OTC creates the replica but its answer is lost; the next call
// finds it (by the primary's related instances, and its name), tags it and creates nothing more.
func TestReadReplicaCreateAnswerLost(t *testing.T) {
	w := newDay2World(t, nil, nil)
	w.edit(func(s *v1alpha1.RdsSpec) { twoReplicas(s); s.Readreplicas = s.Readreplicas[:1] })
	for i := 0; w.sim.Calls(otcsim.OpCreateReplica) == 0; i++ {
		require.Less(t, i, 10)
		resp := w.callWith(w.r, w.status())
		if w.sim.Calls(otcsim.OpCreateReplica) == 0 {
			w.apply(resp) // the create's answer is lost: never applied
		}
	}
	w.settleReplicas(40)
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpCreateReplica), "no second create")
	require.Len(t, w.replicas()["r1"], 1)
	assert.Equal(t, "uid-day2", w.replicas()["r1"][0].Tags[reconcile.TagOwnerUID])
}

// TestReadReplicaSecondOfANameIsDeleted: a second replica of a name (a create raced by another
// controller replica) is the object's too, holds nothing of its own, and is deleted: one is kept.
func TestReadReplicaSecondOfANameIsDeleted(t *testing.T) {
	w := newDay2World(t, nil, nil)
	w.edit(func(s *v1alpha1.RdsSpec) { twoReplicas(s); s.Readreplicas = s.Readreplicas[:1] })
	w.settleReplicas(40)
	kept := w.replicas()["r1"][0].ID
	// The other controller replica's create, whose tags it has not written yet.
	_, _, err := w.client.CreateReplica(context.Background(), cloud.CreateReplicaOpts{
		Name: reconcile.ReplicaInstanceName("local", "team-a", "shop", "r1"), Of: w.status().ID,
		Flavor: "rds.mysql.n1.large.2.rr", VolumeType: "CLOUDSSD", VolumeSize: 40, AvailabilityZone: "eu-de-02",
	})
	require.NoError(t, err)
	w.edit(func(s *v1alpha1.RdsSpec) { s.Backupkeepdays = 8 }) // a new generation: the call reads OTC fresh
	w.settleReplicas(40)
	rrs := w.sim.Instances()
	rrs = slices.DeleteFunc(rrs, func(v otcsim.InstanceView) bool { return v.Type != otcsim.TypeReplica })
	require.Len(t, rrs, 1, "one replica of the name is kept")
	assert.Equal(t, kept, rrs[0].ID, "the older one")
	assert.Equal(t, 2, w.sim.Calls(otcsim.OpCreateReplica))
}

// TestReadReplicaOfAnotherIsLeftAlone: a replica of the object's instance that another object
// owns (its tags say so) is neither taken over nor deleted, and a declared replica of its name is
// not created.
func TestReadReplicaOfAnotherIsLeftAlone(t *testing.T) {
	w := newDay2World(t, nil, nil)
	ctx := context.Background()
	id, _, err := w.client.CreateReplica(ctx, cloud.CreateReplicaOpts{
		Name: reconcile.ReplicaInstanceName("local", "team-a", "shop", "r1"), Of: w.status().ID,
		Flavor: "rds.mysql.n1.large.2.rr", VolumeType: "CLOUDSSD", VolumeSize: 40, AvailabilityZone: "eu-de-02",
	})
	require.NoError(t, err)
	require.NoError(t, w.client.SetTags(ctx, id, map[string]string{
		reconcile.TagOwnerCluster: "local", reconcile.TagOwnerNamespace: "team-b", reconcile.TagOwnerName: "other", reconcile.TagOwnerUID: "uid-other",
	}))
	w.clock.Advance(otcsim.DefaultDurations().Create)
	w.sim.ResetCounters()
	w.edit(func(s *v1alpha1.RdsSpec) { twoReplicas(s); s.Readreplicas = s.Readreplicas[:1] })
	w.settle(6)
	assert.Zero(t, w.sim.Calls(otcsim.OpCreateReplica), "nothing is created under a name another's replica carries")
	assert.Zero(t, w.sim.Calls(otcsim.OpDeleteInstance))
	assert.Zero(t, w.sim.Calls(otcsim.OpTagsAction), "nor taken over")
	synced := w.condition(v1alpha1.ConditionSynced)
	assert.Equal(t, reconcile.ReasonReplicaNameTaken, synced.Reason)
	assert.NotContains(t, synced.Message, id, "the message names no instance that is not the object's")
}

// TestReadReplicaOnceAcrossControllerReplicas: the controller's second replica answers a call on
// the very status the first one decided its create on (the first's answer lost): it finds the
// replica among the primary's related instances and by its name, tags it as the object's, and
// creates none.
func TestReadReplicaOnceAcrossControllerReplicas(t *testing.T) {
	w := newDay2World(t, nil, nil)
	b := w.replica()
	w.edit(func(s *v1alpha1.RdsSpec) { twoReplicas(s); s.Readreplicas = s.Readreplicas[:1] })
	st := w.status()
	for i := 0; w.sim.Calls(otcsim.OpCreateReplica) == 0; i++ {
		require.Less(t, i, 10)
		resp := w.callWith(w.r, st)
		if w.sim.Calls(otcsim.OpCreateReplica) == 0 {
			w.apply(resp)
			st = w.status()
		}
	}
	tags := w.sim.Calls(otcsim.OpTagsAction)
	resp := w.callWith(b, st) // the same observation, on the other controller replica
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpCreateReplica), "no second create")
	assert.Equal(t, tags+1, w.sim.Calls(otcsim.OpTagsAction), "its change is the replica's ownership tags")
	w.apply(resp)
	w.settleReplicas(40)
	require.Len(t, w.replicas()["r1"], 1)
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpCreateReplica))
}

// TestReadReplicasStopWithTheInstance: stopped is the instance's, and OTC stops its read replicas
// with it: the replicas report SHUTDOWN, readerhosts empties, nothing is done to them, and
// started again they are readers again.
func TestReadReplicasStopWithTheInstance(t *testing.T) {
	w := newDay2World(t, nil, nil)
	w.edit(func(s *v1alpha1.RdsSpec) { twoReplicas(s); s.Readreplicas = s.Readreplicas[:1] })
	w.settleReplicas(40)
	readers := string(w.connectionSecret().Data[reconcile.KeyReaderHosts])
	require.NotEmpty(t, readers)

	w.sim.ResetCounters()
	w.edit(func(s *v1alpha1.RdsSpec) { s.Stopped = true })
	for i := 0; w.status().Status != "SHUTDOWN" || w.status().Operation != nil; i++ {
		require.Less(t, i, 20, "the instance stops: %+v", w.status())
		w.syncOneChange()
		w.clock.Advance(10 * time.Second)
	}
	w.syncOneChange()
	assert.Equal(t, "SHUTDOWN", w.status().ReadReplicas[0].Status, "OTC stops a replica with its primary")
	assert.Empty(t, w.connectionSecret().Data[reconcile.KeyReaderHosts], "no reader while it is stopped")
	assert.Equal(t, 1, w.sim.MutatingCalls(), "one stop, nothing done to the replica")

	w.edit(func(s *v1alpha1.RdsSpec) { s.Stopped = false })
	w.settleReplicas(20)
	assert.Equal(t, readers, string(w.connectionSecret().Data[reconcile.KeyReaderHosts]))
}

func pgSpec(s *v1alpha1.RdsSpec) {
	s.Datastoretype, s.Datastoreversion, s.Flavorref = "PostgreSQL", "15", "rds.pg.n1.large.2"
}

func pgReplicas(s *v1alpha1.RdsSpec) {
	s.Readreplicas = []v1alpha1.ReadReplica{
		{Name: "r1", Flavorref: "rds.pg.n1.large.2.rr", Availabilityzone: "eu-de-02"},
		{Name: "r2", Flavorref: "rds.pg.n1.large.2.rr", Availabilityzone: "eu-de-03"},
	}
}

// stopNow stops the instance through the spec and calls until OTC reports it SHUTDOWN.
func (w *day2World) stopNow() {
	w.t.Helper()
	w.edit(func(s *v1alpha1.RdsSpec) { s.Stopped = true })
	for i := 0; w.status().Status != "SHUTDOWN" || w.status().Operation != nil; i++ {
		require.Less(w.t, i, 20, "the instance stops: %+v", w.status())
		w.syncOneChange()
		w.clock.Advance(10 * time.Second)
	}
	w.syncOneChange()
}

// TestReadReplicaRemovedWhileStopped (review #21): a replica left out of readreplicas while the
// instance is stopped is not deleted (nothing is changed while it is stopped, and OTC refuses to
// delete a stopped PostgreSQL instance: the refused delete was sent on every call); the deletion
// waits with InstanceStopped naming it. Started again in the same edit, the instance is started
// first (the refused delete held the start back for good), then the replica is deleted.
func TestReadReplicaRemovedWhileStopped(t *testing.T) {
	for _, engine := range []string{"MySQL", "PostgreSQL"} {
		t.Run(engine, func(t *testing.T) {
			var spec func(*v1alpha1.RdsSpec)
			declare := twoReplicas
			if engine == "PostgreSQL" {
				spec, declare = pgSpec, pgReplicas
			}
			w := newDay2World(t, spec, nil)
			w.edit(declare)
			w.settleReplicas(40)
			w.stopNow()
			w.sim.ResetCounters()
			w.edit(func(s *v1alpha1.RdsSpec) { s.Readreplicas = s.Readreplicas[:1] })
			for range 5 {
				w.syncOneChange()
				w.clock.Advance(10 * time.Second)
			}
			assert.Zero(t, w.sim.MutatingCalls(), "nothing is changed while the instance is stopped")
			synced := w.condition(v1alpha1.ConditionSynced)
			assert.Equal(t, reconcile.ReasonInstanceStopped, synced.Reason, synced.Message)
			assert.Contains(t, synced.Message, "deletion of the read replica")

			w.edit(func(s *v1alpha1.RdsSpec) { s.Stopped = false })
			w.settleReplicas(30)
			assert.Equal(t, 1, w.sim.Calls(otcsim.OpStartupInstance))
			assert.Equal(t, 1, w.sim.Calls(otcsim.OpDeleteInstance))
			assert.Len(t, w.replicas(), 1)
		})
	}
	t.Run("started and removed in one edit", func(t *testing.T) {
		w := newDay2World(t, pgSpec, nil)
		w.edit(pgReplicas)
		w.settleReplicas(40)
		w.stopNow()
		w.sim.ResetCounters()
		w.edit(func(s *v1alpha1.RdsSpec) { s.Stopped = false; s.Readreplicas = s.Readreplicas[:1] })
		w.settleReplicas(30)
		assert.Equal(t, 1, w.sim.Calls(otcsim.OpStartupInstance), "the start is not held back by the replica's delete")
		assert.Equal(t, 1, w.sim.Calls(otcsim.OpDeleteInstance), "the delete follows once, when the replica runs")
		assert.Len(t, w.replicas(), 1)
	})
}

// TestReadReplicasRetainStatusNamingAReplica (review #21): a tenant may write status.id; one naming
// the object's own read replica under Retain released that replica and finalized the object,
// leaving the instance (and its other replica) tagged as a deleted object's, which nothing may
// adopt. The deletion looks for the object's instance instead: everything is released.
func TestReadReplicasRetainStatusNamingAReplica(t *testing.T) {
	w := newDay2World(t, func(s *v1alpha1.RdsSpec) { s.Deletionpolicy = v1alpha1.DeletionPolicyRetain }, nil)
	w.edit(twoReplicas)
	w.settleReplicas(40)
	st := w.status()
	st.ID = st.ReadReplicas[0].ID
	w.mc.SetStatus(st)
	w.finalizeAll()
	all := w.sim.Instances()
	require.Len(t, all, 3, "the primary and its two replicas stay")
	for _, v := range all {
		assert.Equal(t, "uid-day2", v.Tags[reconcile.TagReleasedBy], "%s %s is released", v.Type, v.Name)
	}
}

// TestReadReplicaWaitsForTheStop (review #21): while OTC stops the instance (it lists it ACTIVE
// meanwhile, and stops its replicas with it), a replica is not resized: the resize waits with the
// stopped instance, told, and follows its start.
func TestReadReplicaWaitsForTheStop(t *testing.T) {
	w := newDay2World(t, nil, nil)
	w.edit(func(s *v1alpha1.RdsSpec) { twoReplicas(s); s.Readreplicas = s.Readreplicas[:1] })
	w.settleReplicas(40)
	w.edit(func(s *v1alpha1.RdsSpec) { s.Stopped = true })
	w.syncOneChange()
	require.Equal(t, 1, w.sim.Calls(otcsim.OpStopInstance))
	require.NotNil(t, w.status().Operation)
	w.edit(func(s *v1alpha1.RdsSpec) { s.Readreplicas[0].Flavorref = "rds.mysql.n1.xlarge.2.rr" })
	for range 10 {
		w.syncOneChange()
		w.clock.Advance(10 * time.Second)
	}
	require.Equal(t, "SHUTDOWN", w.status().Status)
	assert.Zero(t, w.sim.Calls(otcsim.OpResize), "no replica is resized while the instance stops or is stopped")
	assert.Equal(t, reconcile.ReasonInstanceStopped, w.condition(v1alpha1.ConditionSynced).Reason)

	w.edit(func(s *v1alpha1.RdsSpec) { s.Stopped = false })
	w.settleReplicas(30)
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpResize))
	assert.Equal(t, "rds.mysql.n1.xlarge.2.rr", w.replicas()["r1"][0].Flavor)
}

// TestReadReplicaNamedInStatusIsNotTheInstance (review #21): a tenant may write status.id; one
// naming the object's own read replica (its tags name the object too) made the call manage the
// replica as the instance: its storage grown to volumesize, the spec's tags and restarts applied
// to it, a replica of it asked on every call, and the connection Secret's host pointed at a
// read-only copy. It is answered as any id that is not the object's instance: nothing is changed.
func TestReadReplicaNamedInStatusIsNotTheInstance(t *testing.T) {
	w := newDay2World(t, nil, nil)
	w.edit(func(s *v1alpha1.RdsSpec) { twoReplicas(s); s.Readreplicas = s.Readreplicas[:1] })
	w.settleReplicas(40)
	st := w.status()
	st.ID = st.ReadReplicas[0].ID
	w.mc.SetStatus(st)
	w.sim.ResetCounters()
	w.edit(func(s *v1alpha1.RdsSpec) { s.Volumesize = 60; s.Tags = []v1alpha1.Tag{{Key: "team", Value: "shop"}} })
	w.settle(5)
	assert.Zero(t, w.sim.MutatingCalls(), "nothing is done to the replica as if it were the instance")
	assert.Equal(t, reconcile.ReasonInstanceNotFound, w.condition(v1alpha1.ConditionReady).Reason)
}
