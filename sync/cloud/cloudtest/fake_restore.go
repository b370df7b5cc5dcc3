package cloudtest

import (
	"context"
	"time"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// RestoreFns are the Fake's function fields for cloud.Restores.
type RestoreFns struct {
	ListRestoreTimesFn func(ctx context.Context, instanceID string) ([]cloud.TimeRange, error)
	RestoreInPlaceFn   func(ctx context.Context, instanceID string, at time.Time) (string, error)
	RestoreToNewFn     func(ctx context.Context, opts cloud.RestoreToNewOpts) (string, string, error)
}

// ListRestoreTimes implements cloud.Restores.
func (f *Fake) ListRestoreTimes(ctx context.Context, instanceID string) ([]cloud.TimeRange, error) {
	f.record("ListRestoreTimes")
	if f.ListRestoreTimesFn == nil {
		return nil, unexpected("ListRestoreTimes")
	}
	return f.ListRestoreTimesFn(ctx, instanceID)
}

// RestoreInPlace implements cloud.Restores.
func (f *Fake) RestoreInPlace(ctx context.Context, instanceID string, at time.Time) (string, error) {
	f.record("RestoreInPlace")
	if f.RestoreInPlaceFn == nil {
		return "", unexpected("RestoreInPlace")
	}
	return f.RestoreInPlaceFn(ctx, instanceID, at)
}

// RestoreToNew implements cloud.Restores.
func (f *Fake) RestoreToNew(ctx context.Context, opts cloud.RestoreToNewOpts) (string, string, error) {
	f.record("RestoreToNew")
	if f.RestoreToNewFn == nil {
		return "", "", unexpected("RestoreToNew")
	}
	return f.RestoreToNewFn(ctx, opts)
}
