// The vocabulary of a change to the instance, shared by the steps that make one (day-2, settings,
// network, tags, autopilot): what a change is, how it is named, the outcomes it is reported with,
// and what status remembers once it is sent. It calls no step's file, so that the steps call it
// and not each other (TestTheCallKeepsItsShape).

package reconcile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// progress describes a running day-2 operation; %s is its target.
var progress = map[string]string{
	OpSingleToHA:   "Adding a standby node in %s",
	OpResize:       "Resizing to %s",
	OpStorage:      "Growing the storage to %s",
	OpMinorUpgrade: "Upgrading the minor version for datastoreversion %s",
	OpRestart:      "Restarting for restartrequest %q",
	// settings.go
	OpStorageType:     "Changing the storage type to %s",
	OpReplicationMode: "Changing the replication mode to %s",
	OpStop:            "Stopping the instance until OTC reports it %s",
	OpStart:           "Starting the instance until OTC reports it %s",
	// day2_network.go
	OpSecurityGroup: "Moving the instance to the security group %s",
	OpPort:          "Moving the database to port %s",
	OpSSL:           "Turning SSL %s",
	// replicas.go: the primary takes no change while a read replica is built
	OpCreateReplica: "Creating the read replica %s",
	// parameters.go: parametersrestart Immediate
	OpParametersRestart: "Restarting to bring the parameters %s into effect",
}

// change is one difference between the spec and the instance, as data: the action that removes
// it, what must be checked before it is made, and what status records once it is sent.
type change struct {
	op     string // the Operation type; "" for changes that take effect at once (backup policy, tags)
	target string // what the change moves to, for status.operation.target and messages
	// whenFull marks a change OTC takes in STORAGE FULL too: storage growth is the way out of it.
	whenFull bool
	// flavor, when set, must be offered and on sale for the change to be made (checkFlavor).
	flavor *flavorNeed
	// grownFlavor marks a resize that autopilot's growth may make unnecessary (autopilotGrown).
	grownFlavor bool
	// whenStopped marks the change a stopped instance takes: its start (settings.go).
	whenStopped bool
	// what names the change for messages when its op does not (describe).
	what    string
	act     action
	records records
}

// flavorNeed is a flavor a change needs: its code, its class and the AZs it must be on sale in.
type flavorNeed struct {
	code string
	ha   bool
	azs  []string
}

// records is what status remembers once a change is sent, accepted or without an answer, so that
// it is never asked twice.
type records struct {
	upgradeRequest string // status.upgradeRequest
	restartRequest string // status.restartRequest, and this process's ledger
	autopilot      *autopilotRecord
	stopped        *v1alpha1.StoppedStatus // status.stopped, of a stop sent
	backupPolicy   *v1alpha1.BackupPolicy  // status.backupPolicy, of a policy sent
}

// wontAct is the outcome of a difference the hook will not act on, with the reason that says
// why: it stays until the spec changes.
func wontAct(reason, message string) *outcome {
	return ptr.To(notSynced(reason, message, settled))
}

// sent is a change made and OTC's answer to it.
type sent struct {
	res acted
	err error
}

// issuedHead is the head of a plan whose change was sent, on OTC's answer. A change whose answer
// was lost (OTC may have acted) is recorded as if it had been accepted (recordSent): the next call
// looks at the instance before acting again.
func issuedHead(h head, instance string, ch change, a sent, generation int64) head {
	if a.err != nil {
		h.err = a.err // refused: nothing happened, try again later; or no answer
		return h
	}
	h.logs = append(h.logs, logLine{slog.LevelInfo, "issued day-2 change", []any{"instance", instance, "operation", describe(ch), "job", a.res.jobID}})
	if ch.op != "" {
		h.tells = append(h.tells, finding{outcome: inProgress(sentOperation(ch, a, generation)).made()})
		return h
	}
	h.tells = append(h.tells, finding{outcome: syncedOK(ReasonReconcileSuccess, "The change was made in OTC.", inFlight).made()})
	return h
}

// sentOperation is status.operation for a sent change of an operation type.
func sentOperation(ch change, a sent, generation int64) *v1alpha1.Operation {
	return &v1alpha1.Operation{Type: ch.op, JobID: a.res.jobID, Generation: generation, Target: ch.target}
}

