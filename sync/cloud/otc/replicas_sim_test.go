package otc_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// TestSimCreateReplica: the adapter's CreateReplica through the SDK, and OTC's related instances
// read back into Instance.ReplicaOf and Instance.Replicas; OTC's refusals sorted into kinds.
func TestSimCreateReplica(t *testing.T) {
	e := newSimEnv(t)
	primary := e.addActive(t, nil)
	opts := cloud.CreateReplicaOpts{Name: "rds-day2-rr", Of: primary, Flavor: "rds.mysql.n1.large.2.rr",
		VolumeType: "CLOUDSSD", VolumeSize: 40, AvailabilityZone: "eu-de-02"}
	id, job, err := e.c.CreateReplica(ctxT(t), opts)
	require.NoError(t, err)
	assert.NotEmpty(t, job)
	assert.Equal(t, 1, e.sim.Calls(otcsim.OpCreateReplica))

	rr, err := e.c.GetInstance(ctxT(t), id)
	require.NoError(t, err)
	assert.Equal(t, cloud.TypeReplica, rr.Type)
	assert.Equal(t, primary, rr.ReplicaOf)
	assert.Empty(t, rr.Replicas)
	p, err := e.c.GetInstance(ctxT(t), primary)
	require.NoError(t, err)
	assert.Equal(t, []string{id}, p.Replicas)
	assert.Empty(t, p.ReplicaOf)

	_, _, err = e.c.CreateReplica(ctxT(t), opts)
	assert.Equal(t, cloud.KindBusy, cloud.KindOf(err), "no second replica while one is built")
	e.clock.Advance(otcsim.DefaultDurations().Create)
	opts.Flavor = "rds.mysql.n1.large.2"
	_, _, err = e.c.CreateReplica(ctxT(t), opts)
	assert.Equal(t, cloud.KindInvalid, cloud.KindOf(err), "not a replica flavor")
	opts.Of = ""
	_, _, err = e.c.CreateReplica(ctxT(t), opts)
	assert.Equal(t, cloud.KindInvalid, cloud.KindOf(err), "no primary: never sent")
}
