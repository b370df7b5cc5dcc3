package sync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

// progress describes a running day-2 operation; %s is its target.
var progress = map[string]string{
	OpSingleToHA:   "Adding a standby node in %s",
	OpResize:       "Resizing to %s",
	OpStorage:      "Growing the storage to %s",
	OpMinorUpgrade: "Upgrading the minor version for datastoreversion %s",
	OpRestart:      "Restarting for restartrequest %q",
}

// change is one difference between the spec and the instance, and the one call that removes it.
type change struct {
	op     string // the Operation type; "" for changes that take effect at once (backup policy, tags)
	target string // what the change moves to, for status.operation.target and messages
	// whenFull marks a change OTC takes in STORAGE FULL too: storage growth is the way out of it.
	whenFull bool
	// check reads what the change needs from OTC and says why it cannot be made, if it cannot.
	check func(ctx context.Context) (*problem, error)
	issue func(ctx context.Context) (jobID string, err error)
	// issued remembers in status that the change was asked for, so that it is never asked twice.
	issued func()
}

// problem is a difference the hook will not act on, with the condition that says why.
type problem struct{ reason, message string }

// operate makes at most one day-2 change to a running instance: single to HA, resize, storage
// growth, minor upgrade, backup policy, tags, restart, in this order. Only fields the spec owns
// are compared, against what OTC reports now, and only while the instance is ACTIVE with no
// operation in flight: while a change runs, OTC still reports the old values.
func (c *call) operate(ctx context.Context, inst *cloud.Instance) (stop bool, err error) {
	c.trackTags(inst)
	changes, problems := c.day2Changes(inst)
	op := c.st.Operation
	if len(changes) == 0 {
		switch {
		case op != nil && progress[op.Type] != "":
			c.inProgress(op) // problems may be old values OTC still reports: judge them afterwards
		case op != nil:
		case len(problems) > 0:
			c.refuse(problems)
		}
		return false, nil
	}

	// The guards, in ACK's order: deleting, creating, terminal, not ACTIVE, an operation in flight.
	first := changes[0]
	switch {
	case c.parent.DeletionTimestamp != nil || (op != nil && op.Type == OpDelete):
		return false, nil // finalize owns the instance now
	case inst.Status == cloud.StatusBuild || (op != nil && op.Type == OpCreate):
		c.setSynced(metav1.ConditionTrue, ReasonWaitingForInstance, "Changes wait until the instance is created.")
		return false, nil
	case inst.Status == cloud.StatusStorageFull:
		changes = slices.DeleteFunc(changes, func(ch change) bool { return !ch.whenFull })
		if len(changes) == 0 {
			c.setSynced(metav1.ConditionFalse, ReasonInstanceUnavailable, fmt.Sprintf(
				"The instance is %s in OTC; the pending %s waits until it is ACTIVE again. Grow volumesize to free it.", inst.Status, describe(first)))
			return false, nil
		}
	case terminal(inst.Status):
		c.setSynced(metav1.ConditionFalse, ReasonInstanceUnavailable, fmt.Sprintf(
			"The instance is %s in OTC; the pending %s waits until it is ACTIVE again.", inst.Status, describe(first)))
		return false, nil
	case op != nil:
		if progress[op.Type] != "" {
			c.inProgress(op)
		}
		return false, nil
	case !usable(inst.Status):
		c.setSynced(metav1.ConditionTrue, ReasonWaitingForInstance, fmt.Sprintf(
			"The pending %s waits until the instance is ACTIVE.", describe(first)))
		c.resync = c.r.cfg.ResyncPending
		return false, nil
	}

	for _, ch := range changes {
		if ch.check != nil {
			p, err := ch.check(ctx)
			if err != nil {
				return true, c.cloudError(err)
			}
			if p != nil {
				if p.reason != "" {
					problems = append(problems, *p)
				}
				continue // a problem without a reason: no difference after all (autopilot.go)
			}
		}
		return true, c.issue(ctx, inst, ch)
	}
	if len(problems) > 0 {
		c.refuse(problems)
	}
	return false, nil
}

// issue makes the change and records it. A change whose answer was lost (OTC may have acted) is
// recorded as if it had been accepted: the next call looks at the instance before acting again.
func (c *call) issue(ctx context.Context, inst *cloud.Instance, ch change) error {
	var jobID string
	err := c.cloudCall(ctx, func(ctx context.Context) (err error) {
		jobID, err = ch.issue(ctx)
		return err
	})
	if err != nil && !outcomeUnknown(err) {
		return c.cloudError(err) // refused: nothing happened, try again later
	}
	if ch.issued != nil {
		ch.issued()
	}
	if ch.op != "" {
		c.st.Operation = &v1alpha1.Operation{Type: ch.op, JobID: jobID, Generation: c.parent.Generation, Target: ch.target}
	}
	if err != nil {
		return c.cloudError(err)
	}
	c.log.Info("issued day-2 change", "instance", inst.ID, "operation", describe(ch), "job", jobID)
	c.resync = c.r.cfg.ResyncPending
	if ch.op != "" {
		c.inProgress(c.st.Operation)
		return nil
	}
	c.setSynced(metav1.ConditionTrue, ReasonReconcileSuccess, "The change was made in OTC.")
	return nil
}

