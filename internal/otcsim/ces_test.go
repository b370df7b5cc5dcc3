package otcsim

import (
	"strconv"
	"testing"
	"time"

	golangsdk "github.com/opentelekomcloud/gophertelekomcloud"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/ces/v1/alarms"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/ces/v1/metricdata"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func cesClient(t *testing.T, e *env) *golangsdk.ServiceClient {
	t.Helper()
	c, err := openstack.NewCESClient(e.provider, golangsdk.EndpointOpts{})
	require.NoError(t, err)
	return c
}

func ms(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }

func TestShowMetricData(t *testing.T) {
	e := newEnv(t, Options{})
	ces := cesClient(t, e)
	id := e.createActive(t, createOpts("metrics-01"))
	e.clock.Advance(time.Hour)
	now := e.clock.Now()

	opts := metricdata.ShowMetricDataOpts{
		Namespace: "SYS.RDS", MetricName: "rds001_cpu_util", Dim0: "rds_cluster_id," + id,
		Filter: "average", Period: 1, From: ms(now.Add(-5 * time.Minute)), To: ms(now),
	}
	data, err := metricdata.ShowMetricData(ces, opts)
	require.NoError(t, err)
	assert.Equal(t, "rds001_cpu_util", data.MetricName)
	require.Len(t, data.Datapoints, 5, "one point a minute from the first full minute")
	for _, p := range data.Datapoints {
		assert.Equal(t, "%", p.Unit)
		assert.InDelta(t, 12, p.Average, 8)
		assert.Zero(t, p.Max, "only the requested aggregate")
	}

	again, err := metricdata.ShowMetricData(ces, opts)
	require.NoError(t, err)
	assert.Equal(t, data, again, "samples are deterministic")

	e.sim.SetMetric(id, "rds001_cpu_util", 93.5)
	data, err = metricdata.ShowMetricData(ces, opts)
	require.NoError(t, err)
	assert.Equal(t, 93.5, data.Datapoints[len(data.Datapoints)-1].Average)

	// Aggregated over 5 minutes.
	opts.Period, opts.Filter, opts.From = 300, "max", ms(now.Add(-time.Hour))
	data, err = metricdata.ShowMetricData(ces, opts)
	require.NoError(t, err)
	assert.Len(t, data.Datapoints, 12)

	// An unknown instance or an engine's foreign metric has no data.
	opts.Dim0 = "rds_cluster_id,nope"
	data, err = metricdata.ShowMetricData(ces, opts)
	require.NoError(t, err)
	assert.Empty(t, data.Datapoints)
	opts.Dim0, opts.MetricName = "rds_cluster_id,"+id, "rds042_database_connections"
	data, err = metricdata.ShowMetricData(ces, opts)
	require.NoError(t, err)
	assert.Empty(t, data.Datapoints)

	opts.Period = 60
	_, err = metricdata.ShowMetricData(ces, opts)
	var e400 golangsdk.ErrDefault400
	require.ErrorAs(t, err, &e400)
	assert.Contains(t, string(e400.Body), `"http_code":"400"`)
}

func TestBatchListMetricData(t *testing.T) {
	e := newEnv(t, Options{})
	ces := cesClient(t, e)
	id := e.createActive(t, createOpts("metrics-02"))
	e.clock.Advance(time.Hour)
	now := e.clock.Now()

	dims := []metricdata.MetricsDimension{{Name: "rds_cluster_id", Value: id}}
	var metrics []metricdata.Metric
	for _, m := range []string{"rds001_cpu_util", "rds002_mem_util", "rds039_disk_util"} {
		metrics = append(metrics, metricdata.Metric{Namespace: "SYS.RDS", MetricName: m, Dimensions: dims})
	}
	res, err := metricdata.BatchListMetricData(ces, metricdata.BatchListMetricDataOpts{
		Metrics: metrics, From: now.Add(-5 * time.Minute).UnixMilli(), To: now.UnixMilli(), Period: "1", Filter: "average",
	})
	require.NoError(t, err)
	require.Len(t, res, 3)
	for _, m := range res {
		assert.Equal(t, "%", m.Unit)
		assert.Equal(t, dims, m.Dimensions)
		assert.Len(t, m.Datapoints, 5)
	}

	_, err = metricdata.BatchListMetricData(ces, metricdata.BatchListMetricDataOpts{
		Metrics: metrics, From: now.Add(-7 * 24 * time.Hour).UnixMilli(), To: now.UnixMilli(), Period: "1", Filter: "average",
	})
	assert.IsType(t, golangsdk.ErrDefault400{}, err, "3 metrics × a week of minutes is too many points")
}

// TestMetricRunningPeriod: like Cloud Eye, an aggregated series ends with the period still running,
// answered with its value so far (the average of the minutes begun), not held back until it ends.
func TestMetricRunningPeriod(t *testing.T) {
	e := newEnv(t, Options{})
	ces := cesClient(t, e)
	id := e.createActive(t, createOpts("metrics-03"))
	e.clock.Advance(time.Hour)
	start := e.clock.Now().Truncate(5 * time.Minute)
	e.clock.Advance(start.Add(2*time.Minute + 30*time.Second).Sub(e.clock.Now())) // the minutes :00, :01, :02 begun
	now := e.clock.Now()

	dims := []metricdata.MetricsDimension{{Name: "rds_cluster_id", Value: id}}
	batch := func(period string) []metricdata.DatapointForBatchMetric {
		res, err := metricdata.BatchListMetricData(ces, metricdata.BatchListMetricDataOpts{
			Metrics: []metricdata.Metric{{Namespace: "SYS.RDS", MetricName: "rds001_cpu_util", Dimensions: dims}},
			From:    now.Add(-20 * time.Minute).UnixMilli(), To: now.UnixMilli(), Period: period, Filter: "average",
		})
		require.NoError(t, err)
		require.Len(t, res, 1)
		return res[0].Datapoints
	}
	periods, minutes := batch("300"), batch("1")
	last := periods[len(periods)-1]
	assert.Equal(t, start.UnixMilli(), last.Timestamp, "the running period is answered")
	var sum float64
	var n int
	for _, p := range minutes {
		if p.Timestamp >= start.UnixMilli() {
			sum += p.Average
			n++
		}
	}
	require.Equal(t, 3, n)
	assert.InDelta(t, sum/3, last.Average, 0.01, "its value so far: the minutes begun")

	e.sim.SetMetric(id, "rds001_cpu_util", 95)
	periods = batch("300")
	assert.Equal(t, 95.0, periods[len(periods)-1].Average)
}

func TestAlarms(t *testing.T) {
	e := newEnv(t, Options{})
	ces := cesClient(t, e)
	id := e.createActive(t, createOpts("alarmed-01"))

	enabled := true
	create := alarms.CreateAlarmOpts{
		AlarmName: "rds-cpu-high",
		Metric: alarms.MetricForAlarm{Namespace: "SYS.RDS", MetricName: "rds001_cpu_util",
			Dimensions: []alarms.MetricsDimension{{Name: "rds_cluster_id", Value: id}}},
		Condition:    alarms.Condition{Period: 300, Filter: "average", ComparisonOperator: ">=", Value: 80, Unit: "%", Count: 3},
		AlarmEnabled: &enabled, AlarmLevel: 2,
		AlarmActions: []alarms.AlarmActions{{Type: "notification", NotificationList: []string{"urn:smn:eu-de:x:topic"}}},
	}
	alarmID, err := alarms.CreateAlarm(ces, create)
	require.NoError(t, err)
	assert.Regexp(t, `^al\d{13}[A-Za-z0-9]{9}$`, alarmID)
	create.AlarmName = "rds-disk-high"
	second, err := alarms.CreateAlarm(ces, create)
	require.NoError(t, err)

	shown, err := alarms.ShowAlarm(ces, alarmID)
	require.NoError(t, err)
	require.Len(t, shown, 1)
	assert.Equal(t, "rds-cpu-high", shown[0].AlarmName)
	assert.Equal(t, AlarmOK, shown[0].AlarmState, "cpu wanders around 12%")
	assert.True(t, shown[0].AlarmEnabled)

	e.sim.SetMetric(id, "rds001_cpu_util", 95)
	shown, err = alarms.ShowAlarm(ces, alarmID)
	require.NoError(t, err)
	assert.Equal(t, AlarmAlarm, shown[0].AlarmState)

	require.NoError(t, e.sim.SetAlarmState(alarmID, AlarmInsufficientData))
	shown, err = alarms.ShowAlarm(ces, alarmID)
	require.NoError(t, err)
	assert.Equal(t, AlarmInsufficientData, shown[0].AlarmState)

	list, err := alarms.ListAlarms(ces, alarms.ListAlarmsOpts{Limit: 1, Order: "desc"})
	require.NoError(t, err)
	require.Len(t, list.MetricAlarms, 1)
	assert.Equal(t, second, list.MetricAlarms[0].AlarmId)
	assert.Equal(t, 2, list.MetaData.Total)
	assert.Equal(t, second, list.MetaData.Marker)
	next, err := alarms.ListAlarms(ces, alarms.ListAlarmsOpts{Limit: 1, Order: "desc", Start: list.MetaData.Marker})
	require.NoError(t, err)
	require.Len(t, next.MetricAlarms, 1)
	assert.Equal(t, alarmID, next.MetricAlarms[0].AlarmId)

	require.NoError(t, alarms.UpdateAlarmAction(ces, alarmID, alarms.ModifyAlarmActionRequest{AlarmEnabled: false}))
	shown, err = alarms.ShowAlarm(ces, alarmID)
	require.NoError(t, err)
	assert.False(t, shown[0].AlarmEnabled)

	require.NoError(t, alarms.DeleteAlarm(ces, alarmID))
	_, err = alarms.ShowAlarm(ces, alarmID)
	var e404 golangsdk.ErrDefault404
	require.ErrorAs(t, err, &e404)
	assert.Contains(t, string(e404.Body), "ces.0015")

	create.Condition.Period = 7
	_, err = alarms.CreateAlarm(ces, create)
	assert.IsType(t, golangsdk.ErrDefault400{}, err)
	assert.Equal(t, 3, e.sim.Calls(OpCreateAlarm))
}
