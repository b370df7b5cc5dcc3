package sync

import (
	"context"
	"fmt"
	"slices"
	gosync "sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// Autopilot (issue #12): the instance grows its storage and its flavor by itself.
//
// The step reads the instance's Cloud Eye metrics from the client's shared view
// (sync/cloud/view/metrics.go: one batch reading of every autopilot instance of the project per
// interval, never a Cloud Eye call per sync), asks the pure planAutopilot for at most one change
// and makes it like any day-2 change (status.operation, one change per call). It runs after the
// spec's own changes and only when they left nothing to do.
//
// Spec and autopilot agree through status.autopilot: a flavor autopilot moved to, or a volume
// autopilot or OTC grew to, is remembered with the spec value it grew from (the floor). While the
// spec still says the floor, day2.go takes the larger instance as it is, with autopilot on or off.

// autopilotMetricsMaxAge is the oldest metrics reading autopilot acts on.
const autopilotMetricsMaxAge = 3 * time.Minute

// autopilotResync is how soon a steady autopilot object is looked at again: the reads are served
// by the view, so this costs no cloud call.
const autopilotResync = time.Minute

func (c *call) autopilotStatus() *v1alpha1.AutopilotStatus {
	if c.st.Autopilot == nil {
		c.st.Autopilot = &v1alpha1.AutopilotStatus{}
	}
	return c.st.Autopilot
}

// autopilot is the step (reconciler.go).
func (c *call) autopilot(ctx context.Context, inst *cloud.Instance) (stop bool, err error) {
	if !c.spec.Autopilot {
		return c.autopilotOff(ctx, inst)
	}
	s, _ := autopilotSettingsOf(c.spec) // Validate refused bad values before any step
	ap := c.autopilotStatus()
	// A call on a status from before this process's last change (a duplicate, a lost answer)
	// tells that change again, as the answer that made it did.
	ap.Last = c.r.autopilot.last(inst.ID, ap.Last)
	c.noteCloudGrowth(inst, ap)
	c.ask(autopilotResync)
	switch synced := getCondition(&c.st, v1alpha1.ConditionSynced); {
	case c.parent.DeletionTimestamp != nil:
		return false, nil
	case c.st.Operation != nil || (inst.Status != cloud.StatusActive && inst.Status != cloud.StatusStorageFull):
		c.setCondition(v1alpha1.ConditionAutopilot, metav1.ConditionTrue, ReasonAutopilotWaiting,
			"Autopilot waits until the instance is ACTIVE with nothing in flight.")
		return false, nil
	case synced != nil && synced.Status == metav1.ConditionFalse && inst.Status != cloud.StatusStorageFull:
		c.setCondition(v1alpha1.ConditionAutopilot, metav1.ConditionTrue, ReasonAutopilotWaiting,
			"Autopilot waits until the spec's own changes can be made (see Synced).")
		return false, nil
	}

	in := apInput{
		s: s, floorFlav: c.spec.Flavorref, inst: inst, azs: instanceAZs(c.spec, inst), last: ap.Last,
		now: c.now.Time, native: cloud.NativeStorageAutoscaling(inst.Engine, inst.Volume.Type),
	}
	if reader, ok := c.cloud.(cloud.MetricsReader); ok {
		mctx, cancel := context.WithTimeout(ctx, c.r.cfg.CallTimeout)
		in.metrics, _ = reader.InstanceMetrics(mctx, inst, s.window, autopilotMetricsMaxAge)
		cancel()
	}
	if m := in.metrics; in.native && m != nil && m.Storage != nil && m.Storage.Enabled {
		// OTC's storage autoscaling is on while autopilot is: autopilot's, even when the answer
		// that recorded setting it was lost, so that turning autopilot off switches it off.
		ap.Storage = &v1alpha1.AutopilotStorage{LimitGB: m.Storage.LimitGB, TriggerFreePercent: m.Storage.TriggerFreePercent}
	}
	p := planAutopilot(in)
	if p.needFlavors {
		// NOTE: under sustained pressure (at the limit, in the cooldown) every sync needs the
		// list: it is kept for autopilotFlavorsTTL per engine and version, not listed per sync.
		var err error
		if in.flavors, err = c.autopilotFlavors(ctx, inst); err != nil {
			return true, c.cloudError(err)
		}
		if in.flavors == nil {
			in.flavors = []cloud.Flavor{}
		}
		p = planAutopilot(in)
	}
	ap.Next = autopilotNext(s, in, p)
	status := metav1.ConditionTrue
	if p.conditionFalse() {
		status = metav1.ConditionFalse
	}
	c.setCondition(v1alpha1.ConditionAutopilot, status, p.reason, p.message)

	last := &v1alpha1.AutopilotAction{Action: p.action, Reason: p.why, To: p.to, Time: c.now}
	switch p.action {
	case APStoragePolicy:
		if _, err := c.act(ctx, action{kind: actStorageAutoscaling, instance: inst.ID, scaling: p.policy}); err != nil && !outcomeUnknown(err) {
			return true, c.cloudError(err)
		}
		ap.Storage = &v1alpha1.AutopilotStorage{LimitGB: p.policy.LimitGB, TriggerFreePercent: p.policy.TriggerFreePercent}
		c.log.Info("autopilot set storage autoscaling", "instance", inst.ID, "limitGB", p.policy.LimitGB)
		c.tell(syncedOK(ReasonReconcileSuccess, "Autopilot set OTC's storage autoscaling.", inFlight).owning())
		return true, nil
	case APEnlargeVolume:
		last.From = fmt.Sprintf("%dGB", inst.Volume.Size)
		return true, c.issue(ctx, inst, change{
			op: OpStorage, target: p.to, whenFull: true,
			act:     action{kind: actEnlargeVolume, instance: inst.ID, size: p.size},
			records: records{autopilot: &autopilotRecord{last: last, volume: p.size, volumeFloor: c.spec.Volumesize}},
		})
	case APResize:
		last.From = inst.Flavor
		return true, c.issue(ctx, inst, change{
			op: OpResize, target: p.to,
			act:     action{kind: actResize, instance: inst.ID, flavor: p.to},
			records: records{autopilot: &autopilotRecord{last: last, flavor: p.to, flavorFloor: c.spec.Flavorref}},
		})
	}
	return false, nil
}

// autopilotOff drops the condition and switches off the storage autoscaling autopilot set; what
// it grew stays (status.autopilot keeps the floors).
func (c *call) autopilotOff(ctx context.Context, inst *cloud.Instance) (bool, error) {
	c.st.Conditions = slices.DeleteFunc(c.st.Conditions, func(cd v1alpha1.Condition) bool {
		return cd.Type == v1alpha1.ConditionAutopilot
	})
	ap := c.st.Autopilot
	if ap == nil {
		return false, nil
	}
	ap.Next = ""
	reader, ok := c.cloud.(cloud.MetricsReader)
	if ap.Storage == nil || !ok || c.st.Operation != nil || inst.Status != cloud.StatusActive || c.parent.DeletionTimestamp != nil {
		return false, nil
	}
	if err := c.cloudCall(ctx, func(ctx context.Context) error {
		return reader.SetStorageAutoscaling(ctx, inst.ID, cloud.StorageAutoscaling{Enabled: false})
	}); err != nil {
		// NOTE: also when the outcome is unknown: nothing reads the policy back once autopilot is
		// off, so status keeps it until a call sees it switched off (again: it is idempotent).
		return true, c.cloudError(err)
	}
	ap.Storage = nil
	c.tell(syncedOK(ReasonReconcileSuccess, "Autopilot is off: OTC's storage autoscaling was switched off.", inFlight).owning())
	return true, nil
}

// noteCloudGrowth records a volume OTC's storage autoscaling grew: reported, and kept as the
// floor's partner so that no call fights it.
func (c *call) noteCloudGrowth(inst *cloud.Instance, ap *v1alpha1.AutopilotStatus) {
	known := max(c.spec.Volumesize, ap.Volume)
	if prev := c.parent.Status.Volume; prev != nil && prev.Size > known {
		known = prev.Size
	}
	if inst.Volume.Size <= known || (c.st.Operation != nil && c.st.Operation.Type == OpStorage) {
		if inst.Volume.Size > ap.Volume && inst.Volume.Size > c.spec.Volumesize {
			ap.Volume, ap.VolumeFloor = inst.Volume.Size, c.spec.Volumesize
		}
		return
	}
	why := "OTC's storage autoscaling grew the volume"
	if !cloud.NativeStorageAutoscaling(inst.Engine, inst.Volume.Type) {
		// NOTE: the answer that recorded autopilot's own growth was lost, or someone grew the
		// volume in OTC; either way it is kept, and the cooldown counts from now.
		why = "the volume grew in OTC without an answer that recorded it"
	}
	ap.Last = &v1alpha1.AutopilotAction{
		Action: APCloudEnlarge, Reason: why,
		From: fmt.Sprintf("%dGB", known), To: fmt.Sprintf("%dGB", inst.Volume.Size), Time: c.now,
	}
	ap.Volume, ap.VolumeFloor = inst.Volume.Size, c.spec.Volumesize
}

// autopilotFlavors is OTC's flavor list of the instance's engine and version as this call's
// client sees it, kept for autopilotFlavorsTTL per region and project: another credential set's
// project or region may sell other flavors in other AZs.
func (c *call) autopilotFlavors(ctx context.Context, inst *cloud.Instance) ([]cloud.Flavor, error) {
	key := c.cloud.Region() + "/" + cloud.ProjectOf(c.cloud) + "/" + inst.Engine + "/" + inst.Version
	if l := c.r.autopilot.flavors(key); l != nil {
		return l, nil
	}
	var flavors []cloud.Flavor
	if err := c.cloudCall(ctx, func(ctx context.Context) (err error) {
		flavors, err = c.cloud.ListFlavors(ctx, inst.Engine, inst.Version)
		return err
	}); err != nil {
		return nil, err
	}
	c.r.autopilot.keepFlavors(key, flavors)
	return flavors, nil
}

// autopilotNext says what autopilot would do next, in words that hold while the state does.
func autopilotNext(s autopilotSettings, in apInput, p apPlan) string {
	switch p.reason {
	case ReasonAutopilotChanging:
		if p.action == APStoragePolicy {
			return fmt.Sprintf("Set OTC's storage autoscaling: grow below %d%% free, up to %d GB.", p.policy.TriggerFreePercent, p.policy.LimitGB)
		}
		return fmt.Sprintf("%s to %s.", p.action, p.to)
	case ReasonAutopilotAtLimit:
		return "Nothing: the instance is at autopilot's limit."
	case ReasonAutopilotMetricsUnavailable:
		return "Nothing until Cloud Eye metrics of the instance are read."
	}
	storage := fmt.Sprintf("grow the volume by 15%% (at least 10 GB) when more than %d%% is used, up to %d GB", s.disk, s.maxVolume)
	if in.native {
		storage = fmt.Sprintf("OTC's storage autoscaling grows the volume when less than %d%% is free, up to %d GB", 100-s.disk, max(s.maxVolume, in.inst.Volume.Size))
	}
	limit := fmt.Sprintf("up to %d vCPUs", s.maxVCPUs)
	switch {
	case s.maxFlavor != "":
		limit = "up to " + s.maxFlavor
	case s.maxVCPUs == 0:
		limit = "up to twice the vCPUs of flavorref"
	}
	out := fmt.Sprintf("Move to a larger flavor when CPU stays above %d%% or memory above %d%% for %s (%s); %s.",
		s.cpu, s.mem, s.window, limit, storage)
	if p.reason == ReasonAutopilotCooldown && in.last != nil {
		out = fmt.Sprintf("After the cooldown, from %s: ", in.last.Time.Add(s.cooldown).UTC().Format(time.RFC3339)) + out
	}
	return out
}

// autopilotKeepsFlavor reports whether the instance's flavor is the one autopilot moved to from
// the flavorref the spec still names: no drift, with autopilot on or off. Any other flavorref is
// the user's explicit choice and is applied (day2.go).
func autopilotKeepsFlavor(ap *v1alpha1.AutopilotStatus, inst *cloud.Instance, flavorref string) bool {
	return ap != nil && ap.Flavor == inst.Flavor && ap.FlavorFloor == flavorref
}

// autopilotKeepsVolume reports whether a volume larger than volumesize is autopilot's or OTC's
// growth: always so with autopilot on (volumesize is a floor), and afterwards while volumesize is
// still the floor it grew from.
func autopilotKeepsVolume(spec *v1alpha1.RdsSpec, ap *v1alpha1.AutopilotStatus) bool {
	return spec.Autopilot || (ap != nil && ap.Volume > 0 && ap.VolumeFloor == spec.Volumesize)
}

// autopilotGrown decides, with autopilot on, a flavor that differs from flavorref while
// status.autopilot does not remember it (an answer that recorded autopilot's resize was lost):
// one no smaller in vCPUs and RAM than flavorref, of the same class, is autopilot's or the
// user's growth and is kept (keepGrownFlavor).
func autopilotGrown(flavors []cloud.Flavor, inst *cloud.Instance, flavorref string) bool {
	find := func(code string) *cloud.Flavor {
		for i := range flavors {
			if flavors[i].SpecCode == code {
				return &flavors[i]
			}
		}
		return nil
	}
	have, floor := find(inst.Flavor), find(flavorref)
	return have != nil && floor != nil && have.Mode == floor.Mode && vcpus(have) >= vcpus(floor) && have.RAMGB >= floor.RAMGB
}

// keepGrownFlavor remembers a flavor autopilotGrown explained, so that the next call needs no
// flavor list.
func (c *call) keepGrownFlavor(inst *cloud.Instance) {
	ap := c.autopilotStatus()
	ap.Flavor, ap.FlavorFloor = inst.Flavor, c.spec.Flavorref
	if ap.Last != nil && ap.Last.To == inst.Flavor {
		return // only the floor changed: the change is recorded
	}
	// NOTE: the change found starts the cooldown now (at or after it was made): another replica,
	// or this process after a restart, has no memory of it, and pressure measured before it must
	// not move the instance on at once.
	ap.Last = &v1alpha1.AutopilotAction{Action: APResize, Reason: "found on the instance, larger than flavorref, without an answer that recorded it",
		From: c.spec.Flavorref, To: inst.Flavor, Time: c.now}
	c.r.autopilot.record(inst.ID, ap.Last)
}

// autopilotRecord is what status.autopilot remembers once autopilot's change is sent.
type autopilotRecord struct {
	last                *v1alpha1.AutopilotAction
	flavor, flavorFloor string
	volume, volumeFloor int
}

// autopilotMemory remembers autopilot's last change per instance in this process, beside
// status.autopilot.last: a call on a stale observation (whose status predates the change) must
// not start a second change within the cooldown. Entries older than the longest cooldown go.
type autopilotMemory struct {
	mu  gosync.Mutex
	now func() time.Time
	m   map[string]v1alpha1.AutopilotAction
	// lists are flavor lists per region, project, engine and version, with when they were listed.
	lists map[string]flavorList
}

type flavorList struct {
	at      time.Time
	flavors []cloud.Flavor
}

// autopilotFlavorsTTL is how long autopilot plans with a flavor list. A flavor sold out since is
// refused by OTC and the resize is planned again later.
const autopilotFlavorsTTL = 5 * time.Minute

func newAutopilotMemory(now func() time.Time) *autopilotMemory {
	return &autopilotMemory{now: now, m: map[string]v1alpha1.AutopilotAction{}, lists: map[string]flavorList{}}
}

func (a *autopilotMemory) flavors(key string) []cloud.Flavor {
	a.mu.Lock()
	defer a.mu.Unlock()
	l, ok := a.lists[key]
	if !ok || a.now().Sub(l.at) >= autopilotFlavorsTTL {
		return nil
	}
	return l.flavors // never changed after keepFlavors
}

func (a *autopilotMemory) keepFlavors(key string, flavors []cloud.Flavor) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.lists) > 256 { // a handful of engines and versions per project: bound it anyway
		clear(a.lists)
	}
	a.lists[key] = flavorList{at: a.now(), flavors: slices.Clone(flavors)}
}

func (a *autopilotMemory) record(id string, act *v1alpha1.AutopilotAction) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	for k, v := range a.m {
		if now.Sub(v.Time.Time) > 168*time.Hour {
			delete(a.m, k)
		}
	}
	a.m[id] = *act
}

// last is the later of the status's and this process's last change.
func (a *autopilotMemory) last(id string, fromStatus *v1alpha1.AutopilotAction) *v1alpha1.AutopilotAction {
	a.mu.Lock()
	defer a.mu.Unlock()
	if mem, ok := a.m[id]; ok && (fromStatus == nil || mem.Time.After(fromStatus.Time.Time)) {
		return &mem
	}
	return fromStatus
}
