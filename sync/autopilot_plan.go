package reconcile

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// Autopilot's actions (status.autopilot.last.action) and the reasons of its condition.
const (
	APResize                          = "Resize"
	APEnlargeVolume                   = "EnlargeVolume"
	APCloudEnlarge                    = "CloudEnlargeVolume"
	APStoragePolicy                   = "StorageAutoscaling"
	ReasonAutopilotWatching           = "AutopilotWatching"
	ReasonAutopilotCooldown           = "AutopilotCooldown"
	ReasonAutopilotChanging           = "AutopilotChanging"
	ReasonAutopilotAtLimit            = "AutopilotAtLimit"
	ReasonAutopilotFlavorUnavailable  = "AutopilotFlavorUnavailable"
	ReasonAutopilotMetricsUnavailable = "AutopilotMetricsUnavailable"
	ReasonAutopilotWaiting            = "AutopilotWaiting"
)

// autopilotSettings are spec.autopilot* with their defaults filled in.
type autopilotSettings struct {
	cpu, mem, disk   int // thresholds in percent
	window, cooldown time.Duration
	maxVolume        int    // GB
	maxFlavor        string // "" unless given
	maxVCPUs         int    // 0: twice the vCPUs of flavorref (needs the flavor list)
}

// autopilotSettingsOf reads the spec; problems are sentences for InvalidSpec.
func autopilotSettingsOf(spec *v1alpha1.RdsSpec) (autopilotSettings, []string) {
	var p problems
	s := autopilotSettings{
		cpu: cmp.Or(spec.Autopilotcputhreshold, 90), mem: cmp.Or(spec.Autopilotmemorythreshold, 90),
		disk: cmp.Or(spec.Autopilotdiskthreshold, 90), maxFlavor: spec.Autopilotmaxflavor, maxVCPUs: spec.Autopilotmaxvcpus,
		maxVolume: cmp.Or(spec.Autopilotmaxvolume, min(4000, max(2*spec.Volumesize, spec.Volumesize+10))),
	}
	for _, t := range []struct {
		name string
		v    int
	}{{"autopilotcputhreshold", s.cpu}, {"autopilotmemorythreshold", s.mem}} {
		if t.v < 50 || t.v > 100 {
			p.addf("%s %d is not between 50 and 100.", t.name, t.v)
		}
	}
	if !slices.Contains([]int{80, 85, 90}, s.disk) {
		p.addf("autopilotdiskthreshold %d is not 80, 85 or 90.", s.disk)
	}
	var err error
	if s.window, err = autopilotDuration(spec.Autopilotwindow, 15*time.Minute, 5*time.Minute, 24*time.Hour); err != nil {
		p.addf("autopilotwindow %q is not a duration from 5m to 24h such as 15m.", spec.Autopilotwindow)
	}
	if s.cooldown, err = autopilotDuration(spec.Autopilotcooldown, time.Hour, 10*time.Minute, 168*time.Hour); err != nil {
		p.addf("autopilotcooldown %q is not a duration from 10m to 168h such as 1h.", spec.Autopilotcooldown)
	}
	switch {
	case spec.Autopilotmaxvolume != 0 && (spec.Autopilotmaxvolume < 40 || spec.Autopilotmaxvolume > 4000 || spec.Autopilotmaxvolume%10 != 0):
		p.addf("autopilotmaxvolume %d is not a multiple of 10 from 40 to 4000.", spec.Autopilotmaxvolume)
	case spec.Autopilotmaxvolume != 0 && spec.Autopilotmaxvolume < spec.Volumesize:
		p.addf("autopilotmaxvolume %d is below volumesize %d.", spec.Autopilotmaxvolume, spec.Volumesize)
	}
	if s.maxFlavor != "" && s.maxVCPUs != 0 {
		p.addf("give autopilotmaxflavor or autopilotmaxvcpus, not both.")
	}
	if s.maxVCPUs < 0 || s.maxVCPUs > 512 {
		p.addf("autopilotmaxvcpus %d is not between 1 and 512.", s.maxVCPUs)
	}
	if s.maxFlavor != "" && !flavorPattern.MatchString(s.maxFlavor) {
		p.addf("autopilotmaxflavor %q is not an RDS spec code.", s.maxFlavor)
	}
	return s, p
}

// autopilotDurationPattern is the CRD's pattern of autopilotwindow and autopilotcooldown.
var autopilotDurationPattern = regexp.MustCompile(`^[0-9]{1,4}(m|h)$`)

