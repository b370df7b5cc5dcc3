package otcsim

import (
	"net/http"
	"testing"

	golangsdk "github.com/opentelekomcloud/gophertelekomcloud"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/networking/v1/subnets"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/networking/v1/vpcs"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/networking/v2/extensions/security/groups"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/instances"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func networkClients(t *testing.T, e *env) (v1, v2 *golangsdk.ServiceClient) {
	t.Helper()
	v1, err := openstack.NewNetworkV1(e.provider, golangsdk.EndpointOpts{})
	require.NoError(t, err)
	v2, err = openstack.NewNetworkV2(e.provider, golangsdk.EndpointOpts{})
	require.NoError(t, err)
	return v1, v2
}

func TestSeedNetworkLookups(t *testing.T) {
	e := newEnv(t, Options{})
	v1, v2 := networkClients(t, e)

	vpcList, err := vpcs.List(v1, vpcs.ListOpts{Name: "frank-test"})
	require.NoError(t, err)
	require.Len(t, vpcList, 1)
	assert.Equal(t, SeedVPCID, vpcList[0].ID)
	assert.Equal(t, "OK", vpcList[0].Status)

	subnetList, err := subnets.List(v1, subnets.ListOpts{Name: "frank-test", VpcID: SeedVPCID})
	require.NoError(t, err)
	require.Len(t, subnetList, 1)
	assert.Equal(t, SeedSubnetID, subnetList[0].ID)
	assert.Equal(t, SeedSubnetID, subnetList[0].NetworkID)
	assert.Equal(t, SeedNeutronSubnetID, subnetList[0].SubnetID)
	assert.Equal(t, "192.168.0.1", subnetList[0].GatewayIP)

	id, err := groups.IDFromName(v2, "golang")
	require.NoError(t, err)
	assert.Equal(t, SeedSecurityGroupID, id)
	id, err = groups.IDFromName(v2, "default")
	require.NoError(t, err)
	assert.Equal(t, SeedDefaultSecurityGroupID, id)
	_, err = groups.IDFromName(v2, "missing")
	assert.IsType(t, golangsdk.ErrResourceNotFound{}, err)

	got, err := vpcs.Get(v1, SeedVPCID).Extract()
	require.NoError(t, err)
	assert.Equal(t, "frank-test", got.Name)
	sg, err := groups.Get(v2, SeedSecurityGroupID).Extract()
	require.NoError(t, err)
	assert.Equal(t, "golang", sg.Name)

	// NOTE: the SDK's pager fetches the first page twice.
	assert.Equal(t, 2, e.sim.Calls(OpListVpcs))
}

func TestNetworkNotFoundBodies(t *testing.T) {
	e := newEnv(t, Options{})
	v1, v2 := networkClients(t, e)

	_, err := vpcs.Get(v1, "nope").Extract()
	var e404 golangsdk.ErrDefault404
	require.ErrorAs(t, err, &e404)
	assert.JSONEq(t, `{"code":"VPC.0003","message":"The VPC does not exist."}`, string(e404.Body))

	_, err = subnets.Get(v1, "nope").Extract()
	require.ErrorAs(t, err, &e404)
	assert.Contains(t, string(e404.Body), `"VPC.0202"`)

	_, err = groups.Get(v2, "nope").Extract()
	require.ErrorAs(t, err, &e404)
	assert.Contains(t, string(e404.Body), `"NeutronError"`)
}

func TestAddedNetworkAndAmbiguousNames(t *testing.T) {
	e := newEnv(t, Options{})
	v1, v2 := networkClients(t, e)

	vpcID := e.sim.AddVPC("frank-test", "10.0.0.0/16")
	subnetID, err := e.sim.AddSubnet(vpcID, "app", "10.0.1.0/24")
	require.NoError(t, err)
	e.sim.AddSecurityGroup("golang")
	_, err = e.sim.AddSubnet("nope", "x", "10.1.0.0/24")
	require.Error(t, err)

	vpcList, err := vpcs.List(v1, vpcs.ListOpts{Name: "frank-test"})
	require.NoError(t, err)
	assert.Len(t, vpcList, 2, "duplicate names are the client's problem")
	_, err = groups.IDFromName(v2, "golang")
	assert.IsType(t, golangsdk.ErrMultipleResourcesFound{}, err)

	// An instance in the added subnet gets an address from it.
	opts := createOpts("in-new-subnet")
	opts.VpcId, opts.SubnetId = vpcID, subnetID
	id := e.createActive(t, opts)
	assert.Equal(t, []string{"10.0.1.100"}, e.getInstance(t, id).PrivateIps)

	// The seed subnet is not in the new VPC.
	opts = createOpts("wrong-subnet")
	opts.VpcId = vpcID
	_, err = instances.Create(e.rds, opts)
	status, code := rdsErrorCode(t, err)
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, "DBS.200501", code)
}
