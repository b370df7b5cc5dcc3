package reconcile

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// Operation types of the day-2 changes, recorded in status.operation while they run.
const (
	OpSingleToHA   = "SingleToHa"
	OpResize       = "Resize"
	OpStorage      = "EnlargeVolume"
	OpMinorUpgrade = "MinorUpgrade"
	OpRestart      = "Restart"
)

// Reasons of the day-2 changes.
const (
	ReasonChangeInProgress   = "ChangeInProgress"
	ReasonFlavorUnavailable  = "FlavorUnavailable"
	ReasonUnsupportedChange  = "UnsupportedChange"
	ReasonVersionUnavailable = "VersionUnavailable"
)

// day2Input is all that the day-2 decision reads: the spec, the status of the last call and of
// this call so far, the instance as observed, and the flavor list when the plan asked for it.
type day2Input struct {
	spec       *v1alpha1.RdsSpec
	prior      *v1alpha1.RdsStatus // the status the last call answered
	st         statusSoFar         // this call's status so far (report, restore), a copy
	inst       *cloud.Instance
	uid        string
	generation int64
	deleting   bool
	now        metav1.Time
	// sentRestart says this process sent the restart of the current restartrequest (ledger.go).
	sentRestart bool
	// flavors is OTC's flavor list for the instance's engine and version; nil until read.
	flavors []cloud.Flavor
	// policy is OTC's backup policy, with its days of the week; nil until read (settings.go).
	policy *cloud.BackupStrategy
	// job is the job of a settled operation in flight (settledOp), or the error reading it; both
	// nil until read.
	job    *cloud.Job
	jobErr error
}

// day2Plan is the decision of the day-2 step.
type day2Plan struct {
	// managedTags is status.managedTags (trackTags); upgradeRequest and restartRequest, when set,
	// record a one-shot request found handled.
	managedTags    []string
	upgradeRequest string
	restartRequest string
	// outcome is the Synced condition the step sets, if any.
	outcome *outcome
	// pending asks for an early look although nothing is in flight (tags recorded ahead).
	pending bool
	// change is the one change to make, if any.
	change *change
	// needFlavors says the plan cannot be made without the flavor list: read it and plan again.
	needFlavors bool
	// grown is a flavor autopilot's growth explains (autopilotGrown): status.autopilot keeps it.
	grown bool

	// The settings (settings.go): status.stopped and status.backupPolicy as the call reports
	// them; Ready of a stopped instance; needPolicy and needJob ask for the backup policy and for
	// the job of a settled operation (a failed read in jobErr); opOver says that operation is
	// over, failed that its job failed.
	stopped      *v1alpha1.StoppedStatus
	backupPolicy *v1alpha1.BackupPolicy
	ready        *outcome
	needPolicy   bool
	needJob      string
	jobErr       error
	opOver       bool
	failed       *outcome
}

