package cloudtest

import (
	"context"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// ReplicaFns are the Fake's function fields for cloud.Replicas.
type ReplicaFns struct {
	CreateReplicaFn func(ctx context.Context, opts cloud.CreateReplicaOpts) (string, string, error)
}

// CreateReplica implements cloud.Replicas.
func (f *Fake) CreateReplica(ctx context.Context, opts cloud.CreateReplicaOpts) (string, string, error) {
	f.record("CreateReplica")
	if f.CreateReplicaFn == nil {
		return "", "", unexpected("CreateReplica")
	}
	return f.CreateReplicaFn(ctx, opts)
}
