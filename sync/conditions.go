package reconcile

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
)

// Reasons. Each is CamelCase and stable; its message is a plain sentence that does not change
// while the same problem persists (no request ids, no timestamps, no counters), so that a repeated
// observation writes the same status and does not start a sync loop.
const (
	ReasonAvailable                = "Available"
	ReasonCreating                 = "Creating"
	ReasonWaitingForPasswordSecret = "WaitingForPasswordSecret"
	ReasonPasswordSecretMissing    = "PasswordSecretMissing"
	ReasonCreateFailed             = "CreateFailed"
	ReasonInstanceUnavailable      = "InstanceUnavailable"
	ReasonInstanceBusy             = "InstanceBusy"
	ReasonInstanceNotFound         = "InstanceNotFound"
	ReasonInvalidSpec              = "InvalidSpec"
	ReasonReconcileSuccess         = "ReconcileSuccess"
	ReasonCloudUnavailable         = "CloudUnavailable"
	ReasonCloudRefused             = "CloudRefused"
	ReasonCloudUnauthorized        = "CloudUnauthorized"
	ReasonDeleting                 = "Deleting"
	ReasonFinalBackupInProgress    = "FinalBackupInProgress"
	ReasonFinalBackupFailed        = "FinalBackupFailed"
	ReasonRetained                 = "Retained"
	// ReasonInstanceNameTaken: only another object's (or a released) instance carries this
	// object's instance name.
	ReasonInstanceNameTaken = "InstanceNameTaken"
	// ReasonDuplicateInstances: OTC lists more than one instance of this object.
	ReasonDuplicateInstances = "DuplicateInstances"
	// ReasonAdoptionRefused: the adoption policy does not let this object adopt the instance.
	ReasonAdoptionRefused = "AdoptionRefused"
	// ReasonRestoreSourceRefused: restorefrom names an instance of another namespace.
	ReasonRestoreSourceRefused = "RestoreSourceRefused"
	// ReasonWaitingForInstance: a change (day-2, databases) waits for the instance to be ACTIVE.
	ReasonWaitingForInstance = "WaitingForInstance"
)

// setCondition sets one condition, keeping LastTransitionTime while the status holds.
func setCondition(st *v1alpha1.RdsStatus, now metav1.Time, typ string, status metav1.ConditionStatus, reason, message string) {
	for i := range st.Conditions {
		c := &st.Conditions[i]
		if c.Type != typ {
			continue
		}
		if c.Status != status {
			c.LastTransitionTime = now
		}
		c.Status, c.Reason, c.Message = status, reason, message
		return
	}
	st.Conditions = append(st.Conditions, v1alpha1.Condition{
		Type: typ, Status: status, Reason: reason, Message: message, LastTransitionTime: now,
	})
}

// getCondition returns the condition of type typ, or nil.
func getCondition(st *v1alpha1.RdsStatus, typ string) *v1alpha1.Condition {
	return getConditionIn(st.Conditions, typ)
}

// getConditionIn returns the condition of type typ among conds, or nil.
func getConditionIn(conds []v1alpha1.Condition, typ string) *v1alpha1.Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

// removeCondition drops the condition of type typ, if any.
func removeCondition(st *v1alpha1.RdsStatus, typ string) {
	st.Conditions = slices.DeleteFunc(st.Conditions, func(c v1alpha1.Condition) bool { return c.Type == typ })
}
