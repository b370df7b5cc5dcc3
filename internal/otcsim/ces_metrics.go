package otcsim

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Cloud Eye constants for RDS.
const (
	namespaceRDS   = "SYS.RDS"
	metricDiskUtil = "rds039_disk_util"
	maxDatapoints  = 3000 // per query, as the batch API bounds n_metrics*(to-from)/interval
)

// CES error codes used by the simulator (the docs list ces.0001–ces.0028 without a stable mapping).
func errCESParam(format string, args ...any) *apiError {
	return errorf(http.StatusBadRequest, "ces.0014", "Parameter error: "+format, args...)
}

// validPeriods are the aggregation periods in seconds; 1 means raw data (one point a minute).
var validPeriods = []int{1, 300, 1200, 3600, 14400, 86400}

var validFilters = []string{"average", "max", "min", "sum", "variance"}

// metricDef is a metric RDS reports, with the shape of its synthetic values.
type metricDef struct {
	name, unit  string
	engines     []string // engine shorts; empty = all
	base, swing float64  // values wander in base ± swing
	max         float64  // upper bound (0 = none)
}

var rdsMetrics = []metricDef{
	{name: "rds001_cpu_util", unit: "%", base: 12, swing: 8, max: 100},
	{name: "rds002_mem_util", unit: "%", base: 45, swing: 10, max: 100},
	{name: metricDiskUtil, unit: "%", base: 20, swing: 1, max: 100},
	{name: "rds003_iops", unit: "count/s", base: 60, swing: 40},
	{name: "rds004_bytes_in", unit: "byte/s", base: 20000, swing: 15000},
	{name: "rds005_bytes_out", unit: "byte/s", base: 40000, swing: 30000},
	{name: "rds006_conn_count", unit: "count", engines: []string{"mysql"}, base: 12, swing: 6},
	{name: "rds008_qps", unit: "count/s", engines: []string{"mysql"}, base: 150, swing: 100},
	{name: "rds009_tps", unit: "count/s", engines: []string{"mysql"}, base: 40, swing: 25},
	{name: "rds042_database_connections", unit: "count", engines: []string{"pg"}, base: 10, swing: 5},
	{name: "rds046_replication_lag", unit: "s", engines: []string{"pg"}, base: 0.5, swing: 0.4},
}

func findMetric(name string, e *engine) *metricDef {
	for i, m := range rdsMetrics {
		if m.name == name && (len(m.engines) == 0 || slices.Contains(m.engines, e.short)) {
			return &rdsMetrics[i]
		}
	}
	return nil
}

// nodeDimensions are the per-node dimension names of each engine.
var nodeDimensions = map[string]string{
	"mysql": "rds_instance_id", "pg": "postgresql_instance_id", "mssql": "rds_instance_sqlserver_id",
}

// SetMetric pins a metric of an instance to value (e.g. rds001_cpu_util to 93.5) instead of the
// synthetic curve. Setting rds039_disk_util near full triggers storage autoscaling if enabled.
func (s *Sim) SetMetric(instanceID, metric string, value float64) {
	now := s.lockAt()
	defer s.mu.Unlock()
	s.metrics[metricKey{instanceID: instanceID, metric: metric}] = value
	s.advance(now) // an autoscaling trigger starts now, not at the next request
}

// metricKey names a pinned metric.
type metricKey struct{ instanceID, metric string }

// instanceForDimension finds the instance a CES dimension names: the engine's instance dimension
// (rds_cluster_id for MySQL) with the instance id, or its node dimension with a node id.
func (s *Sim) instanceForDimension(name, value string) *instance {
	for _, in := range s.instances {
		if name == in.engine.dimension && value == in.id {
			return in
		}
		if name == nodeDimensions[in.engine.short] {
			for _, n := range in.nodes {
				if n.id == value {
					return in
				}
			}
		}
	}
	return nil
}

// sample is the value of a metric at a minute: pinned, or a deterministic wander around its base.
func (s *Sim) sample(in *instance, m *metricDef, minute int64) float64 {
	if v, ok := s.metrics[metricKey{instanceID: in.id, metric: m.name}]; ok {
		return v
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(in.id + "/" + m.name))
	_ = binary.Write(h, binary.LittleEndian, minute)
	noise := float64(h.Sum64()%20001)/10000 - 1 // [-1, 1]
	v := m.base + m.swing*noise
	if m.max > 0 {
		v = min(v, m.max)
	}
	return math.Round(max(v, 0)*100) / 100
}

// datapoints aggregates a metric of an instance over [from, to] (ms) by period.
func (s *Sim) datapoints(in *instance, m *metricDef, from, to int64, period int, filter string, now time.Time) []map[string]any {
	out := []map[string]any{}
	if in == nil || in.created.IsZero() {
		return out
	}
	step := int64(period) * 1000
	if period == 1 {
		step = 60_000
	}
	start := max(from, in.created.UnixMilli())
	end := min(to, now.UnixMilli())
	first := (start + step - 1) / step * step // from is rounded up to the period
	if n := (end - first) / step; n > maxDatapoints {
		first += (n - maxDatapoints) * step
	}
	// NOTE: the period still running is answered too, with its value so far (the minutes begun),
	// as Cloud Eye's series do: a client must not read it as a full period.
	for ts := first; ts <= end; ts += step {
		var vals []float64
		for minute := ts / 60_000; minute*60_000 < ts+step && minute*60_000 <= now.UnixMilli(); minute++ {
			vals = append(vals, s.sample(in, m, minute))
		}
		out = append(out, map[string]any{filter: aggregate(vals, filter), "timestamp": ts, "unit": m.unit})
	}
	return out
}

