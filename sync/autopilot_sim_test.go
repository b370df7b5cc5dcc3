package reconcile_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/view"
)

// newAutopilotWorld is a day2World whose hooks read the cloud through the shared view, as
// cmd/rds-hooks wires them, so that autopilot's metrics come from the view's fleet-wide reading.
func newAutopilotWorld(t *testing.T, spec func(*v1alpha1.RdsSpec)) (*day2World, *view.View) {
	t.Helper()
	w := newDay2World(t, func(s *v1alpha1.RdsSpec) {
		s.Autopilot = true
		if spec != nil {
			spec(s)
		}
	}, nil)
	v := view.New(w.client, view.Options{Now: w.clock.Now, Logger: slog.Default()})
	w.r = reconcile.New(reconcile.Config{Cloud: v, Now: w.clock.Now, CallTimeout: 5 * time.Second})
	// The first calls set OTC's storage autoscaling where the engine has it: one change.
	w.run(3, time.Minute)
	w.sim.ResetCounters()
	return w, v
}

// pin sets the instance's metrics in the simulator (all minutes, past ones too).
func (w *day2World) pin(metric string, value float64) {
	w.sim.SetMetric(w.status().ID, metric, value)
}

// run makes n calls, moving the clock on by step after each.
func (w *day2World) run(n int, step time.Duration) {
	w.t.Helper()
	for range n {
		w.sync()
		w.clock.Advance(step)
	}
}

func apCondition(w *day2World) v1alpha1.Condition { return w.condition(v1alpha1.ConditionAutopilot) }

func TestAutopilotFlavor(t *testing.T) {
	cases := map[string]struct {
		reason string
		spec   func(*v1alpha1.RdsSpec)
		metric string
		want   string
	}{
		"cpu": {
			reason: "CPU pressure moves to the smallest flavor with more vCPUs, same family",
			metric: cloud.MetricCPU, want: "rds.mysql.n1.xlarge.2",
		},
		"memory": {
			reason: "memory pressure picks by RAM: more RAM, the same vCPUs",
			metric: cloud.MetricMem, want: "rds.mysql.n1.large.4",
		},
		"ha, next sold out": {
			reason: "HA keeps .ha; n1.xlarge.2.ha is sold out in eu-de-02, so the next one of 4 vCPUs and 8 GB",
			spec: func(s *v1alpha1.RdsSpec) {
				s.Hamode, s.Flavorref, s.Availabilityzone = "Ha", "rds.mysql.n1.large.2.ha", "eu-de-01,eu-de-02"
			},
			metric: cloud.MetricCPU, want: "rds.mysql.c2.xlarge.ha",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w, _ := newAutopilotWorld(t, func(s *v1alpha1.RdsSpec) {
				s.Autopilotmaxvcpus = 16 // room for more: the cooldown, not the limit, holds the next step
				if tc.spec != nil {
					tc.spec(s)
				}
			})
			floor := w.mc.Rds().Spec.Flavorref
			w.pin(tc.metric, 95)
			w.clock.Advance(30 * time.Minute)
			w.sync()
			require.Equal(t, 1, w.sim.Calls(otcsim.OpResize), "%s: one resize", tc.reason)
			require.NotNil(t, w.status().Operation)
			assert.Equal(t, reconcile.OpResize, w.status().Operation.Type)
			assert.Equal(t, tc.want, w.status().Operation.Target, tc.reason)
			last := w.status().Autopilot.Last
			require.NotNil(t, last)
			assert.Equal(t, reconcile.APResize, last.Action)
			assert.Equal(t, floor, last.From)
			assert.Equal(t, tc.want, last.To)
			assert.Contains(t, last.Reason, tc.metric+" at least 95.0%")

			// The resize finishes; pressure goes on, but the cooldown (1h) holds.
			w.run(60, 30*time.Second)
			assert.Equal(t, tc.want, w.view().Flavor, tc.reason)
			assert.Equal(t, 1, w.sim.Calls(otcsim.OpResize), "the cooldown holds")
			assert.Equal(t, reconcile.ReasonAutopilotCooldown, apCondition(w).Reason)
			assert.Equal(t, floor, w.mc.Rds().Spec.Flavorref, "the spec is left as the user wrote it")

			// Pressure ends: many further calls, no flip-flop back to flavorref and no change.
			w.pin(tc.metric, 20)
			before := w.sim.MutatingCalls()
			w.run(200, time.Minute)
			assert.Equal(t, before, w.sim.MutatingCalls(), "no change once the pressure is gone")
			assert.Equal(t, tc.want, w.view().Flavor)
			assert.Equal(t, reconcile.ReasonAutopilotWatching, apCondition(w).Reason)
			w.requireSettled("after autopilot's resize")

			// Turning autopilot off keeps the flavor; raising flavorref above it resizes.
			w.edit(func(s *v1alpha1.RdsSpec) { s.Autopilot = false })
			w.run(5, time.Minute)
			assert.Equal(t, 1, w.sim.Calls(otcsim.OpResize), "autopilot off keeps the current size")
			assert.Equal(t, tc.want, w.view().Flavor)
			assert.Equal(t, before+1, w.sim.MutatingCalls(), "the one further change switches OTC's storage autoscaling off")
			w.requireSettled("autopilot off")
		})
	}
}

