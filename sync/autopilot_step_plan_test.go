package reconcile

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// TestPlanAutopilotStep is the autopilot step as a table: spec, statuses, the instance, memory and
// what was read or answered in, the plan out. No cloud, fake or real, is involved:
// planAutopilotStep reads only its input.
func TestPlanAutopilotStep(t *testing.T) {
	now := metav1.NewTime(t0)
	ago := func(d time.Duration) metav1.Time { return metav1.NewTime(t0.Add(-d)) }
	// reading is a metrics reading at now with each metric at its value for the last 20 minutes.
	reading := func(values map[string]float64) *cloud.InstanceMetrics {
		m := &cloud.InstanceMetrics{At: t0, Points: map[string][]cloud.Point{}}
		for metric, v := range values {
			for i := 4; i >= 0; i-- {
				m.Points[metric] = append(m.Points[metric], cloud.Point{At: t0.Add(-time.Duration(i) * cloud.MetricPeriod), Value: v})
			}
		}
		return m
	}
	quiet := map[string]float64{cloud.MetricCPU: 20, cloud.MetricMem: 40, cloud.MetricDisk: 30}
	cpuHeld := map[string]float64{cloud.MetricCPU: 95, cloud.MetricMem: 40, cloud.MetricDisk: 30}
	diskFull := map[string]float64{cloud.MetricCPU: 20, cloud.MetricMem: 40, cloud.MetricDisk: 95}
	flavors := []cloud.Flavor{
		{SpecCode: "rds.mysql.c2.medium", Mode: "single", VCPUs: "1", RAMGB: 2, AZStatus: map[string]string{"eu-de-01": "normal"}},
		{SpecCode: "rds.mysql.c2.large", Mode: "single", VCPUs: "2", RAMGB: 4, AZStatus: map[string]string{"eu-de-01": "normal"}},
		{SpecCode: "rds.mysql.c2.xlarge", Mode: "single", VCPUs: "4", RAMGB: 8, AZStatus: map[string]string{"eu-de-01": "normal"}},
	}
	policy := cloud.StorageAutoscaling{Enabled: true, LimitGB: 80, TriggerFreePercent: 10}
	storage := &v1alpha1.AutopilotStorage{LimitGB: 80, TriggerFreePercent: 10}
	lost := &cloud.Error{Kind: cloud.KindUnavailable, Op: "SetStorageAutoscaling", Message: "connection closed before the answer"}
	refused := &cloud.Error{Kind: cloud.KindInvalid, Code: "DBS.200001", Message: "Parameter error."}
	listFailed := &cloud.Error{Kind: cloud.KindUnavailable, Op: "ListFlavors"}
	resized := &v1alpha1.AutopilotAction{Action: APResize, Reason: "rds001_cpu_util at least 95.0% >= 90% for 15m0s",
		From: "rds.mysql.c2.medium", To: "rds.mysql.c2.large", Time: ago(10 * time.Minute)}

	// The sentences of the default settings: volumesize 40 makes autopilot's volume limit 80 GB,
	// and flavorref rds.mysql.c2.medium (1 vCPU) its limit of 2 vCPUs.
	watching := autopilotCondition(metav1.ConditionTrue, ReasonAutopilotWatching,
		"Autopilot watches CPU above 90% and memory above 90% for 15m0s, and storage above 90% used.")
	rules := "Move to a larger flavor when CPU stays above 90% or memory above 90% for 15m0s (up to twice the vCPUs of flavorref); " +
		"grow the volume by 15% (at least 10 GB) when more than 90% is used, up to 80 GB."
	nativeRules := "Move to a larger flavor when CPU stays above 90% or memory above 90% for 15m0s (up to twice the vCPUs of flavorref); " +
		"OTC's storage autoscaling grows the volume when less than 10% is free, up to 80 GB."
	noMetrics := autopilotCondition(metav1.ConditionFalse, ReasonAutopilotMetricsUnavailable,
		"Autopilot has no Cloud Eye metrics of the instance yet; it changes nothing without them.")
	noMetricsNext := "Nothing until Cloud Eye metrics of the instance are read."
	waitActive := autopilotCondition(metav1.ConditionTrue, ReasonAutopilotWaiting, "Autopilot waits until the instance is ACTIVE with nothing in flight.")
	resizeOp := &v1alpha1.Operation{Type: OpResize, JobID: "job-x", Target: "rds.mysql.c2.large"}

	// in is the input of the usual case: autopilot on with its defaults, the MySQL instance
	// ACTIVE on COMMON storage (autopilot grows it, OTC does not), nothing in flight, the
	// metrics read and quiet.
	in := func(edits ...func(*autopilotStepInput)) autopilotStepInput {
		spec := sampleSpec()
		spec.Autopilot = true
		in := autopilotStepInput{spec: &spec, prior: &v1alpha1.RdsStatus{}, st: statusSoFar{}, inst: activeInstance(), now: now,
			reader: true, metricsRead: true, metrics: reading(quiet)}
		for _, e := range edits {
			e(&in)
		}
		return in
	}
	off := func(in *autopilotStepInput) { in.spec.Autopilot = false }
	native := func(in *autopilotStepInput) { in.inst.Volume.Type = "CLOUDSSD" }
	metrics := func(values map[string]float64) func(*autopilotStepInput) {
		return func(in *autopilotStepInput) { in.metrics = reading(values) }
	}
	ap := func(a v1alpha1.AutopilotStatus) func(*autopilotStepInput) {
		return func(in *autopilotStepInput) { in.st.Autopilot = &a }
	}
	answer := func(err error) func(*autopilotStepInput) {
		return func(in *autopilotStepInput) { in.answer = &actAnswer{err: err} }
	}
	// policyIs is the storage autoscaling policy the reading shows.
	policyIs := func(pol cloud.StorageAutoscaling) func(*autopilotStepInput) {
		return func(in *autopilotStepInput) { in.metrics.Storage = &pol }
	}
	// grows50 is the plan that grows the 40 GB volume by its step to 50 GB.
	grows50 := func(why string) autopilotStepPlan {
		return autopilotStepPlan{
			autopilot: &v1alpha1.AutopilotStatus{Next: "EnlargeVolume to 50GB."},
			condition: autopilotCondition(metav1.ConditionTrue, ReasonAutopilotChanging, "Autopilot grows the volume."),
			resync:    autopilotResync, stop: true,
			change: &change{op: OpStorage, target: "50GB", whenFull: true,
				act: action{kind: actEnlargeVolume, instance: "inst-1", size: 50},
				records: records{autopilot: &autopilotRecord{volume: 50, volumeFloor: 40, last: &v1alpha1.AutopilotAction{
					Action: APEnlargeVolume, Reason: why, From: "40GB", To: "50GB", Time: now}}}},
		}
	}
	// coolingAfterResize is the plan within the cooldown of the resize 10 minutes ago.
	coolingAfterResize := autopilotStepPlan{
		autopilot: &v1alpha1.AutopilotStatus{Last: resized, Next: "After the cooldown, from 2026-11-22T10:50:00Z: " + rules},
		condition: autopilotCondition(metav1.ConditionTrue, ReasonAutopilotCooldown,
			"Autopilot waits for its cooldown of 1h0m0s after the last change (Resize at 2026-11-22T09:50:00Z)."),
		resync: autopilotResync,
	}
	switchOff := &action{kind: actStorageAutoscaling, instance: "inst-1", scaling: cloud.StorageAutoscaling{Enabled: false}}
	setting := "Set OTC's storage autoscaling: grow below 10% free, up to 80 GB."
	policySet := autopilotStepPlan{
		autopilot: &v1alpha1.AutopilotStatus{Storage: storage, Next: setting},
		condition: autopilotCondition(metav1.ConditionTrue, ReasonAutopilotChanging, "Autopilot sets OTC's storage autoscaling."),
		logs:      []logLine{{slog.LevelInfo, "autopilot set storage autoscaling", []any{"instance", "inst-1", "limitGB", 80}}},
		synced:    ptr.To(syncedOK(ReasonReconcileSuccess, "Autopilot set OTC's storage autoscaling.", inFlight).made()),
		resync:    autopilotResync, stop: true,
	}

	tests := []struct {
		reason string
		in     autopilotStepInput
		want   autopilotStepPlan
	}{
		// Autopilot off.
		{
			reason: "off, never on: only the condition goes",
			in:     in(off),
			want:   autopilotStepPlan{dropCondition: true},
		},
		{
			reason: "off without a storage policy: next goes, the floors stay",
			in:     in(off, ap(v1alpha1.AutopilotStatus{Next: rules, Flavor: "rds.mysql.c2.large", FlavorFloor: "rds.mysql.c2.medium"})),
			want: autopilotStepPlan{dropCondition: true,
				autopilot: &v1alpha1.AutopilotStatus{Flavor: "rds.mysql.c2.large", FlavorFloor: "rds.mysql.c2.medium"}},
		},
		{
			reason: "off with the storage policy autopilot set: switch it off",
			in:     in(off, ap(v1alpha1.AutopilotStatus{Next: nativeRules, Storage: storage})),
			want:   autopilotStepPlan{action: switchOff},
		},
		{
			reason: "off: the policy switched off",
			in:     in(off, ap(v1alpha1.AutopilotStatus{Next: nativeRules, Storage: storage}), answer(nil)),
			want: autopilotStepPlan{dropCondition: true, autopilot: &v1alpha1.AutopilotStatus{}, stop: true,
				synced: ptr.To(syncedOK(ReasonReconcileSuccess, "Autopilot is off: OTC's storage autoscaling was switched off.", inFlight).made())},
		},
		{
			reason: "off: a lost answer keeps the policy in status, to be switched off again",
			in:     in(off, ap(v1alpha1.AutopilotStatus{Next: nativeRules, Storage: storage}), answer(lost)),
			want:   autopilotStepPlan{dropCondition: true, autopilot: &v1alpha1.AutopilotStatus{Storage: storage}, stop: true, failed: lost},
		},
		{
			reason: "off: the policy waits while an operation runs",
			in: in(off, ap(v1alpha1.AutopilotStatus{Storage: storage}),
				func(in *autopilotStepInput) { in.st.Operation = resizeOp }),
			want: autopilotStepPlan{dropCondition: true, autopilot: &v1alpha1.AutopilotStatus{Storage: storage}},
		},
		{
			reason: "off: the policy waits while the object is deleted",
			in:     in(off, ap(v1alpha1.AutopilotStatus{Storage: storage}), func(in *autopilotStepInput) { in.deleting = true }),
			want:   autopilotStepPlan{dropCondition: true, autopilot: &v1alpha1.AutopilotStatus{Storage: storage}},
		},
		{
			reason: "off: a client that sets no policy leaves it",
			in:     in(off, ap(v1alpha1.AutopilotStatus{Storage: storage}), func(in *autopilotStepInput) { in.reader = false }),
			want:   autopilotStepPlan{dropCondition: true, autopilot: &v1alpha1.AutopilotStatus{Storage: storage}},
		},

		// The gates.
		{
			reason: "a deletion: status.autopilot only, no condition",
			in:     in(func(in *autopilotStepInput) { in.deleting = true }),
			want:   autopilotStepPlan{autopilot: &v1alpha1.AutopilotStatus{}, resync: autopilotResync},
		},
		{
			reason: "an operation in flight: wait",
			in:     in(func(in *autopilotStepInput) { in.st.Operation = resizeOp }),
			want:   autopilotStepPlan{autopilot: &v1alpha1.AutopilotStatus{}, condition: waitActive, resync: autopilotResync},
		},
		{
			reason: "an instance that is not ACTIVE: wait",
			in:     in(func(in *autopilotStepInput) { in.inst.Status = "REBOOTING" }),
			want:   autopilotStepPlan{autopilot: &v1alpha1.AutopilotStatus{}, condition: waitActive, resync: autopilotResync},
		},
		{
			reason: "Synced False: the spec's own changes come first",
			in: in(func(in *autopilotStepInput) {
				in.synced = &v1alpha1.Condition{Type: v1alpha1.ConditionSynced, Status: metav1.ConditionFalse, Reason: ReasonFlavorUnavailable, Message: "The flavor is sold out.", LastTransitionTime: now}
			}),
			want: autopilotStepPlan{autopilot: &v1alpha1.AutopilotStatus{}, resync: autopilotResync,
				condition: autopilotCondition(metav1.ConditionTrue, ReasonAutopilotWaiting, "Autopilot waits until the spec's own changes can be made (see Synced).")},
		},
		{
			reason: "STORAGE FULL with Synced False: autopilot grows the volume at once, without metrics",
			in: in(func(in *autopilotStepInput) {
				in.inst.Status = cloud.StatusStorageFull
				in.metrics = nil
				in.synced = &v1alpha1.Condition{Type: v1alpha1.ConditionSynced, Status: metav1.ConditionFalse, Reason: ReasonInstanceUnavailable, Message: "The instance is STORAGE FULL in OTC.", LastTransitionTime: now}
			}),
			want: grows50("the instance is STORAGE FULL"),
		},

		// The metrics.
		{
			reason: "past the gates, the metrics are read from the shared view",
			in:     in(func(in *autopilotStepInput) { in.metricsRead, in.metrics = false, nil }),
			want:   autopilotStepPlan{needMetrics: 15 * time.Minute},
		},
		{
			reason: "no reading of the instance yet",
			in:     in(func(in *autopilotStepInput) { in.metrics = nil }),
			want:   autopilotStepPlan{autopilot: &v1alpha1.AutopilotStatus{Next: noMetricsNext}, condition: noMetrics, resync: autopilotResync},
		},
		{
			reason: "a client that reads no metrics",
			in:     in(func(in *autopilotStepInput) { in.reader, in.metricsRead, in.metrics = false, false, nil }),
			want:   autopilotStepPlan{autopilot: &v1alpha1.AutopilotStatus{Next: noMetricsNext}, condition: noMetrics, resync: autopilotResync},
		},
		{
			reason: "quiet metrics: watching",
			in:     in(),
			want:   autopilotStepPlan{autopilot: &v1alpha1.AutopilotStatus{Next: rules}, condition: watching, resync: autopilotResync},
		},

		// status.autopilot's bookkeeping.
		{
			reason: "this process's memory of a later change than status tells it, and its cooldown",
			in: in(ap(v1alpha1.AutopilotStatus{Last: &v1alpha1.AutopilotAction{Action: APResize, Time: ago(3 * time.Hour)}}),
				func(in *autopilotStepInput) { in.remembered = resized }),
			want: coolingAfterResize,
		},
		{
			reason: "an older memory than status changes nothing",
			in: in(ap(v1alpha1.AutopilotStatus{Last: resized}),
				func(in *autopilotStepInput) {
					in.remembered = &v1alpha1.AutopilotAction{Action: APEnlargeVolume, Time: ago(5 * time.Hour)}
				}),
			want: coolingAfterResize,
		},
		{
			reason: "growth by OTC's storage autoscaling is noted and kept with its floor",
			in: in(native, policyIs(policy), func(in *autopilotStepInput) {
				in.inst.Volume.Size = 50
				in.prior.Volume = &v1alpha1.Volume{Size: 40}
			}),
			want: autopilotStepPlan{
				autopilot: &v1alpha1.AutopilotStatus{Volume: 50, VolumeFloor: 40, Storage: storage,
					Last: &v1alpha1.AutopilotAction{Action: APCloudEnlarge, Reason: "OTC's storage autoscaling grew the volume", From: "40GB", To: "50GB", Time: now},
					Next: "After the cooldown, from 2026-11-22T11:00:00Z: " + nativeRules},
				condition: autopilotCondition(metav1.ConditionTrue, ReasonAutopilotCooldown,
					"Autopilot waits for its cooldown of 1h0m0s after the last change (CloudEnlargeVolume at 2026-11-22T10:00:00Z)."),
				resync: autopilotResync,
			},
		},
		{
			reason: "growth without native autoscaling is kept as growth whose answer was lost",
			in:     in(func(in *autopilotStepInput) { in.inst.Volume.Size = 50 }),
			want: autopilotStepPlan{
				autopilot: &v1alpha1.AutopilotStatus{Volume: 50, VolumeFloor: 40,
					Last: &v1alpha1.AutopilotAction{Action: APCloudEnlarge, Reason: "the volume grew in OTC without an answer that recorded it", From: "40GB", To: "50GB", Time: now},
					Next: "After the cooldown, from 2026-11-22T11:00:00Z: " + rules},
				condition: autopilotCondition(metav1.ConditionTrue, ReasonAutopilotCooldown,
					"Autopilot waits for its cooldown of 1h0m0s after the last change (CloudEnlargeVolume at 2026-11-22T10:00:00Z)."),
				resync: autopilotResync,
			},
		},
		{
			reason: "a volume a storage growth in flight made is kept, not noted as OTC's",
			in: in(func(in *autopilotStepInput) {
				in.inst.Volume.Size = 50
				in.st.Operation = &v1alpha1.Operation{Type: OpStorage, Target: "50GB"}
			}),
			want: autopilotStepPlan{autopilot: &v1alpha1.AutopilotStatus{Volume: 50, VolumeFloor: 40}, condition: waitActive, resync: autopilotResync},
		},

		// OTC's storage autoscaling policy.
		{
			reason: "a policy other than autopilot's is set",
			in:     in(native, policyIs(cloud.StorageAutoscaling{})),
			want:   autopilotStepPlan{action: &action{kind: actStorageAutoscaling, instance: "inst-1", scaling: policy}},
		},
		{
			reason: "the policy set",
			in:     in(native, policyIs(cloud.StorageAutoscaling{}), answer(nil)),
			want:   policySet,
		},
		{
			reason: "the policy's answer lost: taken as set",
			in:     in(native, policyIs(cloud.StorageAutoscaling{}), answer(lost)),
			want:   policySet,
		},
		{
			reason: "the policy refused: nothing recorded",
			in:     in(native, policyIs(cloud.StorageAutoscaling{}), answer(refused)),
			want: autopilotStepPlan{
				autopilot: &v1alpha1.AutopilotStatus{Next: setting},
				condition: autopilotCondition(metav1.ConditionTrue, ReasonAutopilotChanging, "Autopilot sets OTC's storage autoscaling."),
				failed:    refused, resync: autopilotResync, stop: true,
			},
		},
		{
			reason: "autopilot's policy found on is autopilot's, even without an answer that recorded it",
			in:     in(native, policyIs(policy)),
			want:   autopilotStepPlan{autopilot: &v1alpha1.AutopilotStatus{Storage: storage, Next: nativeRules}, condition: watching, resync: autopilotResync},
		},

		// The flavor.
		{
			reason: "CPU held above the threshold needs the flavor list",
			in:     in(metrics(cpuHeld)),
			want:   autopilotStepPlan{needFlavors: true},
		},
		{
			reason: "CPU held above the threshold: resize to the next flavor",
			in:     in(metrics(cpuHeld), func(in *autopilotStepInput) { in.flavors = &flavorsRead{list: flavors} }),
			want: autopilotStepPlan{
				autopilot: &v1alpha1.AutopilotStatus{Next: "Resize to rds.mysql.c2.large."},
				condition: autopilotCondition(metav1.ConditionTrue, ReasonAutopilotChanging, "Autopilot moves the instance to a larger flavor."),
				resync:    autopilotResync, stop: true,
				change: &change{op: OpResize, target: "rds.mysql.c2.large",
					act: action{kind: actResize, instance: "inst-1", flavor: "rds.mysql.c2.large"},
					records: records{autopilot: &autopilotRecord{flavor: "rds.mysql.c2.large", flavorFloor: "rds.mysql.c2.medium",
						last: &v1alpha1.AutopilotAction{Action: APResize, Reason: "rds001_cpu_util at least 95.0% >= 90% for 15m0s",
							From: "rds.mysql.c2.medium", To: "rds.mysql.c2.large", Time: now}}}},
			},
		},
		{
			reason: "the flavor list not read: status keeps what it knew, the condition stays",
			in: in(metrics(cpuHeld), ap(v1alpha1.AutopilotStatus{Next: rules}),
				func(in *autopilotStepInput) { in.flavors = &flavorsRead{err: listFailed} }),
			want: autopilotStepPlan{autopilot: &v1alpha1.AutopilotStatus{Next: rules}, failed: listFailed, resync: autopilotResync, stop: true},
		},
		{
			reason: "at the vCPU limit: no change",
			in: in(metrics(cpuHeld), func(in *autopilotStepInput) {
				in.inst.Flavor = "rds.mysql.c2.large"
				in.st.Autopilot = &v1alpha1.AutopilotStatus{Flavor: "rds.mysql.c2.large", FlavorFloor: "rds.mysql.c2.medium", Last: &v1alpha1.AutopilotAction{Action: APResize, Time: ago(3 * time.Hour)}}
				in.flavors = &flavorsRead{list: flavors}
			}),
			want: autopilotStepPlan{
				autopilot: &v1alpha1.AutopilotStatus{Flavor: "rds.mysql.c2.large", FlavorFloor: "rds.mysql.c2.medium",
					Last: &v1alpha1.AutopilotAction{Action: APResize, Time: ago(3 * time.Hour)}, Next: "Nothing: the instance is at autopilot's limit."},
				condition: autopilotCondition(metav1.ConditionFalse, ReasonAutopilotAtLimit,
					"CPU stays above its threshold, but rds.mysql.c2.large is the largest flavor within 2 vCPUs (twice those of flavorref)."),
				resync: autopilotResync,
			},
		},
		{
			reason: "CPU held in the cooldown: wait for it",
			in:     in(metrics(cpuHeld), ap(v1alpha1.AutopilotStatus{Last: resized}), func(in *autopilotStepInput) { in.flavors = &flavorsRead{list: flavors} }),
			want:   coolingAfterResize,
		},

		// The volume, where OTC does not grow it.
		{
			reason: "disk above the threshold: grow the volume",
			in:     in(metrics(diskFull)),
			want:   grows50(fmt.Sprintf("%s 95.0%% >= 90%%", cloud.MetricDisk)),
		},
		{
			reason: "disk above the threshold at the volume limit: no change",
			in: in(metrics(diskFull), ap(v1alpha1.AutopilotStatus{Volume: 80, VolumeFloor: 40}),
				func(in *autopilotStepInput) { in.inst.Volume.Size = 80 }),
			want: autopilotStepPlan{
				autopilot: &v1alpha1.AutopilotStatus{Volume: 80, VolumeFloor: 40, Next: "Nothing: the instance is at autopilot's limit."},
				condition: autopilotCondition(metav1.ConditionFalse, ReasonAutopilotAtLimit,
					"Storage is above 90% used, but the volume is at autopilot's limit of 80 GB."),
				resync: autopilotResync,
			},
		},
		{
			reason: "disk above the threshold in the cooldown: wait for it",
			in:     in(metrics(diskFull), ap(v1alpha1.AutopilotStatus{Last: resized})),
			want:   coolingAfterResize,
		},
	}
	for _, tc := range tests {
		t.Run(tc.reason, func(t *testing.T) {
			before := deepCopySoFar(tc.in.st)
			got := planAutopilotStep(tc.in)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, before, tc.in.st, "the plan changes nothing of its input")
		})
	}
}
