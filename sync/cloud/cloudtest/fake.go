// Package cloudtest has a cloud.Cloud built from function fields, for table tests of the decision
// logic. A method whose field is nil fails the test's expectations loudly: it returns an error of
// kind Unknown naming the method, so a case that calls something it did not expect shows it.
package cloudtest

import (
	"context"
	"fmt"
	"sync"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// Fake implements cloud.Cloud with function fields and records the methods called.
type Fake struct {
	RegionName string

	GetInstanceFn         func(ctx context.Context, id string) (*cloud.Instance, error)
	FindInstancesByNameFn func(ctx context.Context, name string) ([]*cloud.Instance, error)
	// FindInstanceByNameFn is a shorthand for FindInstancesByNameFn where a name finds at most one
	// instance: an error of kind NotFound is no instance.
	FindInstanceByNameFn func(ctx context.Context, name string) (*cloud.Instance, error)
	CreateInstanceFn     func(ctx context.Context, opts cloud.CreateInstanceOpts) (string, string, error)
	DeleteInstanceFn     func(ctx context.Context, id string) (string, error)
	GetJobFn             func(ctx context.Context, id string) (*cloud.Job, error)
	ResolveNetworkFn     func(ctx context.Context, vpc, subnet, sg string) (cloud.Network, error)
	ListBackupsFn        func(ctx context.Context, instanceID string) ([]cloud.Backup, error)
	CreateBackupFn       func(ctx context.Context, instanceID, name, description string) (*cloud.Backup, error)
	ListFlavorsFn        func(ctx context.Context, engine, version string) ([]cloud.Flavor, error)
	// ListInstancesFn answers Listing's ListInstances.
	ListInstancesFn func(ctx context.Context) ([]cloud.Instance, error)
	RestoreFns      // fake_restore.go

	Day2 // fake_day2.go

	SecurityFns // fake_security.go
	SettingsFns // fake_settings.go

	LogsFns // fake_logs.go

	ReplicaFns    // fake_replicas.go
	ParametersFns // fake_parameters.go

	calls []string
}

// mu guards every Fake's call log. It is not a field so that test tables can hold Fakes by value.
var mu sync.Mutex

var (
	_ cloud.Cloud          = (*Fake)(nil)
	_ cloud.InstanceLister = Listing{}
)

// Calls returns the names of the methods called, in order.
func (f *Fake) Calls() []string {
	mu.Lock()
	defer mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *Fake) record(name string) {
	mu.Lock()
	defer mu.Unlock()
	f.calls = append(f.calls, name)
}

func unexpected(name string) error {
	return &cloud.Error{Kind: cloud.KindUnknown, Op: name, Message: fmt.Sprintf("unexpected call to %s", name)}
}

// Region implements cloud.Cloud.
func (f *Fake) Region() string {
	if f.RegionName == "" {
		return "eu-de"
	}
	return f.RegionName
}

// GetInstance implements cloud.Cloud.
func (f *Fake) GetInstance(ctx context.Context, id string) (*cloud.Instance, error) {
	f.record("GetInstance")
	if f.GetInstanceFn == nil {
		return nil, unexpected("GetInstance")
	}
	return f.GetInstanceFn(ctx, id)
}

// FindInstancesByName implements cloud.Cloud.
func (f *Fake) FindInstancesByName(ctx context.Context, name string) ([]*cloud.Instance, error) {
	f.record("FindInstancesByName")
	switch {
	case f.FindInstancesByNameFn != nil:
		return f.FindInstancesByNameFn(ctx, name)
	case f.FindInstanceByNameFn != nil:
		in, err := f.FindInstanceByNameFn(ctx, name)
		if cloud.KindOf(err) == cloud.KindNotFound {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return []*cloud.Instance{in}, nil
	}
	return nil, unexpected("FindInstancesByName")
}

// Listing is a Fake that also lists every instance of its project (cloud.InstanceLister), as OTC's
// client and the shared view do; a Fake alone does not, so that view.Wrap leaves it unwrapped.
type Listing struct{ *Fake }

// ListInstances implements cloud.InstanceLister with ListInstancesFn.
func (l Listing) ListInstances(ctx context.Context) ([]cloud.Instance, error) {
	l.record("ListInstances")
	if l.ListInstancesFn == nil {
		return nil, unexpected("ListInstances")
	}
	return l.ListInstancesFn(ctx)
}

// CreateInstance implements cloud.Cloud.
func (f *Fake) CreateInstance(ctx context.Context, opts cloud.CreateInstanceOpts) (string, string, error) {
	f.record("CreateInstance")
	if f.CreateInstanceFn == nil {
		return "", "", unexpected("CreateInstance")
	}
	return f.CreateInstanceFn(ctx, opts)
}

// DeleteInstance implements cloud.Cloud.
func (f *Fake) DeleteInstance(ctx context.Context, id string) (string, error) {
	f.record("DeleteInstance")
	if f.DeleteInstanceFn == nil {
		return "", unexpected("DeleteInstance")
	}
	return f.DeleteInstanceFn(ctx, id)
}

// GetJob implements cloud.Cloud.
func (f *Fake) GetJob(ctx context.Context, id string) (*cloud.Job, error) {
	f.record("GetJob")
	if f.GetJobFn == nil {
		return nil, unexpected("GetJob")
	}
	return f.GetJobFn(ctx, id)
}

// ResolveNetwork implements cloud.Cloud.
func (f *Fake) ResolveNetwork(ctx context.Context, vpc, subnet, sg string) (cloud.Network, error) {
	f.record("ResolveNetwork")
	if f.ResolveNetworkFn == nil {
		return cloud.Network{}, unexpected("ResolveNetwork")
	}
	return f.ResolveNetworkFn(ctx, vpc, subnet, sg)
}

// ListBackups implements cloud.Cloud.
func (f *Fake) ListBackups(ctx context.Context, instanceID string) ([]cloud.Backup, error) {
	f.record("ListBackups")
	if f.ListBackupsFn == nil {
		return nil, unexpected("ListBackups")
	}
	return f.ListBackupsFn(ctx, instanceID)
}

// CreateBackup implements cloud.Cloud.
func (f *Fake) CreateBackup(ctx context.Context, instanceID, name, description string) (*cloud.Backup, error) {
	f.record("CreateBackup")
	if f.CreateBackupFn == nil {
		return nil, unexpected("CreateBackup")
	}
	return f.CreateBackupFn(ctx, instanceID, name, description)
}

// ListFlavors implements cloud.Cloud.
func (f *Fake) ListFlavors(ctx context.Context, engine, version string) ([]cloud.Flavor, error) {
	f.record("ListFlavors")
	if f.ListFlavorsFn == nil {
		return nil, unexpected("ListFlavors")
	}
	return f.ListFlavorsFn(ctx, engine, version)
}