// planDay2 decides at most one day-2 change to a running instance: the start of a stopped one,
// single to HA, resize, storage growth, storage type, replication mode, minor upgrade, backup
// policy, maintenance window, tags, restart, stop, in this order (settings.go has the settings).
// Only fields the spec owns are compared, against what OTC reports now, and only while the
// instance is ACTIVE with no operation in flight (a stopped one takes its start alone): while a
// change runs, OTC still reports the old values. It calls nothing.
func planDay2(in day2Input) day2Plan {
	p := day2Plan{managedTags: trackTags(in.spec, in.st.ManagedTags, in.inst)}
	if q, ok := planSettings(&in, &p); !ok { // settings.go: what status reports, the reads it needs
		return q
	}
	changes, problems := day2Changes(in, &p)
	op := in.st.Operation
	if len(changes) == 0 {
		switch {
		case op != nil && progress[op.Type] != "":
			p.outcome = ptr.To(inProgress(op).underway()) // problems may be old values OTC still reports: judge them afterwards
		case op != nil:
		case len(problems) > 0:
			p.outcome = refuse(problems)
		}
		return p
	}

	// The guards, in ACK's order: deleting, creating, terminal, not ACTIVE, an operation in flight.
	first := changes[0]
	inst := in.inst
	switch {
	case in.deleting || (op != nil && op.Type == OpDelete):
		return p // finalize owns the instance now
	case inst.Status == cloud.StatusBuild || (op != nil && op.Type == OpCreate):
		p.outcome = ptr.To(syncedOK(ReasonWaitingForInstance, "Changes wait until the instance is created.", settled))
		return p
	case inst.Status == cloud.StatusStorageFull:
		changes = slices.DeleteFunc(changes, func(ch change) bool { return !ch.whenFull })
		if len(changes) == 0 {
			p.outcome = ptr.To(notSynced(ReasonInstanceUnavailable, fmt.Sprintf(
				"The instance is %s in OTC; the pending %s waits until it is ACTIVE again. Grow volumesize to free it.", inst.Status, describe(first)), settled))
			return p
		}
	case inst.Status == cloud.StatusShutdown: // settings.go: only a start, or a wait
		var ok bool
		if changes, ok = whileStopped(in, changes, &p); !ok {
			return p
		}
	case terminal(inst.Status):
		p.outcome = ptr.To(notSynced(ReasonInstanceUnavailable, fmt.Sprintf(
			"The instance is %s in OTC; the pending %s waits until it is ACTIVE again.", inst.Status, describe(first)), settled))
		return p
	case op != nil:
		if progress[op.Type] != "" {
			p.outcome = ptr.To(inProgress(op).underway())
		}
		return p
	case !usable(inst.Status):
		p.outcome = ptr.To(syncedOK(ReasonWaitingForInstance, fmt.Sprintf(
			"The pending %s waits until the instance is ACTIVE.", describe(first)), inFlight))
		return p
	}

	for _, ch := range changes {
		if ch.flavor != nil || ch.grownFlavor {
			if in.flavors == nil {
				// The records found so far stand whatever the list says: a failed read must not
				// delay the write-ahead of managed tags or a one-shot record.
				p.needFlavors = true
				return p
			}
			if ch.grownFlavor && autopilotGrown(in.flavors, inst, in.spec.Flavorref) {
				p.grown = true
				continue // no difference after all: autopilot or the user grew it (autopilot.go)
			}
			if pr := checkFlavor(in.flavors, inst, *ch.flavor); pr != nil {
				problems = append(problems, *pr)
				continue
			}
		}
		p.change = &ch
		if len(problems) > 0 {
			// The change is made; the differences the hook will not act on are still told, and
			// outrank it in Synced (outcome.go).
			p.outcome = refuse(problems)
		}
		return p
	}
	if len(problems) > 0 {
		p.outcome = refuse(problems)
	}
	return p
}

// day2Step is the day-2 step as the loop runs it (loop.go): it plans, reads the flavor list if the
// plan needs it, plans again, makes the change the plan names and records OTC's answer.
type day2Step struct {
	in day2Input
	// password is the root password SingleToHA needs for SQL Server (the connection's).
	password  secret.Value
	flavorErr error
	policyErr error
	sent      *sent
	p         day2Plan
}

func newDay2Step(c *call, inst *cloud.Instance) *day2Step {
	s := &day2Step{in: day2Input{
		spec: c.spec, prior: &c.parent.Status, st: soFar(&c.st), inst: inst, uid: string(c.parent.UID),
		generation: c.parent.Generation, deleting: c.parent.DeletionTimestamp != nil, now: c.now,
		sentRestart: c.r.sent.seen(oneShotKey(c.parent.UID, OpRestart, c.spec.Restartrequest)),
	}}
	if c.conn != nil {
		s.password = c.conn.password
	}
	return s
}