// outcomeUnknown reports whether a failed call may have been carried out all the same: no answer
// arrived, or a server error did.
func outcomeUnknown(err error) bool {
	if errors.Is(err, errViewStale) {
		return false // never sent
	}
	switch cloud.KindOf(err) {
	case cloud.KindUnavailable, cloud.KindUnknown:
		return true
	}
	return errors.Is(err, context.DeadlineExceeded)
}

func (c *call) inProgress(op *v1alpha1.Operation) {
	c.setSynced(metav1.ConditionTrue, ReasonChangeInProgress, fmt.Sprintf(progress[op.Type]+", asked by generation %d.", op.Target, op.Generation))
	c.resync = c.r.cfg.ResyncPending
}

// refuse reports the differences the hook does not act on. They stay until the spec changes.
func (c *call) refuse(problems []problem) {
	msgs := make([]string, len(problems))
	for i, p := range problems {
		msgs[i] = p.message
	}
	c.setSynced(metav1.ConditionFalse, problems[0].reason, joinSentences(msgs))
}

// describe names a change for messages.
func describe(ch change) string {
	switch ch.op {
	case OpSingleToHA:
		return "change to hamode Ha"
	case OpResize:
		return "resize to " + ch.target
	case OpStorage:
		return "storage growth to " + ch.target
	case OpMinorUpgrade:
		return "minor version upgrade to " + ch.target
	case OpRestart:
		return "restart"
	}
	return ch.target
}

// terminal reports a status in which OTC takes no changes until someone repairs the instance.
func terminal(status string) bool {
	switch status {
	case cloud.StatusFailed, cloud.StatusCreateFail, cloud.StatusFrozen, cloud.StatusStorageFull, cloud.StatusShutdown:
		return true
	}
	return false
}

// day2Changes lists the differences in their fixed order, without calling OTC.
func (c *call) day2Changes(inst *cloud.Instance) ([]change, []problem) {
	var changes []change
	var problems []problem
	for _, diff := range []func(*cloud.Instance) ([]change, *problem){
		c.haChange, c.flavorChange, c.storageChange, c.versionChange, c.backupChange, c.tagChanges, c.restartChange,
	} {
		chs, p := diff(inst)
		changes = append(changes, chs...)
		if p != nil {
			problems = append(problems, *p)
		}
	}
	return changes, problems
}

func isHAInstance(inst *cloud.Instance) bool { return strings.EqualFold(inst.Type, "Ha") }

// instanceAZs are the AZs the instance's nodes run in, sorted: after a failover the primary may
// sit in what the spec names as the standby's AZ, which is no difference.
func (c *call) instanceAZs(inst *cloud.Instance) []string {
	var azs []string
	for _, n := range inst.Nodes {
		if n.AvailabilityZone != "" && !slices.Contains(azs, n.AvailabilityZone) {
			azs = append(azs, n.AvailabilityZone)
		}
	}
	if len(azs) == 0 {
		azs = AvailabilityZones(c.spec)
	}
	slices.Sort(azs)
	return azs
}

// haChange turns a single instance into a primary/standby pair when hamode asks for it. The
// standby goes to the AZ the spec adds to the one the instance uses.
func (c *call) haChange(inst *cloud.Instance) ([]change, *problem) {
	switch wantHA := IsHA(c.spec); {
	case !wantHA && isHAInstance(inst):
		return nil, &problem{ReasonUnsupportedChange,
			"hamode Single: OTC cannot turn a primary/standby instance back into a single one; create a new Rds for that."}
	case !wantHA || !strings.EqualFold(inst.Type, "Single"):
		return nil, nil
	}
	used := c.instanceAZs(inst)
	var added []string
	for _, az := range AvailabilityZones(c.spec) {
		if !slices.Contains(used, az) {
			added = append(added, az)
		}
	}
	if len(added) != 1 {
		return nil, &problem{ReasonInvalidSpec, fmt.Sprintf(
			"availabilityzone %q must keep the instance's AZ %s and add one AZ for the standby.", c.spec.Availabilityzone, strings.Join(used, ","))}
	}
	standby := added[0]
	// NOTE: OTC moves the instance to the HA variant of its current flavor; a different flavorref
	// is a resize afterwards.
	haFlavor := inst.Flavor + ".ha"
	return []change{{
		op:     OpSingleToHA,
		target: standby,
		check: func(ctx context.Context) (*problem, error) {
			return c.checkFlavor(ctx, inst, haFlavor, true, append(slices.Clone(used), standby))
		},
		issue: func(ctx context.Context) (string, error) {
			var pw secret.Value // NOTE: OTC needs the root password for SQL Server only
			if c.spec.Datastoretype == v1alpha1.EngineSQLServer {
				pw = c.conn.password
			}
			return c.cloud.SingleToHA(ctx, inst.ID, standby, pw)
		},
	}}, nil
}

