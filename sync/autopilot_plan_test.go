package reconcile

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

func TestPlanAutopilot(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	normal := map[string]string{"az1": "normal", "az2": "normal"}
	soldOut2 := map[string]string{"az1": "normal", "az2": "sellout"}
	flavors := []cloud.Flavor{
		{SpecCode: "rds.mysql.n1.large.2", VCPUs: "2", RAMGB: 4, Mode: "single", AZStatus: normal},
		{SpecCode: "rds.mysql.n1.large.4", VCPUs: "2", RAMGB: 8, Mode: "single", AZStatus: normal},
		{SpecCode: "rds.mysql.n1.xlarge.2", VCPUs: "4", RAMGB: 8, Mode: "single", AZStatus: soldOut2},
		{SpecCode: "rds.mysql.c2.xlarge", VCPUs: "4", RAMGB: 8, Mode: "single", AZStatus: normal},
		{SpecCode: "rds.mysql.n1.xlarge.2.rr", VCPUs: "4", RAMGB: 8, Mode: "replica", AZStatus: normal},
		{SpecCode: "rds.mysql.n1.xlarge.2.ha", VCPUs: "4", RAMGB: 8, Mode: "ha", AZStatus: normal},
		{SpecCode: "rds.mysql.n1.large.2.ha", VCPUs: "2", RAMGB: 4, Mode: "ha", AZStatus: normal},
		{SpecCode: "rds.mysql.n1.2xlarge.2", VCPUs: "8", RAMGB: 16, Mode: "single", AZStatus: normal},
		{SpecCode: "rds.mysql.n1.10xlarge.2", VCPUs: "40", RAMGB: 80, Mode: "single", AZStatus: normal}, // "40" < "8" as strings
	}
	// held returns a reading with the metric at v for the last 20 minutes: four periods that ended
	// and the one that began now (Cloud Eye answers it with its value so far).
	held := func(metric string, v float64) *cloud.InstanceMetrics {
		m := &cloud.InstanceMetrics{At: now, Points: map[string][]cloud.Point{}}
		for i := 4; i >= 0; i-- {
			m.Points[metric] = append(m.Points[metric], cloud.Point{At: now.Add(-time.Duration(i) * cloud.MetricPeriod), Value: v})
		}
		return m
	}
	// series returns a reading of CPU with a 5-minute average beginning at each offset from now
	// (negative: in the past) at each value.
	series := func(points ...cloud.Point) *cloud.InstanceMetrics {
		return &cloud.InstanceMetrics{At: now, Points: map[string][]cloud.Point{cloud.MetricCPU: points}}
	}
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	settings := autopilotSettings{cpu: 90, mem: 90, disk: 90, window: 15 * time.Minute, cooldown: time.Hour, maxVolume: 100, maxVCPUs: 8}
	window := func(d time.Duration) autopilotSettings { s := settings; s.window = d; return s }
	inst := func(flavor string, size int) *cloud.Instance {
		return &cloud.Instance{Status: cloud.StatusActive, Engine: "SQLServer", Flavor: flavor, Volume: cloud.Volume{Type: "CLOUDSSD", Size: size}}
	}
	cases := map[string]struct {
		reason string
		in     apInput
		action string
		to     string
		cond   string
	}{
		"cpu": {
			reason: "the smallest flavor with more vCPUs; the n1 one is sold out in az2, so c2",
			in:     apInput{inst: inst("rds.mysql.n1.large.2", 40), metrics: held(cloud.MetricCPU, 95)},
			action: APResize, to: "rds.mysql.c2.xlarge",
		},
		"cpu numbers": {
			reason: "vCPUs compare as numbers: 8 before 40",
			in:     apInput{inst: inst("rds.mysql.c2.xlarge", 40), metrics: held(cloud.MetricCPU, 95), s: func() autopilotSettings { s := settings; s.maxVCPUs = 64; return s }()},
			action: APResize, to: "rds.mysql.n1.2xlarge.2",
		},
		"floor not listed": {
			reason: "flavorref no longer listed: its limit (twice its vCPUs) is unknown, and twice the current flavor's would ratchet up every cooldown",
			in: apInput{inst: inst("rds.mysql.c2.xlarge", 40), floorFlav: "rds.mysql.s1.large", metrics: held(cloud.MetricCPU, 95),
				s: func() autopilotSettings { s := settings; s.maxVCPUs = 0; return s }()},
			cond: ReasonAutopilotFlavorUnavailable,
		},
		"memory": {
			reason: "memory pressure picks by RAM",
			in:     apInput{inst: inst("rds.mysql.n1.large.2", 40), metrics: held(cloud.MetricMem, 95)},
			action: APResize, to: "rds.mysql.n1.large.4",
		},
		"ha": {
			reason: "HA stays HA, never a replica flavor",
			in:     apInput{inst: inst("rds.mysql.n1.large.2.ha", 40), metrics: held(cloud.MetricCPU, 95)},
			action: APResize, to: "rds.mysql.n1.xlarge.2.ha",
		},
		"limit": {
			reason: "at the vCPU limit: a condition, no action",
			in:     apInput{inst: inst("rds.mysql.n1.2xlarge.2", 40), metrics: held(cloud.MetricCPU, 95)},
			cond:   ReasonAutopilotAtLimit,
		},
		"not held": {
			reason: "one 5-minute average below the threshold is no pressure",
			in: apInput{inst: inst("rds.mysql.n1.large.2", 40), metrics: func() *cloud.InstanceMetrics {
				m := held(cloud.MetricCPU, 95)
				m.Points[cloud.MetricCPU][2].Value = 80
				return m
			}()},
			cond: ReasonAutopilotWatching,
		},
		"window not covered": {
			reason: "a young instance with two averages has not shown the whole window",
			in: apInput{inst: inst("rds.mysql.n1.large.2", 40), metrics: func() *cloud.InstanceMetrics {
				m := held(cloud.MetricCPU, 95)
				m.Points[cloud.MetricCPU] = m.Points[cloud.MetricCPU][3:]
				return m
			}()},
			cond: ReasonAutopilotWatching,
		},
		"window not a multiple of the period": {
			reason: "a 7-minute window needs two 5-minute averages: one covers only 5 minutes of it",
			in: apInput{inst: inst("rds.mysql.n1.large.2", 40), s: func() autopilotSettings { s := settings; s.window = 7 * time.Minute; return s }(),
				metrics: func() *cloud.InstanceMetrics {
					m := held(cloud.MetricCPU, 95)
					m.Points[cloud.MetricCPU] = m.Points[cloud.MetricCPU][4:]
					return m
				}()},
			cond: ReasonAutopilotWatching,
		},
		"spike in the running period": {
			reason: "a young instance with a 5m window: its only average is the running period, one minute in at 95% (#23)",
			in: apInput{inst: inst("rds.mysql.n1.large.2", 40), s: window(5 * time.Minute),
				metrics: series(cloud.Point{At: ago(time.Minute), Value: 95})},
			cond: ReasonAutopilotWatching,
		},
		"spike after a quiet window": {
			reason: "the periods that ended are below the threshold; the running one at 95% is no pressure yet",
			in: apInput{inst: inst("rds.mysql.n1.large.2", 40), s: window(5 * time.Minute),
				metrics: series(cloud.Point{At: ago(11 * time.Minute), Value: 30}, cloud.Point{At: ago(6 * time.Minute), Value: 30},
					cloud.Point{At: ago(time.Minute), Value: 95})},
			cond: ReasonAutopilotWatching,
		},
		"5m window held": {
			reason: "one period that ended a minute ago at 95% covers a 5m window; the running one does not matter",
			in: apInput{inst: inst("rds.mysql.n1.large.2", 40), s: window(5 * time.Minute),
				metrics: series(cloud.Point{At: ago(6 * time.Minute), Value: 95}, cloud.Point{At: ago(time.Minute), Value: 40})},
			action: APResize, to: "rds.mysql.c2.xlarge",
		},
		"15m window, two periods ended": {
			reason: "two ended periods and one running a minute in cover 10 of the 15 minutes: not held (#23)",
			in: apInput{inst: inst("rds.mysql.n1.large.2", 40),
				metrics: series(cloud.Point{At: ago(11 * time.Minute), Value: 95}, cloud.Point{At: ago(6 * time.Minute), Value: 95},
					cloud.Point{At: ago(time.Minute), Value: 95})},
			cond: ReasonAutopilotWatching,
		},
		"15m window, three periods ended": {
			reason: "three ended periods at 95% cover the window: held, whatever the running one says",
			in: apInput{inst: inst("rds.mysql.n1.large.2", 40),
				metrics: series(cloud.Point{At: ago(16 * time.Minute), Value: 95}, cloud.Point{At: ago(11 * time.Minute), Value: 95},
					cloud.Point{At: ago(6 * time.Minute), Value: 95}, cloud.Point{At: ago(time.Minute), Value: 10})},
			action: APResize, to: "rds.mysql.c2.xlarge",
		},
		"15m window, an ended period below": {
			reason: "every period that ended within the window counts: one at 80% is no pressure",
			in: apInput{inst: inst("rds.mysql.n1.large.2", 40),
				metrics: series(cloud.Point{At: ago(21 * time.Minute), Value: 95}, cloud.Point{At: ago(16 * time.Minute), Value: 80},
					cloud.Point{At: ago(11 * time.Minute), Value: 95}, cloud.Point{At: ago(6 * time.Minute), Value: 95},
					cloud.Point{At: ago(time.Minute), Value: 95})},
			cond: ReasonAutopilotWatching,
		},
		"cooldown": {
			reason: "a change 30 minutes ago holds the next one",
			in: apInput{inst: inst("rds.mysql.n1.large.2", 40), metrics: held(cloud.MetricCPU, 95),
				last: &v1alpha1.AutopilotAction{Action: APResize, Time: metav1.NewTime(now.Add(-30 * time.Minute))}},
			cond: ReasonAutopilotCooldown,
		},
		"no metrics": {
			reason: "without metrics nothing changes",
			in:     apInput{inst: inst("rds.mysql.n1.large.2", 40)},
			cond:   ReasonAutopilotMetricsUnavailable,
		},
		"busy": {
			reason: "only an ACTIVE instance changes",
			in:     apInput{inst: &cloud.Instance{Status: cloud.StatusModifying, Flavor: "rds.mysql.n1.large.2"}, metrics: held(cloud.MetricCPU, 95)},
			cond:   ReasonAutopilotWaiting,
		},
		"disk fallback": {
			reason: "no native autoscaling: grow by 15% rounded up to 10 GB steps (12 GB of 80: 20), as OTC does",
			in:     apInput{inst: inst("rds.mysql.n1.large.2", 80), metrics: held(cloud.MetricDisk, 93)},
			action: APEnlargeVolume, to: "100GB",
		},
		"disk fallback, fraction": {
			reason: "15% of 70 GB is 10.5 GB: rounded up to 10 GB steps, 20",
			in:     apInput{inst: inst("rds.mysql.n1.large.2", 70), metrics: held(cloud.MetricDisk, 93)},
			action: APEnlargeVolume, to: "90GB",
		},
		"storage full": {
			reason: "STORAGE FULL without native autoscaling: grow at once, whatever the metrics and the cooldown",
			in: apInput{inst: &cloud.Instance{Status: cloud.StatusStorageFull, Flavor: "rds.mysql.n1.large.2", Volume: cloud.Volume{Size: 40}},
				last: &v1alpha1.AutopilotAction{Action: APEnlargeVolume, Time: metav1.NewTime(now.Add(-time.Minute))}},
			action: APEnlargeVolume, to: "50GB",
		},
		"storage full, native": {
			reason: "OTC's own autoscaling takes STORAGE FULL",
			in:     apInput{inst: &cloud.Instance{Status: cloud.StatusStorageFull, Flavor: "rds.mysql.n1.large.2", Volume: cloud.Volume{Size: 40}}, native: true},
			cond:   ReasonAutopilotWaiting,
		},
		"disk at limit": {
			reason: "the volume is at the limit",
			in:     apInput{inst: inst("rds.mysql.n1.large.2", 100), metrics: held(cloud.MetricDisk, 93)},
			cond:   ReasonAutopilotAtLimit,
		},
		"native policy": {
			reason: "where OTC offers it, its policy is set first",
			in: apInput{inst: inst("rds.mysql.n1.large.2", 40), native: true, metrics: func() *cloud.InstanceMetrics {
				m := held(cloud.MetricCPU, 10)
				m.Storage = &cloud.StorageAutoscaling{}
				return m
			}()},
			action: APStoragePolicy,
		},
		"native in sync": {
			reason: "a policy in sync is left alone; OTC grows the disk, not autopilot",
			in: apInput{inst: inst("rds.mysql.n1.large.2", 40), native: true, metrics: func() *cloud.InstanceMetrics {
				m := held(cloud.MetricDisk, 99)
				m.Storage = &cloud.StorageAutoscaling{Enabled: true, LimitGB: 100, TriggerFreePercent: 10}
				return m
			}()},
			cond: ReasonAutopilotWatching,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := tc.in
			if in.s == (autopilotSettings{}) {
				in.s = settings
			}
			in.now, in.azs, in.flavors = now, []string{"az1", "az2"}, flavors
			p := planAutopilot(in)
			assert.Equal(t, tc.action, p.action, tc.reason)
			if tc.to != "" {
				assert.Equal(t, tc.to, p.to, tc.reason)
			}
			if tc.cond != "" {
				assert.Equal(t, tc.cond, p.reason, "%s: %s", tc.reason, p.message)
			}
		})
	}
}

