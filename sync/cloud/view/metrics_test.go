package view_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// TestViewMetricsAreReadFleetWide: many concurrent reads for five instances make one reading of
// all of them: two batch queries (15 metrics, 10 per query), no per-instance Cloud Eye call; a
// minute later the next read starts the next reading.
func TestViewMetricsAreReadFleetWide(t *testing.T) {
	simClock := otcsim.NewManualClock(t0.Add(-time.Hour)) // the instances are an hour old at t0
	f := newFixture(t, 5, otcsim.Options{Clock: simClock})
	simClock.Set(t0)
	var insts []*cloud.Instance
	for _, id := range f.ids {
		insts = append(insts, f.observe(t, id, 0))
	}
	// Register every instance: the first reading knows only the first one; the others have none
	// until the next reading (at most a minute: a new instance does not start one of its own).
	for i, in := range insts {
		_, err := f.view.InstanceMetrics(context.Background(), in, 15*time.Minute, 3*time.Minute)
		if i == 0 {
			require.NoError(t, err)
		} else {
			require.ErrorIs(t, err, cloud.ErrMetricsUnavailable)
		}
	}
	f.clock.Advance(time.Minute)
	simClock.Advance(time.Minute)
	f.sim.ResetCounters()
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := f.view.InstanceMetrics(context.Background(), insts[i%5], 15*time.Minute, 3*time.Minute)
			assert.NoError(t, err)
			if m != nil {
				assert.NotEmpty(t, m.Points[cloud.MetricCPU])
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, 2, f.sim.Calls(otcsim.OpBatchListMetricData), "one reading: 15 metrics in two batch queries")
	assert.Zero(t, f.sim.Calls(otcsim.OpShowMetricData))
}