// flavorChange resizes to spec.flavorref once the instance is of the flavor's class.
func (c *call) flavorChange(inst *cloud.Instance) ([]change, *problem) {
	ha := IsHA(c.spec)
	if c.spec.Flavorref == inst.Flavor || ha != isHAInstance(inst) || c.autopilotKeepsFlavor(inst) {
		return nil, nil
	}
	flavor := c.spec.Flavorref
	return []change{{
		op:     OpResize,
		target: flavor,
		check: func(ctx context.Context) (*problem, error) {
			if c.spec.Autopilot {
				if kept, err := c.autopilotGrewFlavor(ctx, inst); kept || err != nil {
					return &problem{}, err
				}
			}
			return c.checkFlavor(ctx, inst, flavor, ha, c.instanceAZs(inst))
		},
		issue: func(ctx context.Context) (string, error) { return c.cloud.ResizeFlavor(ctx, inst.ID, flavor) },
	}}, nil
}

// checkFlavor says why a flavor cannot be had: OTC does not offer it for the engine and version,
// it is of the other class (single or HA), or it is not on sale in one of the AZs.
func (c *call) checkFlavor(ctx context.Context, inst *cloud.Instance, code string, ha bool, azs []string) (*problem, error) {
	var flavors []cloud.Flavor
	if err := c.cloudCall(ctx, func(ctx context.Context) (err error) {
		flavors, err = c.cloud.ListFlavors(ctx, inst.Engine, inst.Version)
		return err
	}); err != nil {
		return nil, err
	}
	i := slices.IndexFunc(flavors, func(f cloud.Flavor) bool { return f.SpecCode == code })
	if i < 0 {
		return &problem{ReasonFlavorUnavailable, fmt.Sprintf("The flavor %s is not offered for %s %s.", code, inst.Engine, inst.Version)}, nil
	}
	f := flavors[i]
	wantMode := "single"
	if ha {
		wantMode = "ha"
	}
	if !strings.EqualFold(f.Mode, wantMode) {
		return &problem{ReasonFlavorUnavailable, fmt.Sprintf("The flavor %s is for %s instances, not %s ones.", code, f.Mode, wantMode)}, nil
	}
	for _, az := range azs {
		if st := f.AZStatus[az]; st != "normal" {
			if st == "" {
				st = "unsupported"
			}
			return &problem{ReasonFlavorUnavailable, fmt.Sprintf("The flavor %s is not available in %s (%s).", code, az, st)}, nil
		}
	}
	return nil, nil
}

// storageChange grows the volume to spec.volumesize. A smaller size is refused again here for
// objects that predate the CRD's rule.
func (c *call) storageChange(inst *cloud.Instance) ([]change, *problem) {
	want, have := c.spec.Volumesize, inst.Volume.Size
	switch {
	case want < have && c.autopilotKeepsVolume(inst):
		return nil, nil // autopilot or OTC grew it: volumesize is a floor (autopilot.go)
	case want < have:
		return nil, &problem{ReasonUnsupportedChange, fmt.Sprintf(
			"volumesize %d is below the instance's %d GB: OTC cannot shrink a volume; set volumesize to %d or more.", want, have, have)}
	case want < have+10:
		return nil, nil // NOTE: OTC grows in steps of at least 10 GB
	}
	return []change{{
		op:       OpStorage,
		target:   fmt.Sprintf("%dGB", want),
		whenFull: true,
		issue:    func(ctx context.Context) (string, error) { return c.cloud.EnlargeVolume(ctx, inst.ID, want) },
	}}, nil
}

