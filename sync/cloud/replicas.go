package cloud

import "context"

// Instance types as OTC's listing reports them (Instance.Type).
const (
	TypeSingle  = "Single"
	TypeHa      = "Ha"
	TypeReplica = "Replica"
)

// CreateReplicaOpts is what CreateReplica needs: a read replica of the instance Of, in one AZ.
type CreateReplicaOpts struct {
	Name             string
	Of               string // the primary's id
	Flavor           string // a read replica spec code (.rr)
	VolumeType       string
	VolumeSize       int
	Region           string
	AvailabilityZone string
}

// Replicas is what read replicas need beyond Core: a replica is an instance (OTC lists it, with
// Type Replica and ReplicaOf), resized, enlarged, tagged and deleted as any other.
type Replicas interface {
	// CreateReplica issues the creation of a read replica and returns its id and the job's id.
	CreateReplica(ctx context.Context, opts CreateReplicaOpts) (id, jobID string, err error)
}