func aggregate(vals []float64, filter string) float64 {
	var sum, lo, hi float64 = 0, math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		sum += v
		lo, hi = min(lo, v), max(hi, v)
	}
	mean := sum / float64(len(vals))
	var r float64
	switch filter {
	case "max":
		r = hi
	case "min":
		r = lo
	case "sum":
		r = sum
	case "variance":
		for _, v := range vals {
			r += (v - mean) * (v - mean)
		}
		r /= float64(len(vals))
	default:
		r = mean
	}
	return math.Round(r*100) / 100
}

// handleShowMetricData serves GET /ces/V1.0/{project}/metric-data.
// Only the requested aggregate is in each datapoint, with the unit; an unknown instance or a
// metric the engine does not report gives an empty list.
func (s *Sim) handleShowMetricData(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	for _, k := range []string{"namespace", "metric_name", "dim.0", "filter", "period", "from", "to"} {
		if q.Get(k) == "" {
			writeError(w, svcCES, errCESParam("%s is required", k))
			return
		}
	}
	period, err1 := strconv.Atoi(q.Get("period"))
	from, err2 := strconv.ParseInt(q.Get("from"), 10, 64)
	to, err3 := strconv.ParseInt(q.Get("to"), 10, 64)
	filter := q.Get("filter")
	switch {
	case err1 != nil || !slices.Contains(validPeriods, period):
		writeError(w, svcCES, errCESParam("period must be one of 1, 300, 1200, 3600, 14400, 86400"))
		return
	case err2 != nil || err3 != nil || from >= to:
		writeError(w, svcCES, errCESParam("from and to are ms timestamps with from < to"))
		return
	case !slices.Contains(validFilters, filter):
		writeError(w, svcCES, errCESParam("filter must be one of %s", strings.Join(validFilters, ", ")))
		return
	}
	dimName, dimValue, ok := strings.Cut(q.Get("dim.0"), ",")
	if !ok {
		writeError(w, svcCES, errCESParam("dim.0 must be name,value"))
		return
	}
	now := s.lockAt()
	defer s.mu.Unlock()
	points := []map[string]any{}
	if q.Get("namespace") == namespaceRDS {
		if in := s.instanceForDimension(dimName, dimValue); in != nil {
			if m := findMetric(q.Get("metric_name"), in.engine); m != nil {
				points = s.datapoints(in, m, from, to, period, filter, now)
			}
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"datapoints": points, "metric_name": q.Get("metric_name")})
}

// handleBatchListMetricData serves POST /ces/V1.0/{project}/batch-query-metric-data (200).
func (s *Sim) handleBatchListMetricData(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Metrics []struct {
			Namespace  string `json:"namespace"`
			MetricName string `json:"metric_name"`
			Dimensions []struct {
				Name  string `json:"name"`
				Value string `json:"value"`
			} `json:"dimensions"`
		} `json:"metrics"`
		From   int64  `json:"from"`
		To     int64  `json:"to"`
		Period string `json:"period"` // NOTE: a string here, an int in metric-data
		Filter string `json:"filter"`
	}
	if e := decodeBody(r, &req); e != nil {
		writeError(w, svcCES, errCESParam("%s", e.Message))
		return
	}
	period, err := strconv.Atoi(req.Period)
	switch {
	case len(req.Metrics) == 0 || len(req.Metrics) > 10:
		writeError(w, svcCES, errCESParam("between 1 and 10 metrics are required"))
		return
	case err != nil || !slices.Contains(validPeriods, period):
		writeError(w, svcCES, errCESParam("period must be one of 1, 300, 1200, 3600, 14400, 86400"))
		return
	case req.From <= 0 || req.From >= req.To:
		writeError(w, svcCES, errCESParam("from and to are ms timestamps with from < to"))
		return
	case !slices.Contains(validFilters, req.Filter):
		writeError(w, svcCES, errCESParam("filter must be one of %s", strings.Join(validFilters, ", ")))
		return
	}
	interval := int64(max(period, 60)) * 1000
	if int64(len(req.Metrics))*(req.To-req.From)/interval > maxDatapoints {
		writeError(w, svcCES, errCESParam("n_metrics*(to-from)/period must not exceed %d", maxDatapoints))
		return
	}
	now := s.lockAt()
	defer s.mu.Unlock()
	out := []map[string]any{}
	for _, m := range req.Metrics {
		points, unit := []map[string]any{}, ""
		if m.Namespace == namespaceRDS && len(m.Dimensions) > 0 {
			if in := s.instanceForDimension(m.Dimensions[0].Name, m.Dimensions[0].Value); in != nil {
				if def := findMetric(m.MetricName, in.engine); def != nil {
					points, unit = s.datapoints(in, def, req.From, req.To, period, req.Filter, now), def.unit
				}
			}
		}
		for _, p := range points {
			delete(p, "unit") // the batch API puts the unit on the metric
		}
		out = append(out, map[string]any{
			"namespace": m.Namespace, "metric_name": m.MetricName, "dimensions": m.Dimensions,
			"datapoints": points, "unit": unit,
		})
	}
	writeJSON(w, http.StatusOK, map[string]any{"metrics": out})
}

// latestValue is the newest sample of a metric (for alarm evaluation).
func (s *Sim) latestValue(in *instance, m *metricDef, now time.Time) (float64, bool) {
	if in == nil || in.created.IsZero() {
		return 0, false
	}
	return s.sample(in, m, now.UnixMilli()/60_000), true
}
