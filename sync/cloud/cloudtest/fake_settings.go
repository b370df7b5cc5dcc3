package cloudtest

import (
	"context"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// SettingsFns holds the function fields of cloud.Settings. It is embedded in Fake.
type SettingsFns struct {
	ChangeStorageTypeFn       func(ctx context.Context, id string, to cloud.Storage) (string, error)
	ChangeReplicationModeFn   func(ctx context.Context, id, mode string) (string, error)
	ChangeMaintenanceWindowFn func(ctx context.Context, id, window string) error
	StopInstanceFn            func(ctx context.Context, id string) (string, error)
	StartInstanceFn           func(ctx context.Context, id string) (string, error)
	GetBackupPolicyFn         func(ctx context.Context, id string) (cloud.BackupStrategy, error)
}

// ChangeStorageType implements cloud.Settings.
func (f *Fake) ChangeStorageType(ctx context.Context, id string, to cloud.Storage) (string, error) {
	f.record("ChangeStorageType")
	if f.ChangeStorageTypeFn == nil {
		return "", unexpected("ChangeStorageType")
	}
	return f.ChangeStorageTypeFn(ctx, id, to)
}

// ChangeReplicationMode implements cloud.Settings.
func (f *Fake) ChangeReplicationMode(ctx context.Context, id, mode string) (string, error) {
	f.record("ChangeReplicationMode")
	if f.ChangeReplicationModeFn == nil {
		return "", unexpected("ChangeReplicationMode")
	}
	return f.ChangeReplicationModeFn(ctx, id, mode)
}

// ChangeMaintenanceWindow implements cloud.Settings.
func (f *Fake) ChangeMaintenanceWindow(ctx context.Context, id, window string) error {
	f.record("ChangeMaintenanceWindow")
	if f.ChangeMaintenanceWindowFn == nil {
		return unexpected("ChangeMaintenanceWindow")
	}
	return f.ChangeMaintenanceWindowFn(ctx, id, window)
}

// StopInstance implements cloud.Settings.
func (f *Fake) StopInstance(ctx context.Context, id string) (string, error) {
	f.record("StopInstance")
	if f.StopInstanceFn == nil {
		return "", unexpected("StopInstance")
	}
	return f.StopInstanceFn(ctx, id)
}

// StartInstance implements cloud.Settings.
func (f *Fake) StartInstance(ctx context.Context, id string) (string, error) {
	f.record("StartInstance")
	if f.StartInstanceFn == nil {
		return "", unexpected("StartInstance")
	}
	return f.StartInstanceFn(ctx, id)
}

// GetBackupPolicy implements cloud.Settings.
func (f *Fake) GetBackupPolicy(ctx context.Context, id string) (cloud.BackupStrategy, error) {
	f.record("GetBackupPolicy")
	if f.GetBackupPolicyFn == nil {
		return cloud.BackupStrategy{}, unexpected("GetBackupPolicy")
	}
	return f.GetBackupPolicyFn(ctx, id)
}
