package sync

import (
	"context"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// logs returns the log Job and its short-lived credentials while a log request is open.
func (c *call) logs(ctx context.Context, inst *cloud.Instance) (stop bool, err error) {
	return false, nil
}
