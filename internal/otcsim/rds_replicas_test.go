package otcsim

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/backups"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/instances"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func replicaOpts(name, of string) instances.CreateReplicaOpts {
	return instances.CreateReplicaOpts{
		Name: name, ReplicaOfId: of, FlavorRef: "rds.mysql.c2.medium.rr",
		Volume: &instances.Volume{Type: "COMMON"}, Region: "eu-de", AvailabilityZone: "eu-de-02",
	}
}

// TestReadReplicas walks a read replica through the real SDK: created of an ACTIVE primary, a
// Replica linked both ways in related_instance, with the primary's volume, the primary busy
// while it is built, resized within the .rr flavors, no backups, and deleted with its primary.
func TestReadReplicas(t *testing.T) {
	e := newEnv(t, Options{})
	primary := e.createActive(t, createOpts("rr-primary"))

	res, err := instances.CreateReplica(e.rds, replicaOpts("rr-one", primary))
	require.NoError(t, err)
	rr := res.Instance.Id
	require.NotEmpty(t, rr)
	assert.Equal(t, 1, e.sim.Calls(OpCreateReplica))
	assert.Equal(t, 1, e.sim.Calls(OpCreateInstance), "a replica is counted under its own operation, not as a create")

	got := e.getInstance(t, rr)
	assert.Equal(t, TypeReplica, got.Type)
	assert.Equal(t, StatusBuild, got.Status)
	assert.Equal(t, []instances.RelatedInstance{{Id: primary, Type: "replica_of"}}, got.RelatedInstance)
	assert.Equal(t, 40, got.Volume.Size, "the primary's volume when none is given")
	assert.Equal(t, "readreplica", got.Nodes[0].Role)
	assert.Equal(t, []instances.RelatedInstance{{Id: rr, Type: "replica"}}, e.getInstance(t, primary).RelatedInstance)

	// While the replica is built, the primary takes no change.
	_, err = instances.Resize(e.rds, instances.ResizeOpts{InstanceId: primary, SpecCode: "rds.mysql.c2.large"})
	status, code := rdsErrorCode(t, err)
	assert.Equal(t, http.StatusConflict, status)
	assert.Equal(t, "DBS.200019", code)
	_, err = instances.Delete(e.rds, primary)
	_, code = rdsErrorCode(t, err)
	assert.Equal(t, "DBS.200019", code, "nor its delete")

	e.clock.Advance(e.sim.Options().Durations.Create)
	assert.Equal(t, StatusActive, e.getInstance(t, rr).Status)

	_, err = instances.Resize(e.rds, instances.ResizeOpts{InstanceId: rr, SpecCode: "rds.mysql.c2.large"})
	_, code = rdsErrorCode(t, err)
	assert.Equal(t, "DBS.200053", code, "a replica is resized to .rr flavors only")
	_, err = instances.Resize(e.rds, instances.ResizeOpts{InstanceId: rr, SpecCode: "rds.mysql.c2.large.rr"})
	require.NoError(t, err)
	e.clock.Advance(e.sim.Options().Durations.Resize)
	assert.Equal(t, "rds.mysql.c2.large.rr", e.getInstance(t, rr).FlavorRef)
	_, err = instances.EnlargeVolume(e.rds, instances.EnlargeVolumeRdsOpts{InstanceId: rr, Size: 60})
	require.NoError(t, err)
	e.clock.Advance(e.sim.Options().Durations.Enlarge)
	assert.Equal(t, 60, e.getInstance(t, rr).Volume.Size)

	_, err = backups.Create(e.rds, backups.CreateOpts{InstanceID: rr, Name: "rr-backup"})
	_, code = rdsErrorCode(t, err)
	assert.Equal(t, "DBS.201014", code, "a replica has no backups")

	_, err = instances.Delete(e.rds, primary)
	require.NoError(t, err)
	e.clock.Advance(e.sim.Options().Durations.Delete)
	all, err := instances.List(e.rds, instances.ListOpts{})
	require.NoError(t, err)
	assert.Empty(t, all.Instances, "deleting a primary deletes its read replicas")
}

