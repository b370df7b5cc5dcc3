package cloud

import (
	"context"

	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// Operations are the day-2 changes to a running instance: resize, storage growth, backup policy,
// restart, minor upgrade, single to HA, tags. The long ones return OTC's job id and never wait for
// it; the instance's status shows the change while it runs.
type Operations interface {
	// ResizeFlavor changes the instance's spec code (within its single or HA class).
	ResizeFlavor(ctx context.Context, id, flavor string) (jobID string, err error)
	// EnlargeVolume grows the storage to sizeGB, the new total.
	EnlargeVolume(ctx context.Context, id string, sizeGB int) (jobID string, err error)
	// RestartInstance restarts the instance.
	RestartInstance(ctx context.Context, id string) (jobID string, err error)
	// UpgradeMinorVersion moves the instance to the newest minor version of its major version.
	UpgradeMinorVersion(ctx context.Context, id string) (jobID string, err error)
	// SingleToHA adds a standby node in standbyAZ. The root password is needed for SQL Server only.
	SingleToHA(ctx context.Context, id, standbyAZ string, password secret.Value) (jobID string, err error)
	// UpdateBackupPolicy sets the automated backup window and retention; the days of the week
	// are kept as they are.
	UpdateBackupPolicy(ctx context.Context, id string, policy BackupStrategy) error
	// SetTags creates the tags, or updates their values.
	SetTags(ctx context.Context, id string, tags map[string]string) error
	// DeleteTags removes the tags with these keys.
	DeleteTags(ctx context.Context, id string, keys []string) error
}
