package reconcile_test

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
	"github.com/mcsps/rds-lambda-controller/test/metacontroller"
)

// TestForgedAdoptedStatusTakesNoUntaggedReplica (attack review): a tenant may write its object's
// status. status.id naming an untagged instance with status.adopted true is managed as an adopted
// one under the default adoption policy (manages), but spec.instanceid refuses a read replica
// ("it is a read replica"), and status.id naming one of the object's own replicas is answered as
// another's (instance.go). An untagged read replica (another team's, in the one call between its
// create and its tags, or one made in the OTC console) named in a forged status.id with
// adopted true was managed as the instance: the other namespace's ownership tags were written on
// it, and that namespace's deletion then deleted it (finalize finds it by its uid tag).
func TestForgedAdoptedStatusTakesNoUntaggedReplica(t *testing.T) {
	w := newDay2World(t, nil, nil)
	w.edit(func(s *v1alpha1.RdsSpec) { twoReplicas(s); s.Readreplicas = s.Readreplicas[:1] })
	// Calls until the replica's create was made: the next call of team-a would tag it.
	for i := 0; w.sim.Calls(otcsim.OpCreateReplica) == 0; i++ {
		require.Less(t, i, 10)
		w.syncOneChange()
	}
	var replicaID string
	for _, v := range w.sim.Instances() {
		if v.Type == otcsim.TypeReplica {
			replicaID = v.ID
			require.Empty(t, v.Tags[reconcile.TagOwnerUID], "the replica carries no tags yet")
		}
	}
	require.NotEmpty(t, replicaID)

	// team-b forges its own object's status: the replica's id, adopted.
	evil := metacontroller.NewRds(v1alpha1.Rds{
		ObjectMeta: metav1.ObjectMeta{Name: "evil", Namespace: "team-b", UID: "uid-evil", Generation: 1,
			CreationTimestamp: metav1.NewTime(w.clock.Now())},
		Spec: w.mc.Rds().Spec,
	})
	evil.EditRds(func(s *v1alpha1.RdsSpec) { s.Readreplicas = nil; s.Password = "Evil-Passw0rd!" })
	evil.SetStatus(v1alpha1.RdsStatus{ID: replicaID, Adopted: true})
	for range 3 {
		st := evil.Status()
		st.ID, st.Adopted = replicaID, true // the tenant writes it back each time
		evil.SetStatus(st)
		_, err := evil.Sync(context.Background(), w.r)
		require.NoError(t, err)
		w.clock.Advance(10 * time.Second)
	}
	v, ok := w.sim.Instance(replicaID)
	require.True(t, ok)
	assert.NotEqual(t, "uid-evil", v.Tags[reconcile.TagOwnerUID], "team-b's tags are not written on team-a's replica")

	// team-b's deletion deletes nothing of team-a's.
	evil.Delete(w.clock.Now())
	for i := 0; !evil.Gone(); i++ {
		require.Less(t, i, 30, "the deletion finishes")
		resp, err := evil.Finalize(context.Background(), w.r)
		require.NoError(t, err)
		w.clock.Advance(min(time.Duration(resp.ResyncAfterSeconds)*time.Second, 10*time.Second))
	}
	_, ok = w.sim.Instance(replicaID)
	require.True(t, ok, "team-a's replica is not deleted by team-b's deletion")

	// team-a goes on: its replica is its own.
	w.settleReplicas(40)
	assert.Equal(t, "uid-day2", w.replicas()["r1"][0].Tags[reconcile.TagOwnerUID])
}