// TestReadReplicaRules checks what OTC refuses: a replica of a replica, of a busy primary, beyond
// five per primary, on a single or HA flavor, with storage out of range, and a replica
// deleted alone leaves its primary's related instances.
func TestReadReplicaRules(t *testing.T) {
	e := newEnv(t, Options{})
	primary := e.createActive(t, createOpts("rr-rules"))

	bad := replicaOpts("rr-bad", primary)
	bad.FlavorRef = "rds.mysql.c2.medium"
	_, err := instances.CreateReplica(e.rds, bad)
	_, code := rdsErrorCode(t, err)
	assert.Equal(t, "DBS.200053", code)
	bad = replicaOpts("rr-bad", primary)
	bad.Volume.Size = 30
	_, err = instances.CreateReplica(e.rds, bad)
	_, code = rdsErrorCode(t, err)
	assert.Equal(t, "DBS.200023", code, "40 to 4000 GB, as any instance")
	_, err = instances.CreateReplica(e.rds, replicaOpts("rr-none", "0123456789abcdef0123456789abcdefin01"))
	status, _ := rdsErrorCode(t, err)
	assert.Equal(t, http.StatusNotFound, status)

	var ids []string
	for i := range MaxReadReplicas {
		res, err := instances.CreateReplica(e.rds, replicaOpts(fmt.Sprintf("rr-n%d", i), primary))
		require.NoError(t, err)
		ids = append(ids, res.Instance.Id)
		_, err = instances.CreateReplica(e.rds, replicaOpts("rr-busy", primary))
		_, code = rdsErrorCode(t, err)
		require.Equal(t, "DBS.200019", code, "no second replica while one is built")
		e.clock.Advance(e.sim.Options().Durations.Create)
	}
	_, err = instances.CreateReplica(e.rds, replicaOpts("rr-six", primary))
	_, code = rdsErrorCode(t, err)
	assert.Equal(t, "DBS.200001", code, "at most five replicas")
	_, err = instances.CreateReplica(e.rds, replicaOpts("rr-of-rr", ids[0]))
	_, code = rdsErrorCode(t, err)
	assert.Equal(t, "DBS.200001", code, "no replica of a replica")

	_, err = instances.Delete(e.rds, ids[0])
	require.NoError(t, err)
	e.clock.Advance(e.sim.Options().Durations.Delete)
	assert.Len(t, e.getInstance(t, primary).RelatedInstance, MaxReadReplicas-1)
}

