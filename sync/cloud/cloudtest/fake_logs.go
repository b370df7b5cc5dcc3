package cloudtest

import (
	"context"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// LogsFns are the function fields of cloud.Logs; Fake embeds them.
type LogsFns struct {
	ListErrorLogsFn func(ctx context.Context, instanceID string, q cloud.LogQuery) ([]cloud.ErrorLogEntry, int, error)
	ListSlowLogsFn  func(ctx context.Context, instanceID string, q cloud.LogQuery) ([]cloud.SlowLogEntry, int, error)
}

// ListErrorLogs implements cloud.Cloud.
func (f *Fake) ListErrorLogs(ctx context.Context, instanceID string, q cloud.LogQuery) ([]cloud.ErrorLogEntry, int, error) {
	f.record("ListErrorLogs")
	if f.ListErrorLogsFn == nil {
		return nil, 0, unexpected("ListErrorLogs")
	}
	return f.ListErrorLogsFn(ctx, instanceID, q)
}

// ListSlowLogs implements cloud.Cloud.
func (f *Fake) ListSlowLogs(ctx context.Context, instanceID string, q cloud.LogQuery) ([]cloud.SlowLogEntry, int, error) {
	f.record("ListSlowLogs")
	if f.ListSlowLogsFn == nil {
		return nil, 0, unexpected("ListSlowLogs")
	}
	return f.ListSlowLogsFn(ctx, instanceID, q)
}
