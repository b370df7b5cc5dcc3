package reconcile_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/hook"
	"github.com/mcsps/rds-lambda-controller/test/testutil"
)

// replica is a second hooks process: its own Reconciler and its own OTC login (so its own view of
// the cloud); it shares nothing with the world's but the simulator.
func (w *day2World) replica() *reconcile.Reconciler {
	w.t.Helper()
	return reconcile.New(reconcile.Config{Cloud: testutil.Login(w.t, w.srv, nil), Now: w.clock.Now, CallTimeout: 5 * time.Second})
}

// callWith makes one hook call to r observing status st, and does not feed the answer back: the
// answer is lost, or Metacontroller refuses it as stale.
func (w *day2World) callWith(r *reconcile.Reconciler, st v1alpha1.RdsStatus) *hook.SyncResponse {
	w.t.Helper()
	req, err := w.mc.Request()
	require.NoError(w.t, err)
	req.Parent.Status = *st.DeepCopy()
	resp, err := r.Sync(context.Background(), req)
	require.NoError(w.t, err)
	return resp
}

// apply makes an answer of callWith the cluster's state, as Metacontroller does.
func (w *day2World) apply(resp *hook.SyncResponse) {
	w.t.Helper()
	require.NoError(w.t, w.mc.ApplyResponse(resp))
}

// TestRestartOnceAcrossReplicas: the two replicas the manifests run answer calls whose observed
// status does not show the restart the other one made (a duplicate call, a lost answer, a stale
// cache). They share nothing but OTC, where the request is marked ahead: exactly one restart.
func TestRestartOnceAcrossReplicas(t *testing.T) {
	w := newDay2World(t, nil, nil)
	b := w.replica()
	w.edit(func(s *v1alpha1.RdsSpec) { s.Restartrequest = "2026-11-23" })
	beforeMark := w.status()

	w.sync() // replica A writes the mark
	require.Zero(t, w.sim.Calls(otcsim.OpRestart), "the mark first")
	require.Equal(t, reconcile.RequestMark(string(w.mc.Rds().UID), "2026-11-23"), w.view().Tags[reconcile.TagRestartRequest])
	marked := w.status()

	resp := w.callWith(w.r, marked) // replica A restarts; its answer is lost
	require.Equal(t, 1, w.sim.Calls(otcsim.OpRestart))
	require.Equal(t, "2026-11-23", resp.Status.RestartRequest)

	dup := w.callWith(b, marked) // the same request, duplicated to replica B
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpRestart), "a duplicate on the other replica does not restart again")
	assert.Equal(t, "2026-11-23", dup.Status.RestartRequest, "it records the request handled: OTC shows REBOOTING and the mark")

	stale := w.callWith(b, beforeMark) // a stale call from before the mark, on replica B
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpRestart), "a call from before the mark does not restart again")
	assert.Equal(t, "2026-11-23", stale.Status.RestartRequest)

	// Replica B's answer to the duplicate is the one the cluster applies; both replicas go on.
	w.apply(dup)
	for i := range 8 {
		r := w.r
		if i%2 == 1 {
			r = b
		}
		resp := w.callWith(r, w.status())
		w.apply(resp)
		w.clock.Advance(min(time.Duration(resp.ResyncAfterSeconds)*time.Second, 10*time.Second))
	}
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpRestart), "exactly one restart for the value")
	w.requireSettled("restarted once across replicas")
	require.Equal(t, reconcile.RestartSeal(string(w.mc.Rds().UID), "2026-11-23"), w.view().Tags[reconcile.TagRestartRequest], "the mark is sealed")

	// Long after the reboot, a call observing a status from before the restart reaches a third,
	// fresh replica: no trace of the reboot in OTC but the sealed mark, which is enough.
	late := w.callWith(w.replica(), marked)
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpRestart), "a stale call after the reboot does not restart again")
	assert.Equal(t, "2026-11-23", late.Status.RestartRequest)

	// A new value restarts once more, whichever replica answers.
	w.edit(func(s *v1alpha1.RdsSpec) { s.Restartrequest = "2026-11-24" })
	w.apply(w.callWith(b, w.status()))   // B marks
	w.apply(w.callWith(w.r, w.status())) // A restarts
	assert.Equal(t, 2, w.sim.Calls(otcsim.OpRestart), "a new value restarts once more")
	w.settle(6)
	assert.Equal(t, 2, w.sim.Calls(otcsim.OpRestart))
	assert.Equal(t, "2026-11-24", w.status().RestartRequest)
}

// TestRestartLostAnswerOtherReplica: OTC restarts, the answer never arrives (commit then drop);
// the retry lands on the other replica, which finds the mark and the reboot and does not restart.
func TestRestartLostAnswerOtherReplica(t *testing.T) {
	w := newDay2World(t, nil, nil)
	b := w.replica()
	w.edit(func(s *v1alpha1.RdsSpec) { s.Restartrequest = "r1" })
	w.sync() // the mark
	w.sim.AddFault(otcsim.Fault{Op: otcsim.OpRestart, Kind: otcsim.FaultCommitThenDrop, Count: 1})
	marked := w.status()
	w.callWith(w.r, marked)
	require.Equal(t, 1, w.sim.Calls(otcsim.OpRestart), "OTC acted; the answer was dropped")

	retry := w.callWith(b, marked)
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpRestart), "the retry on the other replica does not restart again")
	assert.Equal(t, "r1", retry.Status.RestartRequest)
	w.apply(retry)
	w.settle(6)
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpRestart))
	w.requireSettled("one restart after a lost answer")
}
