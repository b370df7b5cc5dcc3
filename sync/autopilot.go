package reconcile

import (
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// Autopilot (issue #12): the instance grows its storage and its flavor by itself.
//
// The step reads the instance's Cloud Eye metrics from the client's shared view
// (sync/cloud/view/metrics.go: one batch reading of every autopilot instance of the project per
// interval, never a Cloud Eye call per sync), asks the pure planAutopilot for at most one change
// and makes it like any day-2 change (status.operation, one change per call). It runs after the
// spec's own changes and only when they left nothing to do. The step around planAutopilot (its
// gates, status.autopilot, the condition, the reads it asks for) is the pure planAutopilotStep.
//
// Spec and autopilot agree through status.autopilot: a flavor autopilot moved to, or a volume
// autopilot or OTC grew to, is remembered with the spec value it grew from (the floor). While the
// spec still says the floor, day2.go takes the larger instance as it is, with autopilot on or off.

// autopilotMetricsMaxAge is the oldest metrics reading autopilot acts on.
const autopilotMetricsMaxAge = 3 * time.Minute

// autopilotResync is how soon a steady autopilot object is looked at again: the reads are served
// by the view, so this costs no cloud call.
const autopilotResync = time.Minute

// autopilotStepInput is all that the autopilot step decides on: the spec, the status the last
// call answered and this call's status so far, the instance, the time, this process's memory of
// autopilot's last change, and what the plan asked to be read or made.
type autopilotStepInput struct {
	spec     *v1alpha1.RdsSpec
	prior    *v1alpha1.RdsStatus // the status the last call answered
	st       statusSoFar         // this call's status so far (the earlier steps' Synced), a copy
	inst     *cloud.Instance
	now      metav1.Time
	deleting bool
	// synced is the Synced condition as the earlier steps of the call told it (or the last
	// call left it); nil when it has none.
	synced *v1alpha1.Condition
	// remembered is autopilot's last change to the instance as this process remembers it
	// (autopilotMemory.remembered); nil when it remembers none.
	remembered *v1alpha1.AutopilotAction
	// reader says the client reads Cloud Eye metrics and sets OTC's storage autoscaling
	// (cloud.MetricsReader); without it autopilot has no metrics.
	reader bool
	// metricsRead says the metrics were read (needMetrics); metrics is nil when none are available.
	metricsRead bool
	metrics     *cloud.InstanceMetrics
	// flavors is the flavor list as autopilotFlavors read it; nil until the plan asked for it.
	flavors *flavorsRead
	// answer is what OTC answered to the plan's action; nil until it was made.
	answer *actAnswer
}

// flavorsRead is a read of OTC's flavor list, or its error.
type flavorsRead struct {
	list []cloud.Flavor
	err  error
}

// autopilotStepPlan is the decision of the autopilot step.
//
// A plan that asks for a read (needMetrics, needFlavors) or makes an action is made again with
// what was read or answered: only a plan without them is applied.
type autopilotStepPlan struct {
	// autopilot is status.autopilot as the step leaves it.
	autopilot *v1alpha1.AutopilotStatus
	// condition is the Autopilot condition, if the step sets it; dropCondition removes it
	// (autopilot off).
	condition     *outcome
	dropCondition bool
	// synced is the Synced outcome of the step's action, if any.
	synced *outcome
	// failed is a cloud error of a read or of the answer, sorted by cloudError.
	failed error
	logs   []logLine
	// resync is how soon the step asks to be called again; 0 asks nothing.
	resync time.Duration
	// stop holds the later steps of the call.
	stop bool
	// needMetrics is the window to read the instance's metrics over (0: none asked); needFlavors
	// asks for the flavor list.
	needMetrics time.Duration
	needFlavors bool
	// action is the storage autoscaling policy to set; the plan is made again with its answer.
	action *action
	// change is autopilot's resize or storage growth, made and recorded like a day-2 change (issue).
	change *change
}

// planAutopilotStep decides the autopilot step: status.autopilot's bookkeeping, the gates (a
// deletion, an operation in flight, an instance neither ACTIVE nor STORAGE FULL, a spec whose own
// changes cannot be made), then planAutopilot's one change. With autopilot off it switches off the
// storage autoscaling autopilot set. It calls nothing.
func planAutopilotStep(in autopilotStepInput) autopilotStepPlan {
	if !in.spec.Autopilot {
		return planAutopilotOff(in)
	}
	s, _ := autopilotSettingsOf(in.spec) // Validate refused bad values before any step
	ap := autopilotBookkeeping(in)
	p := autopilotStepPlan{autopilot: ap, resync: autopilotResync}
	inst := in.inst
	switch synced := in.synced; {
	case in.deleting:
		return p
	case in.st.Operation != nil || (inst.Status != cloud.StatusActive && inst.Status != cloud.StatusStorageFull):
		p.condition = autopilotCondition(metav1.ConditionTrue, ReasonAutopilotWaiting,
			"Autopilot waits until the instance is ACTIVE with nothing in flight.")
		return p
	case synced != nil && synced.Status == metav1.ConditionFalse && inst.Status != cloud.StatusStorageFull:
		p.condition = autopilotCondition(metav1.ConditionTrue, ReasonAutopilotWaiting,
			"Autopilot waits until the spec's own changes can be made (see Synced).")
		return p
	}
	if in.reader && !in.metricsRead {
		return autopilotStepPlan{needMetrics: s.window}
	}

	a := apInput{
		s: s, floorFlav: in.spec.Flavorref, inst: inst, azs: instanceAZs(in.spec, inst), last: ap.Last,
		now: in.now.Time, metrics: in.metrics, native: cloud.NativeStorageAutoscaling(inst.Engine, inst.Volume.Type),
	}
	if m := a.metrics; a.native && m != nil && m.Storage != nil && m.Storage.Enabled {
		// OTC's storage autoscaling is on while autopilot is: autopilot's, even when the answer
		// that recorded setting it was lost, so that turning autopilot off switches it off.
		ap.Storage = &v1alpha1.AutopilotStorage{LimitGB: m.Storage.LimitGB, TriggerFreePercent: m.Storage.TriggerFreePercent}
	}
	if in.flavors != nil && in.flavors.err == nil {
		a.flavors = in.flavors.list
		if a.flavors == nil {
			a.flavors = []cloud.Flavor{}
		}
	}
	plan := planAutopilot(a)
	switch {
	case plan.needFlavors && in.flavors == nil:
		return autopilotStepPlan{needFlavors: true}
	case plan.needFlavors:
		// The list could not be read: status keeps what it knew, the Autopilot condition stays.
		p.failed, p.stop = in.flavors.err, true
		return p
	}
	ap.Next = autopilotNext(s, a, plan)
	status := metav1.ConditionTrue
	if plan.conditionFalse() {
		status = metav1.ConditionFalse
	}
	p.condition = autopilotCondition(status, plan.reason, plan.message)

	last := &v1alpha1.AutopilotAction{Action: plan.action, Reason: plan.why, To: plan.to, Time: in.now}
	switch plan.action {
	case APStoragePolicy:
		return planStoragePolicy(in, p, plan.policy)
	case APEnlargeVolume:
		last.From = fmt.Sprintf("%dGB", inst.Volume.Size)
		p.change = &change{
			op: OpStorage, target: plan.to, whenFull: true,
			act:     action{kind: actEnlargeVolume, instance: inst.ID, size: plan.size},
			records: records{autopilot: &autopilotRecord{last: last, volume: plan.size, volumeFloor: in.spec.Volumesize}},
		}
		p.stop = true
	case APResize:
		last.From = inst.Flavor
		p.change = &change{
			op: OpResize, target: plan.to,
			act:     action{kind: actResize, instance: inst.ID, flavor: plan.to},
			records: records{autopilot: &autopilotRecord{last: last, flavor: plan.to, flavorFloor: in.spec.Flavorref}},
		}
		p.stop = true
	}
	return p
}

// planStoragePolicy sets OTC's storage autoscaling as autopilot wants it, and decides on the
// answer. A lost answer counts as set: the next metrics reading shows the policy in OTC.
func planStoragePolicy(in autopilotStepInput, p autopilotStepPlan, policy cloud.StorageAutoscaling) autopilotStepPlan {
	if in.answer == nil {
		return autopilotStepPlan{action: &action{kind: actStorageAutoscaling, instance: in.inst.ID, scaling: policy}}
	}
	p.stop = true
	if err := in.answer.err; err != nil && !outcomeUnknown(err) {
		p.failed = err
		return p
	}
	p.autopilot.Storage = &v1alpha1.AutopilotStorage{LimitGB: policy.LimitGB, TriggerFreePercent: policy.TriggerFreePercent}
	p.logs = []logLine{{slog.LevelInfo, "autopilot set storage autoscaling", []any{"instance", in.inst.ID, "limitGB", policy.LimitGB}}}
	p.synced = ptr.To(syncedOK(ReasonReconcileSuccess, "Autopilot set OTC's storage autoscaling.", inFlight).made())
	return p
}

// planAutopilotOff drops the condition and switches off the storage autoscaling autopilot set;
// what it grew stays (status.autopilot keeps the floors).
func planAutopilotOff(in autopilotStepInput) autopilotStepPlan {
	p := autopilotStepPlan{dropCondition: true}
	if in.st.Autopilot == nil {
		return p
	}
	ap := *in.st.Autopilot
	ap.Next = ""
	p.autopilot = &ap
	if ap.Storage == nil || !in.reader || in.st.Operation != nil || in.inst.Status != cloud.StatusActive || in.deleting {
		return p
	}
	if in.answer == nil {
		return autopilotStepPlan{action: &action{kind: actStorageAutoscaling, instance: in.inst.ID, scaling: cloud.StorageAutoscaling{Enabled: false}}}
	}
	p.stop = true
	if err := in.answer.err; err != nil {
		// NOTE: also when the outcome is unknown: nothing reads the policy back once autopilot is
		// off, so status keeps it until a call sees it switched off (again: it is idempotent).
		p.failed = err
		return p
	}
	ap.Storage = nil
	p.synced = ptr.To(syncedOK(ReasonReconcileSuccess, "Autopilot is off: OTC's storage autoscaling was switched off.", inFlight).made())
	return p
}

// autopilotCondition is an Autopilot condition outcome. Its class asks the steady resync, which
// every call asks anyway: the step's own ask is autopilotResync.
func autopilotCondition(status metav1.ConditionStatus, reason, message string) *outcome {
	return &outcome{cond: v1alpha1.ConditionAutopilot, status: status, reason: reason, message: message, class: settled}
}

// autopilotBookkeeping is status.autopilot as autopilot finds it, a copy: the later of the
// status's and this process's last change, and volume growth autopilot did not make.
func autopilotBookkeeping(in autopilotStepInput) *v1alpha1.AutopilotStatus {
	ap := v1alpha1.AutopilotStatus{}
	if in.st.Autopilot != nil {
		ap = *in.st.Autopilot
	}
	// A call on a status from before this process's last change (a duplicate, a lost answer)
	// tells that change again, as the answer that made it did.
	ap.Last = laterAction(in.remembered, ap.Last)
	ap = noteCloudGrowth(in, ap)
	return &ap
}

// laterAction is the later of this process's memory of the last change and the status's.
func laterAction(remembered, fromStatus *v1alpha1.AutopilotAction) *v1alpha1.AutopilotAction {
	if remembered != nil && (fromStatus == nil || remembered.Time.After(fromStatus.Time.Time)) {
		return remembered
	}
	return fromStatus
}

// autopilotStep is the autopilot step as the loop runs it (loop.go): it plans, reads what the
// plan asks for (the metrics from the shared view, the flavor list unless kept), plans again, makes
// the plan's action (the storage autoscaling policy, or a resize or storage growth made like a
// day-2 change) and plans with OTC's answer.
type autopilotStep struct {
	in autopilotStepInput
	// kept is the flavor list of the instance's engine and version an earlier call of this process
	// read, for autopilotFlavorsTTL, under flavorsKey (region, project, engine, version).
	// NOTE: under sustained pressure (at the limit, in the cooldown) every sync needs the list; it
	// must not cost a listing per sync. The list is what OTC sells, not a fact about the object, so
	// an answer does not depend on whether it was kept or read.
	kept       []cloud.Flavor
	flavorsKey string
	// read says the flavor list was read by this call, to be kept (render).
	read bool
	// change is OTC's answer to the plan's change; the action's answer is in.answer.
	change     *sent
	uid        string
	generation int64
	p          autopilotStepPlan
}

func newAutopilotStep(c *call, inst *cloud.Instance) *autopilotStep {
	_, isReader := c.cloud.(cloud.MetricsReader)
	key := flavorsKey(c.cloud.Region(), cloud.ProjectOf(c.cloud), inst)
	return &autopilotStep{
		in: autopilotStepInput{
			spec: c.spec, prior: &c.parent.Status, st: soFar(&c.st), inst: inst, now: c.now,
			synced:   c.out.condition(v1alpha1.ConditionSynced),
			deleting: c.parent.DeletionTimestamp != nil, remembered: c.r.autopilot.remembered(inst.ID), reader: isReader,
		},
		kept: c.r.autopilot.flavors(key), flavorsKey: key, uid: string(c.parent.UID), generation: c.parent.Generation,
	}
}

// flavorsKey is what a flavor list is kept under: the call's region and project, the instance's
// engine and version. Another credential set's project or region may sell other flavors in other
// AZs.
func flavorsKey(region, project string, inst *cloud.Instance) string {
	return region + "/" + project + "/" + inst.Engine + "/" + inst.Version
}

func (s *autopilotStep) plan() head {
	s.p = planAutopilotStep(s.in)
	if s.p.needFlavors && s.kept != nil {
		s.in.flavors = &flavorsRead{list: s.kept}
		s.p = planAutopilotStep(s.in)
	}
	p := s.p
	h := head{stop: p.stop, err: p.failed, logs: p.logs, within: p.resync}
	if p.dropCondition {
		h.tells = dropAutopilot
	}
	h.tells = append(h.tells, told(p.condition, p.synced)...)
	switch {
	case p.needMetrics > 0:
		h.needs = []need{{kind: readMetrics, of: s.in.inst, window: p.needMetrics, maxAge: autopilotMetricsMaxAge}}
	case p.needFlavors:
		h.needs = []need{{kind: readFlavors, engine: s.in.inst.Engine, version: s.in.inst.Version}}
	case p.failed != nil, s.in.answer != nil:
	case s.change != nil:
		h = issuedHead(h, s.in.inst.ID, *p.change, *s.change, s.generation)
	case p.action != nil:
		h.act = p.action
	case p.change != nil:
		h.act = &p.change.act
	}
	return h
}

func (s *autopilotStep) saw(n need, r seen) {
	switch n.kind {
	case readMetrics: // an error leaves the metrics nil: none available
		s.in.metrics, s.in.metricsRead = r.metrics, true
	case readFlavors:
		s.in.flavors = &flavorsRead{list: r.flavors, err: r.err}
		s.read = r.err == nil
	}
}

func (s *autopilotStep) answered(res acted, err error) {
	if s.p.action != nil {
		s.in.answer = answerOf(res, err)
		return
	}
	s.change = &sent{res: res, err: err}
}

// render writes status.autopilot, keeps a flavor list read, and records a change sent like a day-2
// change (status.operation, status.autopilot and this process's memory).
func (s *autopilotStep) render(a *answer) {
	a.st.Autopilot = s.p.autopilot
	if s.read {
		if a.keep.flavors == nil {
			a.keep.flavors = map[string][]cloud.Flavor{}
		}
		a.keep.flavors[s.flavorsKey] = slices.Clone(s.in.flavors.list)
	}
	if s.change != nil && s.p.change != nil {
		recordSent(a, s.uid, s.in.inst, *s.p.change, *s.change, s.generation)
	}
}

// noteCloudGrowth records a volume OTC's storage autoscaling grew: reported, and kept as the
// floor's partner so that no call fights it.
func noteCloudGrowth(in autopilotStepInput, ap v1alpha1.AutopilotStatus) v1alpha1.AutopilotStatus {
	inst, spec := in.inst, in.spec
	known := max(spec.Volumesize, ap.Volume)
	if prev := in.prior.Volume; prev != nil && prev.Size > known {
		known = prev.Size
	}
	if inst.Volume.Size <= known || (in.st.Operation != nil && in.st.Operation.Type == OpStorage) {
		if inst.Volume.Size > ap.Volume && inst.Volume.Size > spec.Volumesize {
			ap.Volume, ap.VolumeFloor = inst.Volume.Size, spec.Volumesize
		}
		return ap
	}
	why := "OTC's storage autoscaling grew the volume"
	if !cloud.NativeStorageAutoscaling(inst.Engine, inst.Volume.Type) {
		// NOTE: the answer that recorded autopilot's own growth was lost, or someone grew the
		// volume in OTC; either way it is kept, and the cooldown counts from now.
		why = "the volume grew in OTC without an answer that recorded it"
	}
	ap.Last = &v1alpha1.AutopilotAction{
		Action: APCloudEnlarge, Reason: why,
		From: fmt.Sprintf("%dGB", known), To: fmt.Sprintf("%dGB", inst.Volume.Size), Time: in.now,
	}
	ap.Volume, ap.VolumeFloor = inst.Volume.Size, spec.Volumesize
	return ap
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
func keepGrownFlavor(a *answer, inst *cloud.Instance, flavorref string, now metav1.Time) {
	ap := autopilotOf(&a.st)
	ap.Flavor, ap.FlavorFloor = inst.Flavor, flavorref
	if ap.Last != nil && ap.Last.To == inst.Flavor {
		return // only the floor changed: the change is recorded
	}
	// NOTE: the change found starts the cooldown now (at or after it was made): another replica,
	// or this process after a restart, has no memory of it, and pressure measured before it must
	// not move the instance on at once.
	ap.Last = &v1alpha1.AutopilotAction{Action: APResize, Reason: "found on the instance, larger than flavorref, without an answer that recorded it",
		From: flavorref, To: inst.Flavor, Time: now}
	a.keep.rememberAutopilot(inst.ID, *ap.Last)
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
	mu  sync.Mutex
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

// remembered is this process's last change to the instance, a copy; nil if none.
func (a *autopilotMemory) remembered(id string) *v1alpha1.AutopilotAction {
	a.mu.Lock()
	defer a.mu.Unlock()
	if mem, ok := a.m[id]; ok {
		return &mem
	}
	return nil
}
