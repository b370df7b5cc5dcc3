package otcsim

import (
	"net/http"
	"slices"
	"strings"
	"time"
)

// MaxReadReplicas is how many read replicas one primary may have: "A maximum of five read
// replicas can be created for each RDS for MySQL or RDS for PostgreSQL DB instance"
// (DOC:rds/usermanual/read_write_splitting).
const MaxReadReplicas = 5

// errReplicaLimit answers a create beyond MaxReadReplicas.
//
// NOTE: OTC documents the limit, not the code it answers with; the simulator answers a
// parameter error, which the adapter reports as an invalid request.
func errReplicaLimit(id string) *apiError {
	return errorf(http.StatusBadRequest, "DBS.200001", "Parameter error: the DB instance %s has %d read replicas already, the most it may have.", id, MaxReadReplicas)
}

// createReplica validates a read replica's create request (the SDK's CreateReplicaOpts), with the
// create's own checks of the name, the flavor, the placement and a name taken (newInstance), and
// starts building it. A read replica is an instance of type Replica with one readreplica node, its
// primary's engine, version, network and port, a .rr flavor, and no backups. OTC lists it among
// its primary's related instances (type replica) and its primary among its own (replica_of).
//
// NOTE: the primary must be ACTIVE with no operation in flight, and while a replica is being
// built the primary takes no change (checkIdle): OTC copies the primary's data into the new
// replica ("DB instances cannot be deleted when operations are being performed on them",
// DOC:rds/usermanual/deleting_a_db_instance_or_read_replica).
func (s *Sim) createReplica(req *createRequest, now time.Time) (*instance, *job, *apiError) {
	if req.Name == "" || req.FlavorRef == "" || req.Volume == nil || req.AvailabilityZone == "" {
		return nil, nil, errParam("name, replica_of_id, flavor_ref, volume and availability_zone are required")
	}
	if err := checkInstanceName(req.Name); err != nil {
		return nil, nil, err
	}
	if req.Region != "" && req.Region != Region {
		return nil, nil, errParam("region %q does not exist", req.Region)
	}
	primary := s.instances[req.ReplicaOfID]
	if primary == nil {
		return nil, nil, errorf(http.StatusNotFound, "DBS.200013", "The source DB instance %s does not exist.", req.ReplicaOfID)
	}
	switch {
	case primary.typ == TypeReplica:
		return nil, nil, errParam("a read replica cannot have read replicas")
	case primary.engine.short == "mssql":
		return nil, nil, errorf(http.StatusBadRequest, "DBS.200040", "Read replicas are not supported for %s %s.", primary.engine.name, primary.version)
	}
	if err := primary.checkIdle(); err != nil {
		return nil, nil, err
	}
	if len(primary.replicas) >= MaxReadReplicas {
		return nil, nil, errReplicaLimit(primary.id)
	}
	f := offeredFlavor(req.FlavorRef, primary.engine, primary.version, modeReplica)
	if f == nil {
		return nil, nil, errorf(http.StatusBadRequest, "DBS.200053",
			"The specifications %s do not exist for %s %s read replicas.", req.FlavorRef, primary.engine.name, primary.version)
	}
	az := strings.TrimSpace(req.AvailabilityZone)
	size := req.Volume.Size.Value
	if !req.Volume.Size.Set || size == 0 {
		size = primary.volumeSize
	}
	if err := checkPlacement(f, []string{az}, req.Volume.Type, size); err != nil {
		return nil, nil, err
	}
	if err := s.checkNameFree(req.Name); err != nil {
		return nil, nil, err
	}
	in := &instance{
		seq: s.nextSeq(), id: s.randHex(32) + "in01", name: req.Name, engine: primary.engine, version: primary.version,
		completeVersion: primary.completeVersion, typ: TypeReplica, flavor: f, volumeType: req.Volume.Type,
		volumeSize: size, azs: []string{az}, vpcID: primary.vpcID, subnetID: primary.subnetID,
		secGroupID: primary.secGroupID, port: primary.port, backupStart: primary.backupStart,
		backupPeriod: primary.backupPeriod, diskEncryption: req.DiskEncryptionID, timeZone: primary.timeZone,
		tags: []tag{}, configValues: map[string]string{}, status: StatusBuild, ordered: now, replicaOf: primary,
	}
	if sn := s.findSubnet(in.subnetID); sn != nil {
		in.privateIP = sn.allocateIP()
	}
	in.endpointHost, in.endpointPort = s.endpointFor(in.name, in.engine.name)
	in.nodes = []*node{{id: s.randHex(32) + "no01", name: in.name + "_node0", role: "readreplica", az: az}}
	s.instances[in.id] = in
	primary.replicas = append(primary.replicas, in)
	j := s.newJob("Create"+primary.engine.jobName+"ReadReplica", in, now, s.opts.Durations.Create)
	s.startBuild(in, j, now, s.opts.Durations.Create, nil) // backupKeepDays 0: no automated backup
	return in, j, nil
}

// replicaBuilding reports whether a read replica of in is being built: OTC copies the primary's
// data into it, and the primary takes no change meanwhile.
func (in *instance) replicaBuilding() bool {
	return slices.ContainsFunc(in.replicas, func(r *instance) bool { return r.op != nil && r.op.kind == opKindCreate })
}

// replicasFollow stops or starts a primary's read replicas with it: "If you stop a primary
// instance, read replicas (if there are any) will also be stopped. You cannot stop a read replica
// without stopping the primary instance" (DOC:rds/api_v3/stopping_an_instance).
func (in *instance) replicasFollow(status string) {
	for _, r := range in.replicas {
		if r.op == nil {
			r.status = status
		}
	}
}

// relatedJSON is the instance's related_instance: its primary (replica_of), or its read replicas
// (replica).
func (in *instance) relatedJSON() []map[string]any {
	out := []map[string]any{}
	if in.replicaOf != nil {
		out = append(out, map[string]any{"id": in.replicaOf.id, "type": "replica_of"})
	}
	for _, r := range in.replicas {
		out = append(out, map[string]any{"id": r.id, "type": "replica"})
	}
	return out
}

// forget removes a deleted instance from its primary's replicas, and, OTC's rule, deletes a
// deleted primary's read replicas with it: "If you delete a primary DB instance, its read
// replicas are also deleted automatically" (DOC:rds/usermanual/deleting_a_db_instance_or_read_replica).
func (s *Sim) forget(in *instance) {
	if p := in.replicaOf; p != nil {
		p.replicas = slices.DeleteFunc(p.replicas, func(r *instance) bool { return r == in })
	}
	for _, r := range in.replicas {
		delete(s.instances, r.id)
	}
	in.replicas = nil
}
