package reconcile

import (
	"strings"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// Operation types recorded in status.
const (
	OpCreate = "Create"
	OpDelete = "Delete"
	OpBackup = "FinalBackup"
)

// transitional reports whether OTC is in the middle of something for this status.
func transitional(status string) bool {
	switch status {
	case cloud.StatusBuild, cloud.StatusModifying, cloud.StatusRebooting, cloud.StatusRestoring,
		cloud.StatusModifyingInstanceType, cloud.StatusSwitchover, cloud.StatusMigrating,
		cloud.StatusBackingUp, cloud.StatusModifyingPort:
		return true
	}
	return false
}

// usable reports whether the instance can take a change now.
func usable(status string) bool { return status == cloud.StatusActive }

// readiness maps OTC's status onto the Ready condition: one switch, one place.
func readiness(status string) (reason, message string, ready bool) {
	switch status {
	case cloud.StatusActive:
		return ReasonAvailable, "The instance is available.", true
	case cloud.StatusBackingUp:
		return ReasonAvailable, "The instance is available while a backup runs.", true
	case cloud.StatusBuild:
		return ReasonCreating, "The instance is being created.", false
	case cloud.StatusCreateFail:
		return ReasonCreateFailed, "OTC could not create the instance.", false
	case cloud.StatusFailed, cloud.StatusFrozen, cloud.StatusStorageFull, cloud.StatusShutdown:
		return ReasonInstanceUnavailable, "The instance is " + status + " in OTC.", false
	default:
		return camel(status), "The instance is " + status + " in OTC.", false
	}
}

// operationDone reports whether OTC has finished the recorded operation.
func operationDone(op *v1alpha1.Operation, status string) bool {
	switch op.Type {
	case OpCreate:
		return status != cloud.StatusBuild
	case OpCreateReplica:
		return false // the replicas step ends it once the replica is built (replicas.go)
	case OpDelete, OpBackup:
		// Done only when OTC no longer lists the instance, or when the backup completes.
		return false
	default:
		return !transitional(status)
	}
}

// camel turns "MODIFYING INSTANCE TYPE" into "ModifyingInstanceType".
func camel(status string) string {
	var b strings.Builder
	for _, w := range strings.Fields(strings.ToLower(status)) {
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	if b.Len() == 0 {
		return "Unknown"
	}
	return b.String()
}

// statusSoFar is what the steps on the instance (network, parameters, day-2, autopilot) decide on
// of this call's status so far (report, the earlier steps' renders): the fields they read, copied
// when the step is made, with the status's own names. A step holds these rather than a copy of the
// whole status (600 bytes each, a quarter of what a steady call allocated in its steps, #18). The
// copy is shallow, as the status's was: a plan writes none of what the pointers point to. A plan
// that needs another field of the status adds it here and in soFar.
type statusSoFar struct {
	Operation   *v1alpha1.Operation
	Autopilot   *v1alpha1.AutopilotStatus
	Parameters  *v1alpha1.ParametersStatus
	NetworkRefs *v1alpha1.NetworkRefs
	// LowerCaseTableNames is what the create asked for, or the instance's parameters reported.
	LowerCaseTableNames *int
	PortRequest         int
	PortReported        int
	RestartRequest      string
	UpgradeRequest      string
	ManagedTags         []string
	Stopped             *v1alpha1.StoppedStatus
	BackupPolicy        *v1alpha1.BackupPolicy
	// Conditions are the last call's conditions (the call chooses its own at render).
	Conditions []v1alpha1.Condition
}

// soFar is what the steps on the instance read of st (statusSoFar).
func soFar(st *v1alpha1.RdsStatus) statusSoFar {
	return statusSoFar{
		Operation: st.Operation, Autopilot: st.Autopilot, Parameters: st.Parameters, NetworkRefs: st.NetworkRefs,
		LowerCaseTableNames: st.LowerCaseTableNames, PortRequest: st.PortRequest, PortReported: st.PortReported,
		RestartRequest: st.RestartRequest, UpgradeRequest: st.UpgradeRequest, ManagedTags: st.ManagedTags,
		Stopped: st.Stopped, BackupPolicy: st.BackupPolicy, Conditions: st.Conditions,
	}
}