// versionChange upgrades the minor version when datastoreversion names a higher one than the
// instance runs. "8.0" asked while 8.0.28 runs is no difference, nor is 8.0.20 (no downgrades).
//
// NOTE: OTC upgrades to its newest minor version, which may lie below the one asked: the asked
// version is remembered in status.upgradeRequest so that the upgrade is asked for once.
func (c *call) versionChange(inst *cloud.Instance) ([]change, *problem) {
	asked := c.spec.Datastoreversion
	running := inst.CompleteVersion
	if running == "" {
		running = inst.Version
	}
	if want, p := minorUpgradeAsked(c.spec.Datastoretype, asked, running); !want {
		return nil, p
	}
	switch decideOneShot(upgradeFacts(string(c.parent.UID), asked, c.st.UpgradeRequest, running, inst.Tags, c.parent.Status.Operation)) {
	case oneShotRecord:
		c.st.UpgradeRequest = asked
	case oneShotMark:
		return []change{c.markChange(inst, TagUpgradeRequest, upgradeMark(string(c.parent.UID), asked, running), "minor version upgrade")}, nil
	case oneShotIssue:
		return []change{{
			op:     OpMinorUpgrade,
			target: asked,
			issue:  func(ctx context.Context) (string, error) { return c.cloud.UpgradeMinorVersion(ctx, inst.ID) },
			issued: func() { c.st.UpgradeRequest = asked },
		}}, nil
	}
	return nil, &problem{ReasonVersionUnavailable, fmt.Sprintf(
		"A minor version upgrade for datastoreversion %s was issued, but the instance runs %s: OTC offers no newer minor version.", asked, running)}
}

// markChange writes the tag of a one-shot request ahead of it (oneshot.go).
func (c *call) markChange(inst *cloud.Instance, key, value, what string) change {
	return change{
		target: "mark of the " + what + " (tag " + key + ")",
		issue: func(ctx context.Context) (string, error) {
			return "", c.cloud.SetTags(ctx, inst.ID, map[string]string{key: value})
		},
	}
}

// minorUpgradeAsked reports whether datastoreversion asked names a higher minor version of the
// major version running, or why it cannot be had.
func minorUpgradeAsked(engine, asked, running string) (bool, *problem) {
	majorParts := 1
	switch engine {
	case v1alpha1.EngineMySQL:
		majorParts = 2
	case v1alpha1.EngineSQLServer:
		return false, nil // editions, no minor versions
	}
	a, r := versionParts(asked), versionParts(running)
	if a == nil || len(r) < majorParts {
		return false, nil
	}
	if len(a) < majorParts || slices.Compare(a[:majorParts], r[:majorParts]) != 0 {
		return false, &problem{ReasonUnsupportedChange, fmt.Sprintf(
			"datastoreversion %q is not of the instance's major version %s: create a new Rds to change the major version.", asked, running)}
	}
	return len(a) > majorParts && slices.Compare(a, r[:min(len(r), len(a))]) > 0, nil
}

// versionParts splits "8.0.28" into [8 0 28]; nil if it is not dotted numbers.
func versionParts(v string) []int {
	var out []int
	for _, p := range strings.Split(v, ".") {
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
func (c *call) backupChange(inst *cloud.Instance) ([]change, *problem) {
	want := inst.BackupStrategy
	if c.spec.Backupkeepdays > 0 {
		want.KeepDays = c.spec.Backupkeepdays
	}
	if c.spec.Backupstarttime != "" {
		want.StartTime = c.spec.Backupstarttime
	}
	if want == inst.BackupStrategy {
		return nil, nil
	}
	if want.KeepDays == 0 {
		return nil, &problem{ReasonInvalidSpec,
			"backupstarttime needs automated backups, which are off for this instance: set backupkeepdays too."}
	}
	return []change{{
		target: fmt.Sprintf("backup policy %s, %d days", want.StartTime, want.KeepDays),
		issue: func(ctx context.Context) (string, error) {
			return "", c.cloud.UpdateBackupPolicy(ctx, inst.ID, want)
		},
	}}, nil
}

// restartChange restarts the instance once for each new spec.restartrequest, a one-shot request
// (oneshot.go): the tag first, the restart on a later call, the tag sealed once status records it.
func (c *call) restartChange(inst *cloud.Instance) ([]change, *problem) {
	want := c.spec.Restartrequest
	key := c.oneShotKey(OpRestart, want)
	switch decideOneShot(restartFacts(string(c.parent.UID), want, c.st.RestartRequest, inst.Status, inst.Tags, c.parent.Status.Operation, c.r.sent.seen(key))) {
	case oneShotRecord:
		c.st.RestartRequest = want
	case oneShotMark:
		return []change{c.markChange(inst, TagRestartRequest, RequestMark(string(c.parent.UID), want), "restart")}, nil
	case oneShotSeal:
		return []change{{
			target: "seal of the restart's mark (tag " + TagRestartRequest + ")",
			issue: func(ctx context.Context) (string, error) {
				return "", c.cloud.SetTags(ctx, inst.ID, map[string]string{TagRestartRequest: RestartSeal(string(c.parent.UID), want)})
			},
		}}, nil
	case oneShotIssue:
		return []change{{
			op:     OpRestart,
			target: want,
			issue:  func(ctx context.Context) (string, error) { return c.cloud.RestartInstance(ctx, inst.ID) },
			issued: func() { c.st.RestartRequest = want; c.r.sent.record(key) },
		}}, nil
	}
	return nil, nil
}
