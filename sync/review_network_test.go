package reconcile

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// TestForgedNetworkRefsAreLookedUp (review #19 A): status.networkRefs comes in the request, and the
// object's namespace can write it. An id it records that the instance does not have is no proof
// of what the spec's name resolves to: the network step looks the names up again, and the day-2
// change moves the instance to what OTC resolves, never to an id status claims.
func TestForgedNetworkRefsAreLookedUp(t *testing.T) {
	spec := new(sampleSpec())
	forged := resolvedRefs()
	forged.SecurityGroupID = "sg-of-another-team" // spec.securitygroup "golang" is the instance's sg-1
	st := v1alpha1.RdsStatus{NetworkRefs: forged}
	inst := networkInstance()

	p := planNetwork(networkInput{spec: spec, st: soFar(&st), inst: inst})
	assert.True(t, p.needNetwork, "an id status records that is not the instance's is looked up")

	p = planNetwork(networkInput{spec: spec, st: soFar(&st), inst: inst, network: &cloud.Network{VpcID: "vpc-1", SubnetID: "sub-1", SecurityGroupID: "sg-1"}})
	assert.Nil(t, p.outcome)
	assert.Equal(t, resolvedRefs(), p.refs, "the forged record is replaced by what OTC resolved")
	st.NetworkRefs = p.refs
	changes, _ := networkChanges(day2Input{spec: spec, st: soFar(&st), inst: inst})
	assert.Empty(t, changes, "no security group change: the spec's name is the instance's group")

}
