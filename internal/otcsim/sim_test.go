package otcsim

import (
	"strings"
	"testing"
	"time"

	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/instances"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAdvanceOrder: one advance ends the operations before it autoscales and starts what OTC
// starts by itself, and those two see the instances as the operations left them: a stop that
// ends seven days before a maintenance window is started in that window by the same advance, and
// an instance whose delete ends grows no more, whatever its autoscaling policy and disk usage.
func TestAdvanceOrder(t *testing.T) {
	e := newEnv(t, Options{})
	stopped := e.createActive(t, createOpts("advance-stop"))
	gone := e.createActive(t, ssdOpts("advance-gone"))
	_, err := instances.StopInstance(e.rds, stopped)
	require.NoError(t, err)
	require.NoError(t, instances.ManageAutoScaling(e.rds, gone, instances.ScalingOpts{SwitchOption: true}))
	_, err = instances.Delete(e.rds, gone)
	require.NoError(t, err)

	e.sim.mu.Lock()
	defer e.sim.mu.Unlock()
	// Its disk nearly full only once the delete runs: set at once, the policy grows it first.
	e.sim.metrics[metricKey{instanceID: gone, metric: metricDiskUtil}] = 99
	in := e.sim.instances[stopped]
	require.NotNil(t, in.op, "the stop runs")
	ended := in.op.end
	at := time.Date(ended.Year(), ended.Month(), ended.Day(), 3, 0, 0, 0, time.UTC) // in 02:00-06:00
	for at.Before(ended.Add(stoppedFor)) {
		at = at.Add(24 * time.Hour)
	}
	e.sim.advance(at)

	assert.Equal(t, ended, in.stoppedAt, "the stop ended")
	require.NotNil(t, in.op, "and OTC's start began in the same advance")
	assert.Equal(t, opKindStartStop, in.op.kind)
	assert.NotContains(t, e.sim.instances, gone, "the delete ended")
	var names []string
	for _, j := range e.sim.jobs {
		if j.created.Equal(at) {
			names = append(names, j.name)
		}
	}
	assert.Len(t, names, 1, "one job made by the advance: %v", names)
	for _, n := range names {
		assert.True(t, strings.HasPrefix(n, "AutoStartup"), n)
	}
}
