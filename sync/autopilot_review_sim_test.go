package reconcile_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/view"
)

// TestAutopilotStatusStable: a steady object's status does not change from call to call while
// its metrics move (Metacontroller syncs again on every status change), in the cooldown too.
func TestAutopilotStatusStable(t *testing.T) {
	w, _ := newAutopilotWorld(t, func(s *v1alpha1.RdsSpec) { s.Autopilotmaxvcpus = 16 })
	w.clock.Advance(30 * time.Minute)
	w.run(5, time.Minute)
	for i := range 30 {
		w.pin(cloud.MetricCPU, float64(20+i))
		w.pin(cloud.MetricMem, float64(60-i))
		w.pin(cloud.MetricDisk, float64(30+i%7))
		before := w.status()
		w.sync()
		require.Equal(t, before, w.status(), "call %d: watching", i)
		w.clock.Advance(time.Minute)
	}
	w.pin(cloud.MetricCPU, 95)
	w.clock.Advance(30 * time.Minute)
	w.run(10, time.Minute)
	require.Equal(t, 1, w.sim.Calls(otcsim.OpResize))
	for i := range 20 {
		w.pin(cloud.MetricCPU, float64(91+i%9))
		before := w.status()
		w.sync()
		assert.Equal(t, before, w.status(), "call %d: cooldown", i)
		w.clock.Advance(time.Minute)
	}
}

// TestAutopilotNativeStorageLostAnswer: the answer that recorded OTC's storage autoscaling set by
// autopilot was lost. The policy in OTC is autopilot's all the same: turning autopilot off
// switches it off.
func TestAutopilotNativeStorageLostAnswer(t *testing.T) {
	w, _ := newAutopilotWorld(t, nil)
	require.NotNil(t, w.status().Autopilot.Storage, "the first calls set the policy")
	lost := w.status()
	lost.Autopilot.Storage = nil // the answer was lost
	w.mc.SetStatus(lost)
	w.run(10, time.Minute)
	assert.Zero(t, w.sim.Calls(otcsim.OpManageAutoScaling), "the policy in OTC is as wanted: not set again")
	w.edit(func(s *v1alpha1.RdsSpec) { s.Autopilot = false })
	w.run(3, time.Minute)
	p, err := w.client.GetStorageAutoscaling(context.Background(), w.status().ID)
	require.NoError(t, err)
	assert.False(t, p.Enabled, "autopilot off switches OTC's storage autoscaling off")
	w.requireSettled("autopilot off after a lost answer")
}

// TestAutopilotSameRequestTwice: the request that made autopilot's resize, sent again (its answer
// lost or Metacontroller's cache stale), makes no second change, to either replica.
func TestAutopilotSameRequestTwice(t *testing.T) {
	w, _ := newAutopilotWorld(t, func(s *v1alpha1.RdsSpec) { s.Autopilotmaxvcpus = 16 })
	w.pin(cloud.MetricCPU, 95)
	w.clock.Advance(30 * time.Minute)
	before := w.status()
	first := w.callWith(w.r, before)
	require.Equal(t, 1, w.sim.Calls(otcsim.OpResize))
	second := w.callWith(w.r, before)
	other := w.callWith(w.replica(), before)
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpResize), "no second change")
	assert.Equal(t, first.Status.Autopilot.Last, second.Status.Autopilot.Last, "the same replica tells the change it made")
	assert.Equal(t, reconcile.ReasonAutopilotWaiting, conditionOf(*other.Status, v1alpha1.ConditionAutopilot).Reason, "the other replica sees the resize in flight")
}

func conditionOf(st v1alpha1.RdsStatus, typ string) v1alpha1.Condition {
	for _, c := range st.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return v1alpha1.Condition{}
}

// TestAutopilotVolumeLostAnswerOtherReplica: SQL Server (no native autoscaling): the answer of
// autopilot's growth is lost and another replica answers. It grows nothing more within the
// cooldown, and does not say OTC's autoscaling (which SQL Server has not) grew the volume.
func TestAutopilotVolumeLostAnswerOtherReplica(t *testing.T) {
	w, _ := newAutopilotWorld(t, func(s *v1alpha1.RdsSpec) {
		s.Datastoretype, s.Datastoreversion, s.Flavorref = "SQLServer", "2022_SE", "rds.mssql.se.s3.large.4"
		s.Autopilotmaxvolume = 200
	})
	w.pin(cloud.MetricDisk, 95)
	w.clock.Advance(10 * time.Minute)
	for range 5 {
		before := w.status()
		w.sync()
		w.clock.Advance(time.Minute)
		if w.sim.Calls(otcsim.OpEnlargeVolume) == 1 {
			w.mc.SetStatus(before) // the answer was lost
			break
		}
	}
	require.Equal(t, 1, w.sim.Calls(otcsim.OpEnlargeVolume))
	w.r = reconcile.New(reconcile.Config{Cloud: view.New(w.client, view.Options{Now: w.clock.Now, Logger: slog.Default()}), Now: w.clock.Now, CallTimeout: 5 * time.Second})
	w.pin(cloud.MetricDisk, 95)
	w.run(40, time.Minute)
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpEnlargeVolume), "one growth per cooldown, whichever replica answers")
	require.NotNil(t, w.status().Autopilot.Last)
	assert.Equal(t, "50GB", w.status().Autopilot.Last.To)
	assert.NotContains(t, w.status().Autopilot.Last.Reason, "OTC's storage autoscaling")
}

// TestAutopilotOffUnknownOutcome: switching OTC's storage autoscaling off meets a server error
// (nothing done, or maybe done): the next calls make sure it is off.
func TestAutopilotOffUnknownOutcome(t *testing.T) {
	w, _ := newAutopilotWorld(t, nil)
	require.NotNil(t, w.status().Autopilot.Storage)
	w.edit(func(s *v1alpha1.RdsSpec) { s.Autopilot = false })
	w.sim.AddFault(otcsim.Fault{Op: otcsim.OpManageAutoScaling, Kind: otcsim.FaultStatus, Status: 500, Count: 1})
	w.run(5, time.Minute)
	p, err := w.client.GetStorageAutoscaling(context.Background(), w.status().ID)
	require.NoError(t, err)
	assert.False(t, p.Enabled, "autopilot off switches OTC's storage autoscaling off, after a server error too")
	w.requireSettled("autopilot off after a server error")
}