func TestAutopilotSettings(t *testing.T) {
	base := v1alpha1.RdsSpec{Volumesize: 40, Autopilot: true}
	s, p := autopilotSettingsOf(&base)
	assert.Empty(t, p)
	assert.Equal(t, autopilotSettings{cpu: 90, mem: 90, disk: 90, window: 15 * time.Minute, cooldown: time.Hour, maxVolume: 80}, s,
		"safe defaults: 90%, 15m, 1h, twice the volume")
	for name, edit := range map[string]func(*v1alpha1.RdsSpec){
		"window unit":  func(s *v1alpha1.RdsSpec) { s.Autopilotwindow = "15s" },
		"window short": func(s *v1alpha1.RdsSpec) { s.Autopilotwindow = "1m" },
		"cooldown":     func(s *v1alpha1.RdsSpec) { s.Autopilotcooldown = "1d" },
		"two units":    func(s *v1alpha1.RdsSpec) { s.Autopilotwindow = "20mh" },
		"sign":         func(s *v1alpha1.RdsSpec) { s.Autopilotcooldown = "+2h" },
		"disk":         func(s *v1alpha1.RdsSpec) { s.Autopilotdiskthreshold = 95 },
		"cpu":          func(s *v1alpha1.RdsSpec) { s.Autopilotcputhreshold = 101 },
		"both maxima":  func(s *v1alpha1.RdsSpec) { s.Autopilotmaxvcpus, s.Autopilotmaxflavor = 8, "rds.mysql.n1.2xlarge.2" },
		"max volume":   func(s *v1alpha1.RdsSpec) { s.Autopilotmaxvolume = 30 },
	} {
		spec := base
		edit(&spec)
		_, p := autopilotSettingsOf(&spec)
		assert.Len(t, p, 1, name)
		assert.NotEmpty(t, Validate(&spec), "%s: Validate refuses it before any cloud call", name)
	}
}