func TestAutopilotCPUTwiceAfterCooldown(t *testing.T) {
	w, _ := newAutopilotWorld(t, func(s *v1alpha1.RdsSpec) { s.Autopilotmaxvcpus = 8 })
	w.pin(cloud.MetricCPU, 95)
	w.clock.Advance(30 * time.Minute)
	w.run(90, time.Minute) // one resize, its cooldown, then the next
	assert.Equal(t, 2, w.sim.Calls(otcsim.OpResize), "one resize per cooldown")
	w.run(300, time.Minute)
	assert.Equal(t, 2, w.sim.Calls(otcsim.OpResize), "at the limit of 8 vCPUs nothing more")
	assert.Equal(t, "rds.mysql.n1.2xlarge.2", w.view().Flavor)
	c := apCondition(w)
	assert.Equal(t, metav1.ConditionFalse, c.Status)
	assert.Equal(t, reconcile.ReasonAutopilotAtLimit, c.Reason)
}

// TestAutopilotCountsEndedPeriods pins CPU at 95 % from the instance's first minute with a 5m
// window. The simulator answers Cloud Eye's running period with its value so far, as Cloud Eye
// does; autopilot resizes once the first period has ended, never while it runs (#23).
func TestAutopilotCountsEndedPeriods(t *testing.T) {
	w, _ := newAutopilotWorld(t, func(s *v1alpha1.RdsSpec) { s.Autopilotwindow = "5m" })
	w.pin(cloud.MetricCPU, 95)
	inst, ok := w.sim.Instance(w.status().ID)
	require.True(t, ok)
	first := inst.Created.Truncate(cloud.MetricPeriod).Add(cloud.MetricPeriod) // Cloud Eye's first average of it
	ended := first.Add(cloud.MetricPeriod)

	var resizedAt time.Time
	for w.clock.Now().Before(ended.Add(5 * time.Minute)) {
		now := w.clock.Now()
		w.sync()
		if resizedAt.IsZero() && w.sim.Calls(otcsim.OpResize) > 0 {
			resizedAt = now
		}
		if now.After(first) && now.Before(ended) {
			require.Zero(t, w.sim.Calls(otcsim.OpResize), "at %s the first period (%s) still runs: no window held yet",
				now.Format(time.TimeOnly), first.Format(time.TimeOnly))
			require.Equal(t, reconcile.ReasonAutopilotWatching, apCondition(w).Reason)
		}
		w.clock.Advance(20 * time.Second)
	}
	require.False(t, resizedAt.IsZero(), "a full period at 95 %% holds a 5m window: one resize")
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpResize))
	assert.False(t, resizedAt.Before(ended), "resized at %s, before the first period ended at %s",
		resizedAt.Format(time.TimeOnly), ended.Format(time.TimeOnly))
	assert.Contains(t, w.status().Autopilot.Last.Reason, "rds001_cpu_util at least 95.0% >= 90% for 5m0s")
}

func TestAutopilotAtLimit(t *testing.T) {
	w, _ := newAutopilotWorld(t, func(s *v1alpha1.RdsSpec) { s.Autopilotmaxvcpus = 2 })
	w.pin(cloud.MetricCPU, 99)
	w.clock.Advance(30 * time.Minute)
	before := w.sim.MutatingCalls()
	w.run(20, time.Minute)
	assert.Equal(t, before, w.sim.MutatingCalls(), "at the limit: no call")
	assert.LessOrEqual(t, w.sim.Calls(otcsim.OpListFlavors), 4, "20 minutes at the limit: the flavor list is kept 5 minutes, not listed per sync")
	c := apCondition(w)
	assert.Equal(t, metav1.ConditionFalse, c.Status)
	assert.Equal(t, reconcile.ReasonAutopilotAtLimit, c.Reason)
	assert.Contains(t, c.Message, "autopilotmaxvcpus 2")
	ready := w.condition(v1alpha1.ConditionReady)
	assert.Equal(t, metav1.ConditionTrue, ready.Status, "Ready keeps its meaning")
}

