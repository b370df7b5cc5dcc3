package otc

import (
	"context"

	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/instances"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// Related instance types of OTC's listing (related_instance[].type).
const (
	relatedPrimary = "replica_of" // on a replica: its primary
	relatedReplica = "replica"    // on a primary: one of its read replicas
)

// CreateReplica issues the creation of a read replica of opts.Of and returns the replica's id and
// the job's id. It does not wait for the replica.
//
// NOTE: the SDK's CreateReplicaOpts has no tags, as its create has none: the caller writes the
// ownership tags as the replica's first change, and finds a replica whose answer was lost by its
// name (and its primary's related instances) before it creates another.
func (c *Client) CreateReplica(ctx context.Context, o cloud.CreateReplicaOpts) (id, jobID string, err error) {
	const op = "CreateReplica"
	if err := checkFilter(op, "instance id", o.Of); err != nil {
		return "", "", err
	}
	opts := instances.CreateReplicaOpts{
		Name:             o.Name,
		ReplicaOfId:      o.Of,
		FlavorRef:        o.Flavor,
		Volume:           &instances.Volume{Type: o.VolumeType, Size: o.VolumeSize},
		Region:           firstNonEmpty(o.Region, c.region),
		AvailabilityZone: o.AvailabilityZone,
	}
	type created struct{ id, job string }
	r, err := call(ctx, c, op, func(s services) (created, error) {
		res, err := instances.CreateReplica(s.rds, opts)
		if err != nil {
			return created{}, err
		}
		if res.Instance.Id == "" {
			return created{}, cloud.Errorf(cloud.KindUnknown, op, "", "OTC accepted the replica but returned no instance id")
		}
		return created{res.Instance.Id, res.JobId}, nil
	})
	return r.id, r.job, err
}

// related copies OTC's related instances into the instance: its primary, or its replicas.
func related(out *cloud.Instance, rel []instances.RelatedInstance) {
	for _, r := range rel {
		switch r.Type {
		case relatedPrimary:
			out.ReplicaOf = r.Id
		case relatedReplica:
			out.Replicas = append(out.Replicas, r.Id)
		}
	}
}