// autopilotDuration parses "15m" or "2h" (minutes or hours only, as the CRD allows).
func autopilotDuration(v string, def, lo, hi time.Duration) (time.Duration, error) {
	if v == "" {
		return def, nil
	}
	if !autopilotDurationPattern.MatchString(v) {
		return 0, fmt.Errorf("bad duration %q", v)
	}
	n, err := strconv.Atoi(v[:len(v)-1])
	unit := time.Minute
	if strings.HasSuffix(v, "h") {
		unit = time.Hour
	}
	d := time.Duration(n) * unit
	if err != nil || d < lo || d > hi {
		return 0, fmt.Errorf("bad duration %q", v)
	}
	return d, nil
}

// apInput is everything autopilot decides on; planAutopilot calls nothing.
type apInput struct {
	s         autopilotSettings
	floorFlav string // spec.flavorref
	inst      *cloud.Instance
	azs       []string
	last      *v1alpha1.AutopilotAction // the last change autopilot made
	now       time.Time
	metrics   *cloud.InstanceMetrics // nil: none available
	flavors   []cloud.Flavor         // nil: not listed (plan asks for them with needFlavors)
	native    bool                   // OTC's storage autoscaling is offered for the instance
}

// apPlan is at most one action, or why there is none.
type apPlan struct {
	action  string // "", APStoragePolicy, APEnlargeVolume or APResize
	to      string // the flavor, or the size as "60GB"
	size    int
	policy  cloud.StorageAutoscaling
	why     string // with the measured value
	reason  string // the Autopilot condition's reason
	message string // the Autopilot condition's message (stable while the state holds)
	// needFlavors: CPU or memory is under pressure; plan again with the flavor list.
	needFlavors bool
}

// atLimit and the other reasons that make the condition False.
func (p apPlan) conditionFalse() bool {
	switch p.reason {
	case ReasonAutopilotAtLimit, ReasonAutopilotMetricsUnavailable, ReasonAutopilotFlavorUnavailable:
		return true
	}
	return false
}

// planAutopilot decides autopilot's one change for this call, in this order: OTC's storage
// autoscaling policy (where offered), storage growth (where not), then the flavor under CPU or
// memory pressure. Only an ACTIVE instance with nothing in flight is changed (the caller checks
// the latter); a change waits for the cooldown after the last one.
func planAutopilot(in apInput) apPlan {
	s := in.s
	if in.inst.Status == cloud.StatusStorageFull && !in.native {
		// NOTE: a full volume is an outage: OTC takes storage growth in STORAGE FULL, and
		// autopilot grows it at once, without waiting for metrics or the cooldown.
		return growVolume(in, "the instance is STORAGE FULL")
	}
	if in.inst.Status != cloud.StatusActive {
		return apPlan{reason: ReasonAutopilotWaiting, message: "Autopilot waits until the instance is ACTIVE."}
	}
	if in.native {
		want := cloud.StorageAutoscaling{Enabled: true, LimitGB: max(s.maxVolume, in.inst.Volume.Size), TriggerFreePercent: 100 - s.disk}
		if m := in.metrics; m != nil && m.Storage != nil && *m.Storage != want {
			return apPlan{action: APStoragePolicy, policy: want, reason: ReasonAutopilotChanging, why: fmt.Sprintf(
				"OTC's storage autoscaling is to grow the volume below %d%% free up to %d GB", want.TriggerFreePercent, want.LimitGB),
				message: "Autopilot sets OTC's storage autoscaling."}
		}
	}
	if in.metrics == nil {
		return apPlan{reason: ReasonAutopilotMetricsUnavailable, message: "Autopilot has no Cloud Eye metrics of the instance yet; it changes nothing without them."}
	}
	since := in.metrics.At.Add(-s.window - cloud.MetricPeriod)
	if in.last != nil && in.last.Time.After(since) {
		since = in.last.Time.Time // pressure before the last change is not pressure on its result
	}
	cooling := in.last != nil && in.now.Before(in.last.Time.Add(s.cooldown))
	var cooldownPlan apPlan
	if cooling {
		cooldownPlan = apPlan{reason: ReasonAutopilotCooldown, message: fmt.Sprintf(
			"Autopilot waits for its cooldown of %s after the last change (%s at %s).", s.cooldown, in.last.Action, in.last.Time.UTC().Format(time.RFC3339))}
	}

	// Storage: autopilot grows the volume where OTC does not.
	if !in.native {
		if v, ok := latest(in.metrics.Points[cloud.MetricDisk], since); ok && v >= float64(s.disk) {
			if cooling {
				if p := growVolume(in, ""); p.reason == ReasonAutopilotAtLimit {
					return p
				}
				return cooldownPlan
			}
			return growVolume(in, fmt.Sprintf("%s %.1f%% >= %d%%", cloud.MetricDisk, v, s.disk))
		}
	}

	// Flavor: CPU, then memory, held above the threshold for the whole window.
	dim, metric, threshold := "", "", 0
	var held float64
	if v, ok := heldAbove(in.metrics.Points[cloud.MetricCPU], since, in.metrics.At, s.window, float64(s.cpu)); ok {
		dim, metric, threshold, held = "vcpus", cloud.MetricCPU, s.cpu, v
	} else if v, ok := heldAbove(in.metrics.Points[cloud.MetricMem], since, in.metrics.At, s.window, float64(s.mem)); ok {
		dim, metric, threshold, held = "ram", cloud.MetricMem, s.mem, v
	}
	if dim == "" {
		if cooling {
			return cooldownPlan
		}
		return apPlan{reason: ReasonAutopilotWatching, message: fmt.Sprintf(
			"Autopilot watches CPU above %d%% and memory above %d%% for %s, and storage above %d%% used.", s.cpu, s.mem, s.window, s.disk)}
	}
	if in.flavors == nil {
		return apPlan{needFlavors: true}
	}
	f, p := pickFlavor(in, dim)
	if f == nil {
		return p
	}
	if cooling {
		return cooldownPlan
	}
	return apPlan{action: APResize, to: f.SpecCode, reason: ReasonAutopilotChanging,
		why:     fmt.Sprintf("%s at least %.1f%% >= %d%% for %s", metric, held, threshold, s.window),
		message: "Autopilot moves the instance to a larger flavor."}
}

