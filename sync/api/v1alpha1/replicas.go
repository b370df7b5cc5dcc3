package v1alpha1

// ReadReplica is one read replica of the instance, as spec.readreplicas declares it. The name is
// the key: it names the replica in OTC (with the object's), so renaming one deletes it and creates
// another.
type ReadReplica struct {
	// Name tells the replica apart from the object's others: 1 to 16 lowercase letters, digits
	// and '-', starting with a letter. Immutable in effect (a new name is a new replica).
	Name string `json:"name"`
	// Flavorref is the replica's OTC spec code, a read replica one (ending in .rr), e.g.
	// rds.mysql.n1.large.2.rr. Changing it resizes the replica.
	Flavorref string `json:"flavorref"`
	// Availabilityzone is the one AZ of the replica. Immutable in effect (OTC cannot move it).
	Availabilityzone string `json:"availabilityzone"`
	// Volumesize is the replica's storage in GB: 40 to 4000, a multiple of 10; it can only grow.
	// Default the primary's volumesize, which it then follows.
	Volumesize int `json:"volumesize,omitempty"`
}

// ReadReplicaStatus is one read replica as the last call observed it.
type ReadReplicaStatus struct {
	// Name is the spec's name of the replica.
	Name string `json:"name"`
	// ID is the replica's OTC instance id.
	ID string `json:"id,omitempty"`
	// InstanceName is the replica's name in OTC.
	InstanceName string `json:"instanceName,omitempty"`
	// Status is the replica's OTC status string, e.g. BUILD or ACTIVE; DELETING while the
	// controller deletes it.
	Status string `json:"status,omitempty"`
	// Flavor is the replica's observed spec code.
	Flavor string `json:"flavor,omitempty"`
	// Volume is the replica's observed storage in GB.
	Volume int `json:"volume,omitempty"`
	// Availabilityzone is the replica's observed AZ.
	Availabilityzone string `json:"availabilityzone,omitempty"`
	// Endpoint is the replica's ip:port, which readers connect to.
	Endpoint string `json:"endpoint,omitempty"`
	// JobID is OTC's job of the replica's delete while Status is DELETING.
	JobID string `json:"jobID,omitempty"`
}

// ReplicaStatus values the controller reports beside OTC's own.
const (
	// ReplicaDeleting: the replica left spec.readreplicas and the controller asked OTC to
	// delete it.
	ReplicaDeleting = "DELETING"
)
