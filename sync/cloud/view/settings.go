package view

import (
	"context"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// The mutating calls of cloud.Settings: each marks its instance as changed by this process.

func (v *View) ChangeStorageType(ctx context.Context, id string, to cloud.Storage) (string, error) {
	defer v.touch(id)
	return v.Client.ChangeStorageType(ctx, id, to)
}

func (v *View) ChangeReplicationMode(ctx context.Context, id, mode string) (string, error) {
	defer v.touch(id)
	return v.Client.ChangeReplicationMode(ctx, id, mode)
}

func (v *View) ChangeMaintenanceWindow(ctx context.Context, id, window string) error {
	defer v.touch(id)
	return v.Client.ChangeMaintenanceWindow(ctx, id, window)
}

func (v *View) StopInstance(ctx context.Context, id string) (string, error) {
	defer v.touch(id)
	return v.Client.StopInstance(ctx, id)
}

func (v *View) StartInstance(ctx context.Context, id string) (string, error) {
	defer v.touch(id)
	return v.Client.StartInstance(ctx, id)
}
