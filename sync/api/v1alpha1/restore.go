package v1alpha1

// RestoreFrom names where a new instance takes its data from: one backup of the source instance, or
// the source's state at a point in time. Exactly one of Backupid and Restoretime is set.
type RestoreFrom struct {
	// Instance is the OTC id or the exact OTC name of the source instance.
	Instance string `json:"instance"`
	// Backupid is the id of a completed backup of the source instance.
	Backupid string `json:"backupid,omitempty"`
	// Restoretime is a point in time within the source's restorable periods (RFC3339).
	Restoretime string `json:"restoretime,omitempty"`
}

// Results of a handled backuprestoretime.
const (
	// RestoreSkipped: the value was already set when the instance was created or adopted (or when
	// the hooks first saw the object), so it is not a request to restore.
	RestoreSkipped = "Skipped"
	// RestoreIssued: the restore was sent to OTC; its answer may have been lost.
	RestoreIssued = "Issued"
	// RestoreCompleted: OTC's restore job completed.
	RestoreCompleted = "Completed"
	// RestoreFailed: OTC's restore job failed.
	RestoreFailed = "Failed"
	// RestoreOutOfRange: the time lies outside the periods OTC can restore to; nothing was sent.
	RestoreOutOfRange = "OutOfRange"
	// RestoreRefused: the restore cannot be done (engine) or OTC refused it.
	RestoreRefused = "Refused"
)

// RestoreStatus records the last backuprestoretime the hooks handled, so that each value is
// acted on at most once.
type RestoreStatus struct {
	// Time is the handled backuprestoretime, as written in the spec ("" for none).
	Time string `json:"time,omitempty"`
	// Result is one of Skipped, Issued, Completed, Failed, OutOfRange, Refused.
	Result string `json:"result"`
	// JobID is OTC's restore job, when its answer arrived.
	JobID string `json:"jobID,omitempty"`
}

// DeepCopy returns a copy of the RestoreStatus.
func (r *RestoreStatus) DeepCopy() *RestoreStatus {
	if r == nil {
		return nil
	}
	out := *r
	return &out
}
