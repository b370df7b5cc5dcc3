package e2e

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	"github.com/mcsps/rds-lambda-controller/server"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/view"
	"github.com/mcsps/rds-lambda-controller/test/testutil"
)

// newViewWorld is newWorld with the hooks' client wrapped in the shared view, as rds-hooks wires it,
// on the same manual clock.
func newViewWorld(t *testing.T) (*world, *view.View, *otcsim.Server) {
	t.Helper()
	clock := otcsim.NewManualClock(t0)
	srv := otcsim.NewServer(otcsim.Options{Clock: clock, Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(srv.Close)
	client := testutil.Login(t, srv, nil)
	v := view.New(client, view.Options{Now: clock.Now})
	logs := &testutil.Buffer{}
	rec := reconcile.New(reconcile.Config{Cloud: v, Now: clock.Now, CallTimeout: 4 * time.Second})
	hooks := httptest.NewServer(server.New(server.Options{
		// The hooks' authentication has tests of its own (server, cmd/rds-hooks, test/image.sh);
		// these play an authenticated Metacontroller.
		Insecure:   true,
		Reconciler: rec,
		Logger:     slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}))
	t.Cleanup(hooks.Close)
	srv.Sim.ResetCounters()
	return &world{t: t, clock: clock, sim: srv.Sim, hooks: hooks, logs: logs, cloud: client}, v, srv
}

// TestSteadySyncsReadTheView: once an object is steady its syncs read the shared view (no OTC
// call), a spec change reads fresh and its resize is followed fresh, and a change behind the
// controller's back shows within the view's bound.
func TestSteadySyncsReadTheView(t *testing.T) {
	w, v, _ := newViewWorld(t)
	mc := w.newObject(nil)
	mc.sync()
	mc.sync()
	w.clock.Advance(otcsim.DefaultDurations().Create)
	resp := mc.sync()
	require.Equal(t, cloud.StatusActive, resp.Status.Status)
	// The ownership tags were the last call's change. (The manual clock stands still during a call:
	// without a step, the read after the change would look as old as the one that decided it.)
	w.clock.Advance(time.Second)
	resp = mc.sync()
	require.Equal(t, float64(300), resp.ResyncAfterSeconds)

	// Steady, and settled (nothing changed for 30 s): served from the view.
	w.clock.Advance(31 * time.Second)
	require.NoError(t, v.Refresh(context.Background()))
	w.sim.ResetCounters()
	_, _, first := w.post("/sync", mc.envelope())
	_, _, second := w.post("/sync", mc.envelope())
	assert.Equal(t, string(first), string(second))
	assert.Empty(t, w.sim.CallCounts(), "a steady sync makes no OTC call")

	// A spec change reads fresh and issues the resize; the resize is followed fresh.
	mc.obj.Edit(func(spec map[string]any) { spec["flavorref"] = "rds.mysql.c2.large" })
	resp = mc.sync()
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpListInstances), "read fresh by id")
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpResize))
	require.NotNil(t, resp.Status.Operation)
	w.clock.Advance(otcsim.DefaultDurations().Resize + time.Second)
	resp = mc.sync()
	assert.Equal(t, 2, w.sim.Calls(otcsim.OpListInstances), "an operation in flight reads fresh")
	assert.Equal(t, "rds.mysql.c2.large", resp.Status.Flavor)
	assert.Nil(t, resp.Status.Operation)

	// Behind the controller's back: at most the bound late.
	w.clock.Advance(31 * time.Second)
	require.NoError(t, v.Refresh(context.Background()))
	require.NoError(t, w.sim.ForceInstanceStatus(resp.Status.ID, cloud.StatusFrozen))
	resp = mc.sync()
	assert.Equal(t, cloud.StatusActive, resp.Status.Status, "served from the view within its bound")
	w.clock.Advance(view.DefaultMaxAge + time.Second)
	resp = mc.sync()
	assert.Equal(t, cloud.StatusFrozen, resp.Status.Status, "past the bound: read fresh")
	assert.Equal(t, metav1.ConditionFalse, condition(resp.Status, v1alpha1.ConditionReady).Status)
}

// TestReplicasDoNotRepeatAChangeFromAStaleView: the manifests run two replicas, each with its own
// view, and Metacontroller's calls land on either. Replica A resizes and follows the resize to its
// end (fresh reads, all on A); the next call is steady and lands on B, whose view still holds the
// instance as it was before the resize, well within the bound. A steady call that would change the
// instance reads it fresh first and decides again: B issues no second resize.
func TestReplicasDoNotRepeatAChangeFromAStaleView(t *testing.T) {
	w, vA, srv := newViewWorld(t)
	hooksA := w.hooks
	clientB := testutil.Login(t, srv, nil)
	vB := view.New(clientB, view.Options{Now: w.clock.Now})
	hooksB := httptest.NewServer(server.New(server.Options{
		// The hooks' authentication has tests of its own (server, cmd/rds-hooks, test/image.sh);
		// these play an authenticated Metacontroller.
		Insecure:   true,
		Reconciler: reconcile.New(reconcile.Config{Cloud: vB, Now: w.clock.Now, CallTimeout: 4 * time.Second}),
		Logger:     slog.New(slog.DiscardHandler),
	}))
	t.Cleanup(hooksB.Close)

	mc := w.newObject(nil)
	mc.sync()
	mc.sync()
	w.clock.Advance(otcsim.DefaultDurations().Create)
	mc.sync()
	w.clock.Advance(time.Second)
	resp := mc.sync() // the ownership tags were the last call's change
	require.Equal(t, float64(300), resp.ResyncAfterSeconds)
	w.clock.Advance(31 * time.Second)
	require.NoError(t, vA.Refresh(context.Background()))
	require.NoError(t, vB.Refresh(context.Background()))

	mc.obj.Edit(func(spec map[string]any) { spec["flavorref"] = "rds.mysql.c2.large" })
	w.sim.ResetCounters()
	resp = mc.sync() // on A
	require.NotNil(t, resp.Status.Operation)
	require.Equal(t, 1, w.sim.Calls(otcsim.OpResize))
	w.clock.Advance(otcsim.DefaultDurations().Resize + time.Second)
	resp = mc.sync() // on A: the resize is over
	require.Nil(t, resp.Status.Operation)
	require.Equal(t, "rds.mysql.c2.large", resp.Status.Flavor)

	w.hooks = hooksB // the next, steady call lands on B
	resp = mc.sync()
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpResize), "no second resize from B's stale view")
	assert.Nil(t, resp.Status.Operation)
	assert.Equal(t, "rds.mysql.c2.large", resp.Status.Flavor)
	w.hooks = hooksA
}