// recordSent writes what the answer remembers of a sent change, unless OTC refused it: the change's
// records and its operation.
func recordSent(a *answer, uid string, inst *cloud.Instance, ch change, s sent, generation int64) {
	if s.err != nil && !outcomeUnknown(s.err) {
		return
	}
	record(a, uid, inst, ch.records)
	if ch.op != "" {
		a.st.Operation = sentOperation(ch, s, generation)
	}
}

// record writes what status, and the process (memo), remember of a sent change.
func record(a *answer, uid string, inst *cloud.Instance, r records) {
	if r.upgradeRequest != "" {
		a.st.UpgradeRequest = r.upgradeRequest
	}
	if r.stopped != nil {
		a.st.Stopped = r.stopped
	}
	if r.backupPolicy != nil {
		a.st.BackupPolicy = r.backupPolicy
	}
	if r.restartRequest != "" {
		a.st.RestartRequest = r.restartRequest
		a.keep.restarts = append(a.keep.restarts, oneShotKey(types.UID(uid), OpRestart, r.restartRequest))
	}
	if rec := r.autopilot; rec != nil {
		ap := autopilotOf(&a.st)
		ap.Last = rec.last
		if rec.flavor != "" {
			ap.Flavor, ap.FlavorFloor = rec.flavor, rec.flavorFloor
		}
		if rec.volume > 0 {
			ap.Volume, ap.VolumeFloor = rec.volume, rec.volumeFloor
		}
		a.keep.rememberAutopilot(inst.ID, *rec.last)
	}
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

// inProgress is the Synced outcome while a day-2 operation runs.
func inProgress(op *v1alpha1.Operation) outcome {
	return syncedOK(ReasonChangeInProgress, fmt.Sprintf(progress[op.Type]+", asked by generation %d.", op.Target, op.Generation), inFlight)
}

// describe names a change for messages.
func describe(ch change) string {
	if ch.what != "" {
		return ch.what
	}
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
	case OpStorageType:
		return "storage type change to " + ch.target
	case OpReplicationMode:
		return "replication mode change to " + ch.target
	case OpStop:
		return "stop"
	case OpStart:
		return "start"
	case OpSecurityGroup:
		return "move to the security group " + ch.target
	case OpPort:
		return "move to port " + ch.target
	case OpSSL:
		return "switch of SSL " + ch.target
	}
	return ch.target
}

// describeOp names a running operation for messages, as describe names the change that started it.
func describeOp(op *v1alpha1.Operation) string {
	return describe(change{op: op.Type, target: op.Target})
}

func isHAInstance(inst *cloud.Instance) bool { return strings.EqualFold(inst.Type, "Ha") }

// instanceAZs are the AZs the instance's nodes run in, sorted: after a failover the primary may
// sit in what the spec names as the standby's AZ, which is no difference.
func instanceAZs(spec *v1alpha1.RdsSpec, inst *cloud.Instance) []string {
	if azs := nodeAZs(inst); len(azs) > 0 {
		return azs
	}
	azs := AvailabilityZones(spec)
	slices.Sort(azs)
	return azs
}

// nodeAZs are the AZs the instance's nodes run in, sorted, each once.
func nodeAZs(inst *cloud.Instance) []string {
	var azs []string
	for _, n := range inst.Nodes {
		if n.AvailabilityZone != "" {
			azs = append(azs, n.AvailabilityZone)
		}
	}
	slices.Sort(azs)
	return slices.Compact(azs)
}

// autopilotOf is status.autopilot, made if there is none yet.
func autopilotOf(st *v1alpha1.RdsStatus) *v1alpha1.AutopilotStatus {
	if st.Autopilot == nil {
		st.Autopilot = &v1alpha1.AutopilotStatus{}
	}
	return st.Autopilot
}

// rememberAutopilot keeps autopilot's last change to the instance.
func (m *memo) rememberAutopilot(id string, last v1alpha1.AutopilotAction) {
	if m.autopilot == nil {
		m.autopilot = map[string]v1alpha1.AutopilotAction{}
	}
	m.autopilot[id] = last
}
