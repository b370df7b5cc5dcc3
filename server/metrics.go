package server

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the service's Prometheus metrics.
type Metrics struct {
	hookDuration *prometheus.HistogramVec
	cloudCalls   *prometheus.CounterVec
	cloudLatency *prometheus.HistogramVec
	logsReads    *prometheus.HistogramVec
}

// NewMetrics registers the metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		hookDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "rds_hooks_hook_duration_seconds",
			Help:    "Time to answer a Metacontroller hook call, by hook and outcome.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"hook", "outcome"}),
		cloudCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rds_hooks_otc_calls_total",
			Help: "Calls to the OTC API, by operation and result.",
		}, []string{"operation", "result"}),
		cloudLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "rds_hooks_otc_call_duration_seconds",
			Help:    "Time of calls to the OTC API, by operation.",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"operation"}),
		logsReads: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "rds_hooks_logs_read_duration_seconds",
			Help:    "Time to answer a log Job's read on the logs port, by outcome (ok, unauthorized, expired, forbidden, ...).",
			Buckets: []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"outcome"}),
	}
	reg.MustRegister(m.hookDuration, m.cloudCalls, m.cloudLatency, m.logsReads)
	return m
}

// ObserveCloudCall records one OTC call; the cloud adapter calls it.
func (m *Metrics) ObserveCloudCall(op, result string, d time.Duration) {
	m.cloudCalls.WithLabelValues(op, result).Inc()
	m.cloudLatency.WithLabelValues(op).Observe(d.Seconds())
}

func (m *Metrics) observeHook(hook, outcome string, d time.Duration) {
	m.hookDuration.WithLabelValues(hook, outcome).Observe(d.Seconds())
}

func (m *Metrics) observeLogsRead(outcome string, d time.Duration) {
	m.logsReads.WithLabelValues(outcome).Observe(d.Seconds())
}
