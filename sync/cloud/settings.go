package cloud

import "context"

// Settings are the changes to a running instance's settings beside Operations: the storage
// type, the replication mode between primary and standby, the maintenance window, stop and
// start; and the read of the backup policy, whose days of the week the instance list does not
// report. The long ones return OTC's job id and never wait for it.
type Settings interface {
	// ChangeStorageType moves the instance's storage to another type (Storage says which).
	ChangeStorageType(ctx context.Context, id string, to Storage) (jobID string, err error)
	// ChangeReplicationMode sets the replication between primary and standby (async, semisync,
	// sync). OTC answers a workflow id.
	ChangeReplicationMode(ctx context.Context, id, mode string) (jobID string, err error)
	// ChangeMaintenanceWindow sets the maintenance window, hh:mm-HH:MM in UTC.
	ChangeMaintenanceWindow(ctx context.Context, id, window string) error
	// StopInstance stops the instance; StartInstance starts a stopped one.
	StopInstance(ctx context.Context, id string) (jobID string, err error)
	StartInstance(ctx context.Context, id string) (jobID string, err error)
	// GetBackupPolicy reads the automated backup policy, its days of the week (Period) included.
	GetBackupPolicy(ctx context.Context, id string) (BackupStrategy, error)
}

// Storage names a storage type of an instance: OTC's storage type change takes a code made of
// the engine, the type and the instance's class (single, primary/standby or read replica).
type Storage struct {
	Engine       string // MySQL, PostgreSQL or SQLServer
	InstanceType string // Single, Ha or Replica
	VolumeType   string // CLOUDSSD or ESSD
}