func TestAutopilotMetricsUnavailable(t *testing.T) {
	w := newDay2World(t, func(s *v1alpha1.RdsSpec) { s.Autopilot = true }, nil) // no view: no metrics reader
	w.pin(cloud.MetricCPU, 99)
	w.clock.Advance(30 * time.Minute)
	before := w.sim.MutatingCalls()
	w.run(3, time.Minute)
	assert.Equal(t, before, w.sim.MutatingCalls())
	c := apCondition(w)
	assert.Equal(t, metav1.ConditionFalse, c.Status)
	assert.Equal(t, reconcile.ReasonAutopilotMetricsUnavailable, c.Reason)
}

func TestAutopilotFleetReads(t *testing.T) {
	w, v := newAutopilotWorld(t, nil)
	w.clock.Advance(30 * time.Minute)
	before := v.MetricsStats()
	w.run(30, 10*time.Second) // 5 minutes of calls every 10 s
	st := v.MetricsStats()
	assert.LessOrEqual(t, st.BatchQueries-before.BatchQueries, int64(6), "one Cloud Eye batch query a minute, not one per sync")
	assert.LessOrEqual(t, w.sim.Calls(otcsim.OpBatchListMetricData), 6)
	assert.Zero(t, w.sim.Calls(otcsim.OpShowMetricData))
}

func TestAutopilotNativeStorage(t *testing.T) {
	w, _ := newAutopilotWorld(t, func(s *v1alpha1.RdsSpec) { s.Autopilotmaxvolume = 100 })
	w.run(3, time.Minute)
	assert.Zero(t, w.sim.Calls(otcsim.OpManageAutoScaling), "the policy was set once, by the first calls")
	p, err := w.client.GetStorageAutoscaling(context.Background(), w.status().ID)
	require.NoError(t, err)
	assert.Equal(t, cloud.StorageAutoscaling{Enabled: true, LimitGB: 100, TriggerFreePercent: 10}, p)
	assert.Equal(t, &v1alpha1.AutopilotStorage{LimitGB: 100, TriggerFreePercent: 10}, w.status().Autopilot.Storage)

	// OTC grows the volume by itself: reported, kept, never fought.
	w.pin(cloud.MetricDisk, 95)
	w.clock.Advance(otcsim.DefaultDurations().Enlarge + time.Second)
	require.Equal(t, 50, w.view().VolumeSize, "the simulator's autoscaling grew the volume")
	w.pin(cloud.MetricDisk, 50)
	w.run(20, time.Minute)
	assert.Equal(t, 50, w.view().VolumeSize)
	assert.Zero(t, w.sim.Calls(otcsim.OpEnlargeVolume), "the controller grew nothing itself")
	assert.Zero(t, w.sim.Calls(otcsim.OpManageAutoScaling), "the policy is not rewritten")
	last := w.status().Autopilot.Last
	require.NotNil(t, last)
	assert.Equal(t, reconcile.APCloudEnlarge, last.Action)
	assert.Equal(t, "40GB", last.From)
	assert.Equal(t, "50GB", last.To)
	assert.Equal(t, 40, w.mc.Rds().Spec.Volumesize)
	w.requireSettled("after OTC's autoscaling")

	// Autopilot off: OTC's autoscaling is switched off, the volume stays.
	w.edit(func(s *v1alpha1.RdsSpec) { s.Autopilot = false })
	w.run(3, time.Minute)
	p, err = w.client.GetStorageAutoscaling(context.Background(), w.status().ID)
	require.NoError(t, err)
	assert.False(t, p.Enabled)
	assert.Equal(t, 50, w.view().VolumeSize)
	w.requireSettled("autopilot off after OTC's growth")
}

