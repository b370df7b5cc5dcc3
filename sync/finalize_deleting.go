// What finalize reports while it deletes, shared by the deletion of the instance (finalize.go),
// of its read replicas (finalize_replicas.go) and the start of a stopped instance before it
// (finalize_stopped.go).

package reconcile

import (
	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// deleting reports a deletion under way; its Ready reason says whether the final backup still runs.
func deleting(p finalizePlan, message string) finalizePlan {
	reason := ReasonDeleting
	if fb := p.finalBackup; fb != nil && fb.Status != cloud.BackupCompleted && (p.operation == nil || p.operation.Type != OpDelete) {
		reason = ReasonFinalBackupInProgress
	}
	p.ready = ptr.To(notReady(reason, message, inFlight))
	p.synced = ptr.To(syncedOK(ReasonReconcileSuccess, "Deletion is in progress.", inFlight))
	return p
}