func (s *day2Step) plan() head {
	s.p = planDay2(s.in)
	h := head{tells: told(s.p.failed, s.p.outcome, s.p.ready)}
	if s.p.pending {
		h.ask = ptr.To(inFlight)
	}
	switch {
	case s.p.needFlavors && s.flavorErr != nil:
		h.err, h.stop = s.flavorErr, true
		return h
	case s.p.needFlavors:
		h.needs = []need{{kind: readFlavors, engine: s.in.inst.Engine, version: s.in.inst.Version}}
		return h
	case s.p.needPolicy && s.policyErr != nil:
		h.err, h.stop = s.policyErr, true
		return h
	case s.p.needPolicy:
		h.needs = []need{{kind: readBackupPolicy, id: s.in.inst.ID}}
		return h
	case s.p.jobErr != nil:
		h.err, h.stop = s.p.jobErr, true
		return h
	case s.p.needJob != "":
		h.needs = []need{{kind: readJob, id: s.p.needJob}}
		return h
	case s.p.change == nil:
		return h
	}
	h.stop = true
	ch := *s.p.change
	if s.sent == nil {
		h.act = &ch.act
		if ch.act.kind == actSingleToHA && s.in.spec.Datastoretype == v1alpha1.EngineSQLServer {
			h.act.password = s.password // NOTE: OTC needs the root password for SQL Server only
		}
		return h
	}
	return issuedHead(h, s.in.inst.ID, ch, *s.sent, s.in.generation)
}

func (s *day2Step) saw(n need, r seen) {
	switch n.kind {
	case readBackupPolicy:
		if s.policyErr = r.err; r.err == nil {
			s.in.policy = &r.policy
		}
		return
	case readJob:
		s.in.job, s.in.jobErr = r.job, r.err
		if r.job == nil && r.err == nil {
			s.in.jobErr = cloud.ErrNotFound
		}
		return
	}
	s.flavorErr = r.err
	if r.err == nil {
		s.in.flavors = r.flavors
		if s.in.flavors == nil {
			s.in.flavors = []cloud.Flavor{}
		}
	}
}

func (s *day2Step) answered(res acted, err error) { s.sent = &sent{res: res, err: err} }

// render writes the status records of the plan: the managed tags and a one-shot request found
// handled, a flavor autopilot's growth explains, and what status remembers of a sent change.
func (s *day2Step) render(a *answer) {
	p := s.p
	a.st.ManagedTags = p.managedTags
	if p.upgradeRequest != "" {
		a.st.UpgradeRequest = p.upgradeRequest
	}
	if p.restartRequest != "" {
		a.st.RestartRequest = p.restartRequest
	}
	if p.grown {
		keepGrownFlavor(a, s.in.inst, s.in.spec.Flavorref, s.in.now)
	}
	a.st.Stopped = p.stopped // settings.go
	if p.backupPolicy != nil {
		a.st.BackupPolicy = p.backupPolicy
	}
	if p.opOver {
		a.st.Operation = nil
	}
	if p.change != nil && s.sent != nil {
		recordSent(a, s.in.uid, s.in.inst, *p.change, *s.sent, s.in.generation)
	}
}

// refuse reports the differences the hook does not act on. They stay until the spec changes.
func refuse(problems []outcome) *outcome {
	msgs := make([]string, len(problems))
	for i, p := range problems {
		msgs[i] = p.message
	}
	return ptr.To(notSynced(problems[0].reason, joinSentences(msgs), settled))
}

// terminal reports a status in which OTC takes no changes until someone repairs the instance.
func terminal(status string) bool {
	switch status {
	case cloud.StatusFailed, cloud.StatusCreateFail, cloud.StatusFrozen, cloud.StatusStorageFull, cloud.StatusShutdown:
		return true
	}
	return false
}

