package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
)

// TestReadReplicasSteadySyncsReadTheView: an object with two read replicas, once steady, syncs
// without an OTC call: the primary's listing names its replicas, and they are in the shared view.
func TestReadReplicasSteadySyncsReadTheView(t *testing.T) {
	w, v, _ := newViewWorld(t)
	mc := w.newObject(func(spec map[string]any) {
		spec["readreplicas"] = []any{
			map[string]any{"name": "r1", "flavorref": "rds.mysql.c2.medium.rr", "availabilityzone": "eu-de-02"},
			map[string]any{"name": "r2", "flavorref": "rds.mysql.c2.medium.rr", "availabilityzone": "eu-de-03"},
		}
	})
	for i := 0; ; i++ {
		require.Less(t, i, 60, "the object settles")
		before := w.sim.MutatingCalls()
		resp := mc.sync()
		require.LessOrEqual(t, w.sim.MutatingCalls()-before, 1, "at most one change per call")
		st := resp.Status
		if resp.ResyncAfterSeconds == 300 && len(st.ReadReplicas) == 2 &&
			!slices.ContainsFunc(st.ReadReplicas, func(r v1alpha1.ReadReplicaStatus) bool { return r.Status != "ACTIVE" }) {
			break
		}
		w.clock.Advance(min(time.Duration(resp.ResyncAfterSeconds)*time.Second, 10*time.Second))
	}
	assert.Equal(t, 2, w.sim.Calls(otcsim.OpCreateReplica))
	readers := string(mc.secret(mc.parent["status"].(map[string]any)["connectionSecret"].(string)).Data[reconcile.KeyReaderHosts])
	assert.NotEmpty(t, readers)

	w.clock.Advance(31 * time.Second)
	require.NoError(t, v.Refresh(context.Background()))
	w.sim.ResetCounters()
	_, _, first := w.post("/sync", mc.envelope())
	_, _, second := w.post("/sync", mc.envelope())
	assert.Equal(t, string(first), string(second))
	assert.Empty(t, w.sim.CallCounts(), "a steady sync with read replicas makes no OTC call")
}
