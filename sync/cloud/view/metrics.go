package view

import (
	"context"
	"slices"
	"time"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// Autopilot's metrics, fleet-wide.
//
// NOTE: why batch reads and not Cloud Eye alarms. The original created three CES alarm rules per
// instance that called it back through SMN, which needs an inbound HTTPS endpoint and leaves rules
// behind in the tenant's project that must be created, kept in sync with the spec and deleted. A
// batch query needs nothing in the tenant's project and nothing inbound: one POST reads 10 metrics
// (three per instance), so a project with n autopilot instances costs ceil(3n/10) Cloud Eye calls
// per interval, whatever the number of syncs. The decision stays in the controller, where the
// window, the thresholds and the cooldown are the spec's and are table-tested.
//
// The rules: an instance is registered by its first read and dropped when no read asked for it
// for metricsForget. A read that finds the last reading older than MetricsInterval starts a new
// one, one at a time (single flight), for every registered instance, and waits for it until its
// ctx ends (then it is served the older reading): so the same request twice sees the same reading.
// Other reads are served the latest reading at most maxAge old; one served nothing waits for the
// running reading until its ctx ends, then says ErrMetricsUnavailable. OTC's storage autoscaling
// policy is read in the same reading, at most every metricsPolicyEvery per instance.

// Defaults of the metrics part of Options.
const (
	DefaultMetricsInterval = time.Minute
	// DefaultMetricsWindow is how far back a reading goes: the longest autopilotwindow asked.
	DefaultMetricsWindow = 15 * time.Minute
	metricsForget        = 30 * time.Minute
	metricsPolicyEvery   = 5 * time.Minute
	maxMetricsWindow     = 24 * time.Hour
)

// metricsState is the view's fleet-wide reading. It lives under View.mu.
type metricsState struct {
	asked    map[string]*metricsAsk // instance -> what reads asked for
	readings map[string]*cloud.InstanceMetrics
	readAt   time.Time // start of the last reading, successful or not
	reading  chan struct{}
	calls    int64 // Cloud Eye batch queries made
}

type metricsAsk struct {
	engine, volumeType string
	window             time.Duration
	at                 time.Time // last read that asked
}

// MetricsStats count the view's Cloud Eye work.
type MetricsStats struct {
	Readings, BatchQueries int64
}

func (v *View) metricsInit() {
	if v.metrics.asked == nil {
		v.metrics.asked = map[string]*metricsAsk{}
		v.metrics.readings = map[string]*cloud.InstanceMetrics{}
	}
}

// InstanceMetrics implements cloud.MetricsReader.
func (v *View) InstanceMetrics(ctx context.Context, inst *cloud.Instance, window, maxAge time.Duration) (*cloud.InstanceMetrics, error) {
	mon, ok := v.Client.(cloud.Monitor)
	if !ok || inst == nil {
		return nil, cloud.ErrMetricsUnavailable
	}
	now := v.opts.Now()
	v.mu.Lock()
	v.metricsInit()
	a := v.metrics.asked[inst.ID]
	if a == nil {
		a = &metricsAsk{}
		v.metrics.asked[inst.ID] = a
	}
	a.engine, a.volumeType, a.at = inst.Engine, inst.Volume.Type, now
	a.window = min(max(window, a.window, cloud.MetricPeriod), maxMetricsWindow)
	// A reader not served waits for the running reading; if that one began too long ago to serve
	// it (it ran while the reader's bound passed), for one more.
	for range 2 {
		started := false
		if now.Sub(v.metrics.readAt) >= v.opts.MetricsInterval && v.metrics.reading == nil {
			v.startReading(mon)
			started = true
		}
		r, wait := v.servedMetrics(inst.ID, now, maxAge), v.metrics.reading
		v.mu.Unlock()
		if r != nil && !started {
			return r, nil
		}
		if wait == nil {
			return nil, cloud.ErrMetricsUnavailable
		}
		select {
		case <-wait:
		case <-ctx.Done():
			if r != nil {
				return r, nil
			}
			return nil, cloud.ErrMetricsUnavailable
		}
		now = v.opts.Now()
		v.mu.Lock()
	}
	defer v.mu.Unlock()
	if r := v.servedMetrics(inst.ID, now, maxAge); r != nil {
		return r, nil
	}
	return nil, cloud.ErrMetricsUnavailable
}

// servedMetrics returns a copy of the instance's reading if it is at most maxAge old. v.mu held.
func (v *View) servedMetrics(id string, now time.Time, maxAge time.Duration) *cloud.InstanceMetrics {
	r := v.metrics.readings[id]
	if r == nil || now.Sub(r.At) > maxAge {
		return nil
	}
	out := *r
	if r.Storage != nil {
		s := *r.Storage
		out.Storage = &s
	}
	return &out // Points are never changed after a reading: sharing them is safe
}

// MetricsStats returns the counters of the metrics reading.
func (v *View) MetricsStats() MetricsStats {
	v.mu.Lock()
	defer v.mu.Unlock()
	return MetricsStats{Readings: v.metricsReadings.Load(), BatchQueries: v.metrics.calls}
}

// startReading reads every registered instance in the background. v.mu held; no reading runs.
func (v *View) startReading(mon cloud.Monitor) {
	start := v.opts.Now()
	v.metrics.readAt = start
	done := make(chan struct{})
	v.metrics.reading = done
	type job struct {
		id         string
		ask        metricsAsk
		readPolicy bool
	}
	var jobs []job
	var window time.Duration
	for id, a := range v.metrics.asked {
		if start.Sub(a.at) >= metricsForget {
			delete(v.metrics.asked, id)
			delete(v.metrics.readings, id)
			continue
		}
		old := v.metrics.readings[id]
		readPolicy := cloud.NativeStorageAutoscaling(a.engine, a.volumeType) &&
			(old == nil || old.Storage == nil || start.Sub(old.At) >= metricsPolicyEvery || v.policyStale[id])
		jobs = append(jobs, job{id: id, ask: *a, readPolicy: readPolicy})
		window = max(window, a.window)
	}
	slices.SortFunc(jobs, func(a, b job) int {
		if a.id < b.id {
			return -1
		}
		return 1
	})
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(context.Background(), v.opts.ListTimeout)
		defer cancel()
		// One more period than the window: Cloud Eye rounds from up to the period.
		from, to := start.Add(-window-cloud.MetricPeriod), start
		points := map[cloud.MetricQuery][]cloud.Point{}
		failed := map[string]bool{}
		var batch []cloud.MetricQuery
		var calls int64
		flush := func() {
			if len(batch) == 0 {
				return
			}
			calls++
			got, err := mon.BatchMetrics(ctx, batch, from, to)
			if err != nil {
				v.opts.Logger.Warn("reading Cloud Eye for autopilot failed", "error", err.Error())
				for _, q := range batch {
					failed[q.InstanceID] = true
				}
			}
			for q, p := range got {
				points[q] = p
			}
			batch = batch[:0]
		}
		for _, j := range jobs {
			for _, m := range []string{cloud.MetricCPU, cloud.MetricMem, cloud.MetricDisk} {
				if len(batch) == 10 {
					flush()
				}
				batch = append(batch, cloud.MetricQuery{InstanceID: j.id, Engine: j.ask.engine, Metric: m})
			}
		}
		flush()
		policies := map[string]*cloud.StorageAutoscaling{}
		for _, j := range jobs {
			if !j.readPolicy {
				continue
			}
			if p, err := mon.GetStorageAutoscaling(ctx, j.id); err == nil {
				policies[j.id] = &p
			}
		}
		v.mu.Lock()
		defer v.mu.Unlock()
		v.metrics.reading = nil
		v.metrics.calls += calls
		v.metricsReadings.Add(1)
		for _, j := range jobs {
			if failed[j.id] {
				continue // keep the older reading: its age tells the reader
			}
			r := &cloud.InstanceMetrics{At: start, Points: map[string][]cloud.Point{}}
			for _, m := range []string{cloud.MetricCPU, cloud.MetricMem, cloud.MetricDisk} {
				if p := points[cloud.MetricQuery{InstanceID: j.id, Engine: j.ask.engine, Metric: m}]; len(p) > 0 {
					r.Points[m] = p
				}
			}
			switch old := v.metrics.readings[j.id]; {
			case policies[j.id] != nil:
				r.Storage = policies[j.id]
				delete(v.policyStale, j.id)
			case old != nil && !j.readPolicy:
				r.Storage = old.Storage
			}
			v.metrics.readings[j.id] = r
		}
	}()
}

// SetStorageAutoscaling sets the policy and marks the view's copy stale until the next reading.
func (v *View) SetStorageAutoscaling(ctx context.Context, id string, p cloud.StorageAutoscaling) error {
	mon, ok := v.Client.(cloud.Monitor)
	if !ok {
		return cloud.ErrMetricsUnavailable
	}
	err := mon.SetStorageAutoscaling(ctx, id, p)
	v.mu.Lock()
	defer v.mu.Unlock()
	v.metricsInit()
	if r := v.metrics.readings[id]; r != nil && err == nil {
		cp := p
		r.Storage = &cp // what OTC now holds, as far as this process knows
	}
	v.policyStale[id] = true
	return err
}

var _ cloud.MetricsReader = (*View)(nil)