// day2Changes lists the differences in their fixed order. A one-shot request found handled is
// recorded in p, and tags recorded ahead ask for an early look (p.pending).
func day2Changes(in day2Input, p *day2Plan) ([]change, []outcome) {
	var changes []change
	var problems []outcome
	add := func(chs []change, pr *outcome) {
		changes = append(changes, chs...)
		if pr != nil {
			problems = append(problems, *pr)
		}
	}
	add(startChange(in)) // settings.go: a stopped instance takes nothing else
	add(haChange(in))
	add(flavorChange(in))
	add(storageChange(in))
	add(storageTypeChange(in)) // settings.go
	add(replicationChange(in)) // settings.go
	add(versionChange(in, p))
	add(backupChange(in))
	add(networkChanges(in))    // day2_network.go: security group, port, SSL
	add(maintenanceChange(in)) // settings.go
	add(tagChanges(in, p))
	add(restartChange(in, p))
	add(stopChange(in)) // settings.go: after everything the running instance can take
	return changes, problems
}

// haChange turns a single instance into a primary/standby pair when hamode asks for it. The
// standby goes to the AZ the spec adds to the one the instance uses.
func haChange(in day2Input) ([]change, *outcome) {
	inst := in.inst
	switch wantHA := IsHA(in.spec); {
	case !wantHA && isHAInstance(inst):
		return nil, wontAct(ReasonUnsupportedChange, "hamode Single: OTC cannot turn a primary/standby instance back into a single one; create a new Rds for that.")
	case !wantHA || !strings.EqualFold(inst.Type, "Single"):
		return nil, nil
	}
	used := instanceAZs(in.spec, inst)
	var added []string
	for _, az := range AvailabilityZones(in.spec) {
		if !slices.Contains(used, az) {
			added = append(added, az)
		}
	}
	if len(added) != 1 {
		return nil, wontAct(ReasonInvalidSpec, fmt.Sprintf(
			"availabilityzone %q must keep the instance's AZ %s and add one AZ for the standby.", in.spec.Availabilityzone, strings.Join(used, ",")))
	}
	standby := added[0]
	// NOTE: OTC moves the instance to the HA variant of its current flavor; a different flavorref
	// is a resize afterwards.
	return []change{{
		op:     OpSingleToHA,
		target: standby,
		flavor: &flavorNeed{code: inst.Flavor + ".ha", ha: true, azs: append(slices.Clone(used), standby)},
		act:    action{kind: actSingleToHA, instance: inst.ID, standby: standby},
	}}, nil
}

// flavorChange resizes to spec.flavorref once the instance is of the flavor's class.
func flavorChange(in day2Input) ([]change, *outcome) {
	inst, ha := in.inst, IsHA(in.spec)
	if in.spec.Flavorref == inst.Flavor || ha != isHAInstance(inst) || autopilotKeepsFlavor(in.st.Autopilot, inst, in.spec.Flavorref) {
		return nil, nil
	}
	return []change{{
		op:          OpResize,
		target:      in.spec.Flavorref,
		flavor:      &flavorNeed{code: in.spec.Flavorref, ha: ha, azs: instanceAZs(in.spec, inst)},
		grownFlavor: in.spec.Autopilot,
		act:         action{kind: actResize, instance: inst.ID, flavor: in.spec.Flavorref},
	}}, nil
}

// checkFlavor says why a flavor cannot be had: OTC does not offer it for the engine and version,
// it is of the other class (single or HA), or it is not on sale in one of the AZs.
func checkFlavor(flavors []cloud.Flavor, inst *cloud.Instance, need flavorNeed) *outcome {
	code := need.code
	i := slices.IndexFunc(flavors, func(f cloud.Flavor) bool { return f.SpecCode == code })
	if i < 0 {
		return wontAct(ReasonFlavorUnavailable, fmt.Sprintf("The flavor %s is not offered for %s %s.", code, inst.Engine, inst.Version))
	}
	f := flavors[i]
	wantMode := "single"
	if need.ha {
		wantMode = "ha"
	}
	if !strings.EqualFold(f.Mode, wantMode) {
		return wontAct(ReasonFlavorUnavailable, fmt.Sprintf("The flavor %s is for %s instances, not %s ones.", code, f.Mode, wantMode))
	}
	for _, az := range need.azs {
		if st := f.AZStatus[az]; st != "normal" {
			if st == "" {
				st = "unsupported"
			}
			return wontAct(ReasonFlavorUnavailable, fmt.Sprintf("The flavor %s is not available in %s (%s).", code, az, st))
		}
	}
	return nil
}

