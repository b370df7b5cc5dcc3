package cloudtest

import (
	"context"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// Day2 holds the function fields of cloud.Operations. It is embedded in Fake.
type Day2 struct {
	ResizeFlavorFn        func(ctx context.Context, id, flavor string) (string, error)
	EnlargeVolumeFn       func(ctx context.Context, id string, sizeGB int) (string, error)
	RestartInstanceFn     func(ctx context.Context, id string) (string, error)
	UpgradeMinorVersionFn func(ctx context.Context, id string) (string, error)
	SingleToHAFn          func(ctx context.Context, id, standbyAZ string, password secret.Value) (string, error)
	UpdateBackupPolicyFn  func(ctx context.Context, id string, policy cloud.BackupStrategy) error
	SetTagsFn             func(ctx context.Context, id string, tags map[string]string) error
	DeleteTagsFn          func(ctx context.Context, id string, keys []string) error
}

// ResizeFlavor implements cloud.Operations.
func (f *Fake) ResizeFlavor(ctx context.Context, id, flavor string) (string, error) {
	f.record("ResizeFlavor")
	if f.ResizeFlavorFn == nil {
		return "", unexpected("ResizeFlavor")
	}
	return f.ResizeFlavorFn(ctx, id, flavor)
}

// EnlargeVolume implements cloud.Operations.
func (f *Fake) EnlargeVolume(ctx context.Context, id string, sizeGB int) (string, error) {
	f.record("EnlargeVolume")
	if f.EnlargeVolumeFn == nil {
		return "", unexpected("EnlargeVolume")
	}
	return f.EnlargeVolumeFn(ctx, id, sizeGB)
}

// RestartInstance implements cloud.Operations.
func (f *Fake) RestartInstance(ctx context.Context, id string) (string, error) {
	f.record("RestartInstance")
	if f.RestartInstanceFn == nil {
		return "", unexpected("RestartInstance")
	}
	return f.RestartInstanceFn(ctx, id)
}

// UpgradeMinorVersion implements cloud.Operations.
func (f *Fake) UpgradeMinorVersion(ctx context.Context, id string) (string, error) {
	f.record("UpgradeMinorVersion")
	if f.UpgradeMinorVersionFn == nil {
		return "", unexpected("UpgradeMinorVersion")
	}
	return f.UpgradeMinorVersionFn(ctx, id)
}

// SingleToHA implements cloud.Operations.
func (f *Fake) SingleToHA(ctx context.Context, id, standbyAZ string, password secret.Value) (string, error) {
	f.record("SingleToHA")
	if f.SingleToHAFn == nil {
		return "", unexpected("SingleToHA")
	}
	return f.SingleToHAFn(ctx, id, standbyAZ, password)
}

// UpdateBackupPolicy implements cloud.Operations.
func (f *Fake) UpdateBackupPolicy(ctx context.Context, id string, policy cloud.BackupStrategy) error {
	f.record("UpdateBackupPolicy")
	if f.UpdateBackupPolicyFn == nil {
		return unexpected("UpdateBackupPolicy")
	}
	return f.UpdateBackupPolicyFn(ctx, id, policy)
}

// SetTags implements cloud.Operations.
func (f *Fake) SetTags(ctx context.Context, id string, tags map[string]string) error {
	f.record("SetTags")
	if f.SetTagsFn == nil {
		return unexpected("SetTags")
	}
	return f.SetTagsFn(ctx, id, tags)
}

// DeleteTags implements cloud.Operations.
func (f *Fake) DeleteTags(ctx context.Context, id string, keys []string) error {
	f.record("DeleteTags")
	if f.DeleteTagsFn == nil {
		return unexpected("DeleteTags")
	}
	return f.DeleteTagsFn(ctx, id, keys)
}