// growVolume grows the volume by 15 % rounded up to 10 GB steps, at least 10 GB, up to the limit
// (OTC's own autoscaling step), or says it is at the limit.
func growVolume(in apInput, why string) apPlan {
	s, have := in.s, in.inst.Volume.Size
	size := min(have+max(10, (have*15+999)/1000*10), s.maxVolume/10*10) // 15 %, rounded up to 10 GB
	if size < have+10 {
		return apPlan{reason: ReasonAutopilotAtLimit, message: fmt.Sprintf(
			"Storage is above %d%% used, but the volume is at autopilot's limit of %d GB.", s.disk, s.maxVolume)}
	}
	return apPlan{action: APEnlargeVolume, size: size, to: fmt.Sprintf("%dGB", size), reason: ReasonAutopilotChanging,
		why: why, message: "Autopilot grows the volume."}
}

// latest is the newest point at or after since.
func latest(points []cloud.Point, since time.Time) (float64, bool) {
	for i := len(points) - 1; i >= 0; i-- {
		if !points[i].At.Before(since) {
			return points[i].Value, true
		}
	}
	return 0, false
}

// heldAbove reports whether the metric held at or above threshold for the window ending at `at`:
// every 5-minute average that ended within the window (and began at or after since) is at or
// above it, and together they cover the window; it returns the smallest of them.
// NOTE: Cloud Eye answers the period still running with its value so far (a minute into it, the
// average of one minute): it is no evidence of a window held, and a spike in it must not buy a
// larger flavor and a restart, so it is never counted.
func heldAbove(points []cloud.Point, since, at time.Time, window time.Duration, threshold float64) (float64, bool) {
	need := int((window + cloud.MetricPeriod - 1) / cloud.MetricPeriod) // averages that cover the window
	var n int
	low := 101.0
	for _, p := range points {
		end := p.At.Add(cloud.MetricPeriod)
		if p.At.Before(since) || end.Before(at.Add(-window)) || end.After(at) {
			continue // before the last change, ended before the window, or still running
		}
		if p.Value < threshold {
			return 0, false
		}
		n++
		low = min(low, p.Value)
	}
	return low, n >= need && need > 0
}