// storageChange grows the volume to spec.volumesize. A smaller size is refused again here for
// objects that predate the CRD's rule.
func storageChange(in day2Input) ([]change, *outcome) {
	want, have := in.spec.Volumesize, in.inst.Volume.Size
	switch {
	case want < have && autopilotKeepsVolume(in.spec, in.st.Autopilot):
		return nil, nil // autopilot or OTC grew it: volumesize is a floor (autopilot.go)
	case want < have:
		return nil, wontAct(ReasonUnsupportedChange, fmt.Sprintf(
			"volumesize %d is below the instance's %d GB: OTC cannot shrink a volume; set volumesize to %d or more.", want, have, have))
	case want < have+10:
		return nil, nil // NOTE: OTC grows in steps of at least 10 GB
	}
	return []change{{
		op:       OpStorage,
		target:   fmt.Sprintf("%dGB", want),
		whenFull: true,
		act:      action{kind: actEnlargeVolume, instance: in.inst.ID, size: want},
	}}, nil
}

// versionChange upgrades the minor version when datastoreversion names a higher one than the
// instance runs. "8.0" asked while 8.0.28 runs is no difference, nor is 8.0.20 (no downgrades).
//
// NOTE: OTC upgrades to its newest minor version, which may lie below the one asked: the asked
// version is remembered in status.upgradeRequest so that the upgrade is asked for once.
func versionChange(in day2Input, p *day2Plan) ([]change, *outcome) {
	inst, asked := in.inst, in.spec.Datastoreversion
	running := inst.CompleteVersion
	if running == "" {
		running = inst.Version
	}
	if want, pr := minorUpgradeAsked(in.spec.Datastoretype, asked, running); !want {
		return nil, pr
	}
	switch decideOneShot(upgradeFacts(in.uid, asked, in.st.UpgradeRequest, running, inst.Tags, in.prior.Operation)) {
	case oneShotRecord:
		p.upgradeRequest = asked
	case oneShotMark:
		return []change{markChange(inst, TagUpgradeRequest, upgradeMark(in.uid, asked, running), "minor version upgrade")}, nil
	case oneShotIssue:
		return []change{{
			op:      OpMinorUpgrade,
			target:  asked,
			act:     action{kind: actUpgradeMinor, instance: inst.ID},
			records: records{upgradeRequest: asked},
		}}, nil
	}
	return nil, wontAct(ReasonVersionUnavailable, fmt.Sprintf(
		"A minor version upgrade for datastoreversion %s was issued, but the instance runs %s: OTC offers no newer minor version.", asked, running))
}

// markChange writes the tag of a one-shot request ahead of it (oneshot.go).
func markChange(inst *cloud.Instance, key, value, what string) change {
	return change{
		target: "mark of the " + what + " (tag " + key + ")",
		act:    action{kind: actSetTags, instance: inst.ID, tags: map[string]string{key: value}},
	}
}

