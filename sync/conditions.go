package sync

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
)

// Reasons. Each is CamelCase and stable; its message is a plain sentence that does not change
// while the same problem persists (no request ids, no timestamps, no counters), so that a repeated
// observation writes the same status and does not start a sync loop.
const (
	ReasonAvailable          = "Available"
	ReasonCreating           = "Creating"
	ReasonWaitingForSecret   = "WaitingForPasswordSecret"
	ReasonPasswordSecretLost = "PasswordSecretMissing"
	ReasonCreateFailed       = "CreateFailed"
	ReasonUnavailable        = "InstanceUnavailable"
	ReasonBusy               = "InstanceBusy"
	ReasonInstanceNotFound   = "InstanceNotFound"
	ReasonInvalidSpec        = "InvalidSpec"
	ReasonReconciled         = "ReconcileSuccess"
	ReasonCloudUnavailable   = "CloudUnavailable"
	ReasonCloudRefused       = "CloudRefused"
	ReasonUnauthorized       = "CloudUnauthorized"
	ReasonDeleting           = "Deleting"
	ReasonFinalBackup        = "FinalBackupInProgress"
	ReasonFinalBackupFailed  = "FinalBackupFailed"
	ReasonRetained           = "Retained"
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
	for i := range st.Conditions {
		if st.Conditions[i].Type == typ {
			return &st.Conditions[i]
		}
	}
	return nil
}

// keepTransitionTimes gives every condition that ends a call with the status it had when the call
// began its observed LastTransitionTime back. A call may set a condition twice (Synced True once
// the instance is reported, then False from a later step); without this, each such call would
// write a new transition time and Metacontroller would sync for ever.
func keepTransitionTimes(observed []v1alpha1.Condition, st *v1alpha1.RdsStatus) {
	for i := range st.Conditions {
		c := &st.Conditions[i]
		for _, o := range observed {
			if o.Type == c.Type && o.Status == c.Status {
				c.LastTransitionTime = o.LastTransitionTime
			}
		}
	}
}