// pickFlavor is the smallest flavor strictly larger in dim ("vcpus" or "ram") and no smaller in
// the other, of the instance's class (single or ha, never replica), on sale in every AZ of the
// instance, within the limit.
func pickFlavor(in apInput, dim string) (*cloud.Flavor, apPlan) {
	byCode := func(code string) *cloud.Flavor {
		for i := range in.flavors {
			if in.flavors[i].SpecCode == code {
				return &in.flavors[i]
			}
		}
		return nil
	}
	cur := byCode(in.inst.Flavor)
	if cur == nil {
		return nil, apPlan{reason: ReasonAutopilotFlavorUnavailable, message: fmt.Sprintf(
			"Autopilot cannot size up: OTC does not list the instance's flavor %s for %s %s.", in.inst.Flavor, in.inst.Engine, in.inst.Version)}
	}
	maxCPU, maxRAM := in.s.maxVCPUs, 1<<30
	limitText := ""
	switch {
	case in.s.maxFlavor != "":
		mf := byCode(in.s.maxFlavor)
		if mf == nil {
			return nil, apPlan{reason: ReasonAutopilotFlavorUnavailable, message: fmt.Sprintf(
				"autopilotmaxflavor %s is not offered for %s %s.", in.s.maxFlavor, in.inst.Engine, in.inst.Version)}
		}
		maxCPU, maxRAM = vcpus(mf), mf.RAMGB
		limitText = "autopilotmaxflavor " + in.s.maxFlavor
	case maxCPU == 0:
		// NOTE: twice the vCPUs of flavorref, never of the current flavor: that limit would rise
		// with every step, one per cooldown, without end.
		base := byCode(in.floorFlav)
		if base == nil {
			return nil, apPlan{reason: ReasonAutopilotFlavorUnavailable, message: fmt.Sprintf(
				"Autopilot cannot tell its limit of twice the vCPUs of flavorref: OTC does not list %s for %s %s; set autopilotmaxvcpus or autopilotmaxflavor.",
				in.floorFlav, in.inst.Engine, in.inst.Version)}
		}
		maxCPU = 2 * vcpus(base)
		limitText = fmt.Sprintf("%d vCPUs (twice those of flavorref)", maxCPU)
	default:
		limitText = fmt.Sprintf("autopilotmaxvcpus %d", maxCPU)
	}
	size := func(f *cloud.Flavor) (int, int) {
		if dim == "vcpus" {
			return vcpus(f), f.RAMGB
		}
		return f.RAMGB, vcpus(f)
	}
	cd, co := size(cur)
	family := strings.Join(strings.SplitN(in.inst.Flavor, ".", 4)[:min(3, strings.Count(in.inst.Flavor, ".")+1)], ".") + "."
	var candidates []*cloud.Flavor
	for i := range in.flavors {
		f := &in.flavors[i]
		d, o := size(f)
		if !strings.EqualFold(f.Mode, cur.Mode) || d <= cd || o < co {
			continue
		}
		if vcpus(f) > maxCPU || f.RAMGB > maxRAM {
			continue
		}
		candidates = append(candidates, f)
	}
	slices.SortFunc(candidates, func(a, b *cloud.Flavor) int {
		ad, ao := size(a)
		bd, bo := size(b)
		sameA, sameB := strings.HasPrefix(a.SpecCode, family), strings.HasPrefix(b.SpecCode, family)
		return cmp.Or(cmp.Compare(ad, bd), cmp.Compare(ao, bo), -cmpBool(sameA, sameB), cmp.Compare(a.SpecCode, b.SpecCode))
	})
	what := map[string]string{"vcpus": "CPU", "ram": "Memory"}[dim]
	for _, f := range candidates {
		if onSaleIn(f, in.azs) {
			return f, apPlan{}
		}
	}
	if len(candidates) == 0 {
		return nil, apPlan{reason: ReasonAutopilotAtLimit, message: fmt.Sprintf(
			"%s stays above its threshold, but %s is the largest flavor within %s.", what, in.inst.Flavor, limitText)}
	}
	return nil, apPlan{reason: ReasonAutopilotFlavorUnavailable, message: fmt.Sprintf(
		"%s stays above its threshold, but no larger flavor within %s is on sale in %s.", what, limitText, strings.Join(in.azs, ", "))}
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// vcpus parses the flavor's vCPU count (OTC reports it as a string); 0 if it is not a number.
func vcpus(f *cloud.Flavor) int {
	n, _ := strconv.Atoi(strings.TrimSpace(f.VCPUs))
	return n
}

func onSaleIn(f *cloud.Flavor, azs []string) bool {
	for _, az := range azs {
		if f.AZStatus[az] != "normal" {
			return false
		}
	}
	return len(azs) > 0
}