// minorUpgradeAsked reports whether datastoreversion asked names a higher minor version of the
// major version running, or why it cannot be had.
func minorUpgradeAsked(engine, asked, running string) (bool, *outcome) {
	majorParts := 1
	switch engine {
	case v1alpha1.EngineMySQL:
		majorParts = 2
	case v1alpha1.EngineSQLServer:
		return false, nil // editions, no minor versions
	}
	var aBuf, rBuf [4]int // NOTE: versions have three or four parts: no allocation at every call
	a, r := versionParts(aBuf[:0], asked), versionParts(rBuf[:0], running)
	if a == nil || len(r) < majorParts {
		return false, nil
	}
	if len(a) < majorParts || slices.Compare(a[:majorParts], r[:majorParts]) != 0 {
		return false, wontAct(ReasonUnsupportedChange, fmt.Sprintf(
			"datastoreversion %q is not of the instance's major version %s: create a new Rds to change the major version.", asked, running))
	}
	return len(a) > majorParts && slices.Compare(a, r[:min(len(r), len(a))]) > 0, nil
}

// versionParts splits "8.0.28" into [8 0 28], appended to out; nil if it is not dotted numbers.
func versionParts(out []int, v string) []int {
	for p := range strings.SplitSeq(v, ".") {
		n := 0
		if p == "" || len(p) > 6 {
			return nil
		}
		for _, d := range p {
			if d < '0' || d > '9' {
				return nil
			}
			n = n*10 + int(d-'0')
		}
		out = append(out, n)
	}
	return out
}

// backupChange keeps the automated backup policy as the spec sets it. Unset fields (an empty
// window, 0 days) leave OTC's values alone.
func backupChange(in day2Input) ([]change, *outcome) {
	have := in.inst.BackupStrategy
	have.Period, _ = knownPeriod(in) // settings.go: the list lacks the days
	want := have
	if in.spec.Backupkeepdays > 0 {
		want.KeepDays = in.spec.Backupkeepdays
	}
	if in.spec.Backupstarttime != "" {
		want.StartTime = in.spec.Backupstarttime
	}
	if in.spec.Backupperiod != "" {
		want.Period = normalPeriod(in.spec.Backupperiod)
	}
	if want == have {
		return nil, nil
	}
	if want.KeepDays == 0 {
		asked := "backupstarttime needs"
		switch {
		case in.spec.Backupperiod != "" && in.spec.Backupstarttime != "":
			asked = "backupstarttime and backupperiod need"
		case in.spec.Backupperiod != "":
			asked = "backupperiod needs"
		}
		return nil, wontAct(ReasonInvalidSpec, asked+" automated backups, which are off for this instance: set backupkeepdays too.")
	}
	target := fmt.Sprintf("backup policy %s, %d days", want.StartTime, want.KeepDays)
	if want.Period != have.Period {
		target += ", days " + want.Period
	}
	return []change{{
		target:  target,
		act:     action{kind: actBackupPolicy, instance: in.inst.ID, policy: want},
		records: records{backupPolicy: &v1alpha1.BackupPolicy{StartTime: want.StartTime, KeepDays: want.KeepDays, Period: want.Period}},
	}}, nil
}

// restartChange restarts the instance once for each new spec.restartrequest, a one-shot request
// (oneshot.go): the tag first, the restart on a later call, the tag sealed once status records it.
func restartChange(in day2Input, p *day2Plan) ([]change, *outcome) {
	inst, want := in.inst, in.spec.Restartrequest
	switch decideOneShot(restartFacts(in.uid, want, in.st.RestartRequest, inst.Status, inst.Tags, in.prior.Operation, in.sentRestart)) {
	case oneShotRecord:
		p.restartRequest = want
	case oneShotMark:
		return []change{markChange(inst, TagRestartRequest, RequestMark(in.uid, want), "restart")}, nil
	case oneShotSeal:
		return []change{{
			target: "seal of the restart's mark (tag " + TagRestartRequest + ")",
			act:    action{kind: actSetTags, instance: inst.ID, tags: map[string]string{TagRestartRequest: RestartSeal(in.uid, want)}},
		}}, nil
	case oneShotIssue:
		return []change{{
			op:      OpRestart,
			target:  want,
			act:     action{kind: actRestart, instance: inst.ID},
			records: records{restartRequest: want},
		}}, nil
	}
	return nil, nil
}
