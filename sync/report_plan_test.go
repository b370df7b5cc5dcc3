package reconcile

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

func TestReported(t *testing.T) {
	inst := activeInstance()
	inst.Nodes = []cloud.Node{
		{Name: "node1", Role: "slave", Status: "ACTIVE", AvailabilityZone: "eu-de-02"},
		{Name: "node0", Role: "master", Status: "ACTIVE", AvailabilityZone: "eu-de-01"},
	}
	st, ready := reported(v1alpha1.RdsStatus{Operation: &v1alpha1.Operation{Type: OpResize, Target: "rds.mysql.c2.medium"}}, inst)
	assert.Equal(t, "inst-1", st.ID)
	assert.Equal(t, "192.168.0.10:3306", st.Endpoint)
	assert.Equal(t, "8.0.28", st.Version)
	assert.Equal(t, []v1alpha1.Node{
		{Name: "node0", Role: "master", Status: "ACTIVE", Availabilityzone: "eu-de-01"},
		{Name: "node1", Role: "slave", Status: "ACTIVE", Availabilityzone: "eu-de-02"},
	}, st.Nodes, "nodes sorted by role and name, whatever OTC's order")
	assert.Nil(t, st.Operation, "a resize to the flavor the instance has is over once it is ACTIVE")
	assert.Equal(t, v1alpha1.ConditionReady, ready.cond)
	assert.Equal(t, ReasonAvailable, ready.reason)
	assert.Equal(t, settled, ready.class)

	inst.Status = cloud.StatusBuild
	st, ready = reported(v1alpha1.RdsStatus{}, inst)
	assert.Equal(t, cloud.StatusBuild, st.Status)
	assert.Equal(t, inFlight, ready.class, "a transitional instance is looked at again soon")
	assert.NotEqual(t, "True", string(ready.status))
}
