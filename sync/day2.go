package sync

import (
	"context"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// operate makes at most one day-2 change to a running instance: resize, storage growth, backup
// policy, restart, restore, minor upgrade, single to HA, tags.
func (c *call) operate(ctx context.Context, inst *cloud.Instance) (stop bool, err error) {
	return false, nil
}
