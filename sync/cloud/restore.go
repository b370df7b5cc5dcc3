package cloud

import (
	"context"
	"time"
)

// Restores are point-in-time restores into the same instance and restores into a new instance.
type Restores interface {
	// ListRestoreTimes returns the periods the instance can be restored to.
	ListRestoreTimes(ctx context.Context, instanceID string) ([]TimeRange, error)
	// RestoreInPlace restores the instance to its own state at a point in time and returns the
	// job id. It does not wait for the restore.
	RestoreInPlace(ctx context.Context, instanceID string, at time.Time) (jobID string, err error)
	// RestoreToNew issues the creation of a new instance from a restore point and returns the new
	// instance id and its job id. Engine, Version and Region of the options are not sent: OTC takes
	// them from the source.
	RestoreToNew(ctx context.Context, opts RestoreToNewOpts) (id, jobID string, err error)
}

// TimeRange is a closed period of time.
type TimeRange struct {
	Start, End time.Time
}

// Contains reports whether t lies within the range, both ends included.
func (r TimeRange) Contains(t time.Time) bool { return !t.Before(r.Start) && !t.After(r.End) }

// RestorePoint is where a restore takes its data from: a backup of the instance (BackupID) or the
// instance's state at a time (Time). Exactly one of them is set.
type RestorePoint struct {
	InstanceID string
	BackupID   string
	Time       time.Time
}

// RestoreToNewOpts is a create that starts from a restore point.
type RestoreToNewOpts struct {
	CreateInstanceOpts
	From RestorePoint
}
