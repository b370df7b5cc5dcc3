package sync_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/test/otcsim"
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
		before := w.obj.Status.DeepCopy()
		w.sync()
		require.Equal(t, *before, w.obj.Status, "call %d: watching", i)
		w.clock.Advance(time.Minute)
	}
	w.pin(cloud.MetricCPU, 95)
	w.clock.Advance(30 * time.Minute)
	w.run(10, time.Minute)
	require.Equal(t, 1, w.sim.Calls(otcsim.OpResize))
	for i := range 20 {
		w.pin(cloud.MetricCPU, float64(91+i%9))
		before := w.obj.Status.DeepCopy()
		w.sync()
		assert.Equal(t, *before, w.obj.Status, "call %d: cooldown", i)
		w.clock.Advance(time.Minute)
	}
}