func TestAutopilotFallbackStorage(t *testing.T) {
	w, _ := newAutopilotWorld(t, func(s *v1alpha1.RdsSpec) {
		s.Datastoretype, s.Datastoreversion, s.Flavorref = "SQLServer", "2022_SE", "rds.mssql.se.s3.large.4"
		s.Autopilotmaxvolume = 60
	})
	w.pin(cloud.MetricDisk, 95)
	w.clock.Advance(10 * time.Minute) // Cloud Eye's first 5-minute average of the new instance
	w.run(3, time.Minute)             // the view's reading may be a minute old
	require.Equal(t, 1, w.sim.Calls(otcsim.OpEnlargeVolume), "SQL Server has no native autoscaling: autopilot grows the volume")
	assert.Zero(t, w.sim.Calls(otcsim.OpManageAutoScaling))
	assert.Equal(t, 50, w.view().VolumeSize)
	require.NotNil(t, w.status().Autopilot.Last)
	assert.Equal(t, reconcile.APEnlargeVolume, w.status().Autopilot.Last.Action)
	assert.Equal(t, "40GB", w.status().Autopilot.Last.From)
	assert.Equal(t, "50GB", w.status().Autopilot.Last.To)
	assert.True(t, strings.HasPrefix(w.status().Autopilot.Last.Reason, cloud.MetricDisk+" 95.0%"))

	// The simulator scales the usage to the new size (95% of 40 GB is 76% of 50 GB): the disk
	// fills again. After the cooldown the next step reaches the limit, then stops there.
	w.pin(cloud.MetricDisk, 95)
	w.run(200, time.Minute)
	assert.Equal(t, 60, w.view().VolumeSize)
	assert.Equal(t, 2, w.sim.Calls(otcsim.OpEnlargeVolume))
	w.pin(cloud.MetricDisk, 95) // full again, at the limit
	w.run(10, time.Minute)
	assert.Equal(t, 2, w.sim.Calls(otcsim.OpEnlargeVolume), "at the limit: no call")
	assert.Equal(t, reconcile.ReasonAutopilotAtLimit, apCondition(w).Reason)
	assert.Equal(t, metav1.ConditionTrue, w.condition(v1alpha1.ConditionSynced).Status, "volumesize 40 is a floor, not drift")
}

func TestAutopilotSpecRaisedAbove(t *testing.T) {
	w, _ := newAutopilotWorld(t, nil)
	w.pin(cloud.MetricCPU, 95)
	w.clock.Advance(30 * time.Minute)
	w.run(5, time.Minute)
	require.Equal(t, "rds.mysql.n1.xlarge.2", w.view().Flavor)
	w.pin(cloud.MetricCPU, 20)
	// The user raises flavorref above what autopilot chose: that resizes, once.
	w.edit(func(s *v1alpha1.RdsSpec) { s.Flavorref = "rds.mysql.n1.2xlarge.2" })
	w.run(10, time.Minute)
	assert.Equal(t, "rds.mysql.n1.2xlarge.2", w.view().Flavor)
	assert.Equal(t, 2, w.sim.Calls(otcsim.OpResize))
	w.run(30, time.Minute)
	assert.Equal(t, 2, w.sim.Calls(otcsim.OpResize), "and stays")
	w.requireSettled("after the user's resize")
}

func TestAutopilotLostAnswer(t *testing.T) {
	w, _ := newAutopilotWorld(t, nil)
	w.pin(cloud.MetricCPU, 95)
	w.clock.Advance(30 * time.Minute)
	w.run(5, time.Minute)
	require.Equal(t, "rds.mysql.n1.xlarge.2", w.view().Flavor)
	w.pin(cloud.MetricCPU, 20)
	// The answer that recorded autopilot's resize was lost: status does not remember it.
	st := w.status()
	st.Autopilot = nil
	w.mc.SetStatus(st)
	w.run(30, time.Minute)
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpResize), "the larger flavor is kept, not resized back")
	assert.Equal(t, "rds.mysql.n1.xlarge.2", w.status().Autopilot.Flavor, "and remembered again")
	w.requireSettled("after a lost answer")
}

// TestAutopilotLostAnswerOtherReplica: the answer of autopilot's resize is lost and the next calls
// go to another replica (or a restarted process), which has no memory of the change. Pressure goes
// on; the change found on the instance starts the cooldown: no second resize within it.
func TestAutopilotLostAnswerOtherReplica(t *testing.T) {
	w, _ := newAutopilotWorld(t, func(s *v1alpha1.RdsSpec) { s.Autopilotmaxvcpus = 16 })
	w.pin(cloud.MetricCPU, 95)
	w.clock.Advance(30 * time.Minute)
	before := w.status()
	w.sync()
	require.Equal(t, 1, w.sim.Calls(otcsim.OpResize))
	w.mc.SetStatus(before) // the answer was lost
	v := view.New(w.client, view.Options{Now: w.clock.Now, Logger: slog.Default()})
	w.r = reconcile.New(reconcile.Config{Cloud: v, Now: w.clock.Now, CallTimeout: 5 * time.Second})
	w.run(40, time.Minute) // within the cooldown of 1h
	assert.Equal(t, "rds.mysql.n1.xlarge.2", w.view().Flavor)
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpResize), "one resize per cooldown, whichever replica answers")
	assert.Equal(t, reconcile.ReasonAutopilotCooldown, apCondition(w).Reason)
}