// TestReadReplicaCreateChecksAreTheCreates: a read replica's create is refused as an instance's
// create is, with the same code, for its name, its AZ, its flavor not sold there, its storage type
// and size, the storage not offered there, and (UniqueNames) a name taken: the checks they share.
func TestReadReplicaCreateChecksAreTheCreates(t *testing.T) {
	e := newEnv(t, Options{UniqueNames: true})
	primary := e.createActive(t, createOpts("rr-checks"))
	for _, tc := range []struct {
		reason   string
		create   func(*instances.CreateRdsOpts)
		replica  func(*instances.CreateReplicaOpts)
		status   int
		wantCode string
	}{
		{reason: "a name OTC does not take",
			create: func(o *instances.CreateRdsOpts) { o.Name = "1st" }, replica: func(o *instances.CreateReplicaOpts) { o.Name = "1st" },
			status: http.StatusBadRequest, wantCode: "DBS.200021"},
		{reason: "an AZ the region does not have",
			create:  func(o *instances.CreateRdsOpts) { o.AvailabilityZone = "eu-de-09" },
			replica: func(o *instances.CreateReplicaOpts) { o.AvailabilityZone = "eu-de-09" },
			status:  http.StatusBadRequest, wantCode: "DBS.200025"},
		{reason: "a flavor not offered in the AZ",
			create: func(o *instances.CreateRdsOpts) { o.FlavorRef, o.AvailabilityZone = "rds.mysql.c2.xlarge", "eu-de-03" },
			replica: func(o *instances.CreateReplicaOpts) {
				o.FlavorRef, o.AvailabilityZone = "rds.mysql.c2.xlarge.rr", "eu-de-03"
			},
			status: http.StatusBadRequest, wantCode: "DBS.200053"},
		{reason: "a storage type OTC does not have",
			create: func(o *instances.CreateRdsOpts) { o.Volume.Type = "FLOPPY" }, replica: func(o *instances.CreateReplicaOpts) { o.Volume.Type = "FLOPPY" },
			status: http.StatusBadRequest, wantCode: "DBS.200026"},
		{reason: "a size not a multiple of 10",
			create: func(o *instances.CreateRdsOpts) { o.Volume.Size = 45 }, replica: func(o *instances.CreateReplicaOpts) { o.Volume.Size = 45 },
			status: http.StatusBadRequest, wantCode: "DBS.200027"},
		{reason: "a storage type not offered in the AZ",
			create:  func(o *instances.CreateRdsOpts) { o.Volume.Type, o.AvailabilityZone = "ESSD", "eu-de-03" },
			replica: func(o *instances.CreateReplicaOpts) { o.Volume.Type, o.AvailabilityZone = "ESSD", "eu-de-03" },
			status:  http.StatusBadRequest, wantCode: "DBS.200026"},
		{reason: "a name an instance has (UniqueNames)",
			create: func(o *instances.CreateRdsOpts) { o.Name = "rr-checks" }, replica: func(o *instances.CreateReplicaOpts) { o.Name = "rr-checks" },
			status: http.StatusConflict, wantCode: "DBS.200022"},
	} {
		c := createOpts("rr-checks-create")
		tc.create(&c)
		_, err := instances.Create(e.rds, c)
		status, code := rdsErrorCode(t, err)
		assert.Equal(t, tc.status, status, "create: %s", tc.reason)
		assert.Equal(t, tc.wantCode, code, "create: %s", tc.reason)

		r := replicaOpts("rr-checks-replica", primary)
		tc.replica(&r)
		_, err = instances.CreateReplica(e.rds, r)
		status, code = rdsErrorCode(t, err)
		assert.Equal(t, tc.status, status, "replica: %s", tc.reason)
		assert.Equal(t, tc.wantCode, code, "replica: %s", tc.reason)
	}
	assert.Empty(t, e.getInstance(t, primary).RelatedInstance, "no replica was made")
}

// TestReadReplicasStopWithTheirPrimary: a replica is stopped and started with its primary, never
// alone.
func TestReadReplicasStopWithTheirPrimary(t *testing.T) {
	e := newEnv(t, Options{})
	primary := e.createActive(t, createOpts("rr-stop"))
	res, err := instances.CreateReplica(e.rds, replicaOpts("rr-stop-1", primary))
	require.NoError(t, err)
	rr := res.Instance.Id
	_, err = instances.StopInstance(e.rds, primary)
	_, code := rdsErrorCode(t, err)
	assert.Equal(t, "DBS.200019", code, "not while a replica is built")
	e.clock.Advance(e.sim.Options().Durations.Create)

	_, err = instances.StopInstance(e.rds, rr)
	status, _ := rdsErrorCode(t, err)
	assert.Equal(t, http.StatusBadRequest, status, "a replica is not stopped alone")
	_, err = instances.StopInstance(e.rds, primary)
	require.NoError(t, err)
	e.clock.Advance(e.sim.Options().Durations.Restart)
	assert.Equal(t, StatusShutdown, e.getInstance(t, rr).Status, "stopped with its primary")
	_, err = instances.StartupInstance(e.rds, primary)
	require.NoError(t, err)
	e.clock.Advance(e.sim.Options().Durations.Restart)
	assert.Equal(t, StatusActive, e.getInstance(t, rr).Status, "and started with it")
}
