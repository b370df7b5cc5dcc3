package otcsim

import (
	"net/http"
	"testing"

	golangsdk "github.com/opentelekomcloud/gophertelekomcloud"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/networking/v1/subnets"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/networking/v1/vpcs"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/networking/v2/extensions/layer3/routers"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/networking/v2/extensions/security/groups"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/networking/v2/networks"
	nsubnets "github.com/opentelekomcloud/gophertelekomcloud/openstack/networking/v2/subnets"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/instances"
	vpcsv3 "github.com/opentelekomcloud/gophertelekomcloud/openstack/vpc/v3/vpcs"
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

// TestNeutronNetworksAndSubnets: the SDK's Neutron packages find an OTC subnet two ways, and both
// lead to the id RDS create wants as subnet_id (the Neutron network id = the VPC v1 subnet id).
func TestNeutronNetworksAndSubnets(t *testing.T) {
	e := newEnv(t, Options{})
	_, v2 := networkClients(t, e)

	pages, err := nsubnets.List(v2, nsubnets.ListOpts{Name: SeedSubnetName}).AllPages()
	require.NoError(t, err)
	sns, err := nsubnets.ExtractSubnets(pages)
	require.NoError(t, err)
	require.Len(t, sns, 1)
	sn := sns[0]
	assert.Equal(t, SeedNeutronSubnetID, sn.ID)
	assert.Equal(t, SeedSubnetID, sn.NetworkID, "the Neutron network id is the RDS subnet_id")
	assert.Equal(t, 4, sn.IPVersion)
	assert.Equal(t, "192.168.0.0/24", sn.CIDR)
	assert.Equal(t, "192.168.0.1", sn.GatewayIP)
	assert.True(t, sn.EnableDHCP)
	assert.Equal(t, []nsubnets.AllocationPool{{Start: "192.168.0.2", End: "192.168.0.251"}}, sn.AllocationPools)
	assert.Equal(t, e.sim.ProjectID(), sn.TenantID)

	got, err := nsubnets.Get(v2, sn.ID).Extract()
	require.NoError(t, err)
	assert.Equal(t, sn, *got)

	net, err := networks.Get(v2, sn.NetworkID).Extract()
	require.NoError(t, err)
	assert.Equal(t, []string{SeedNeutronSubnetID}, net.Subnets)
	assert.Equal(t, "ACTIVE", net.Status)
	assert.True(t, net.AdminStateUp)
	assert.False(t, net.Shared)

	// Networks are named after their VPC's id; every project also sees admin_external_net.
	id, err := networks.IDFromName(v2, SeedVPCID)
	require.NoError(t, err)
	assert.Equal(t, SeedSubnetID, id)
	id, err = networks.IDFromName(v2, AdminExternalNetName)
	require.NoError(t, err)
	assert.Equal(t, AdminExternalNetID, id)
	shared := true
	pages, err = networks.List(v2, networks.ListOpts{Shared: &shared}).AllPages()
	require.NoError(t, err)
	all, err := networks.ExtractNetworks(pages)
	require.NoError(t, err)
	require.Len(t, all, 1)
	assert.Equal(t, AdminExternalNetName, all[0].Name)

	// Filters on network_id; an added subnet is a second network.
	vpcID := e.sim.AddVPC("other", "10.0.0.0/16")
	subnetID, err := e.sim.AddSubnet(vpcID, "app", "10.0.1.0/24")
	require.NoError(t, err)
	pages, err = nsubnets.List(v2, nsubnets.ListOpts{NetworkID: subnetID}).AllPages()
	require.NoError(t, err)
	sns, err = nsubnets.ExtractSubnets(pages)
	require.NoError(t, err)
	require.Len(t, sns, 1)
	assert.Equal(t, "app", sns[0].Name)
	assert.Equal(t, "10.0.1.1", sns[0].GatewayIP)

	// limit pages through the list with networks_links (the SDK's pager follows them).
	pages, err = networks.List(v2, networks.ListOpts{Limit: 1}).AllPages()
	require.NoError(t, err)
	all, err = networks.ExtractNetworks(pages)
	require.NoError(t, err)
	assert.Len(t, all, 3)

	_, err = networks.Get(v2, "nope").Extract()
	var e404 golangsdk.ErrDefault404
	require.ErrorAs(t, err, &e404)
	assert.JSONEq(t, `{"NeutronError":{"type":"NetworkNotFound","message":"Network nope could not be found.","detail":""}}`, string(e404.Body))
	_, err = nsubnets.Get(v2, "nope").Extract()
	require.ErrorAs(t, err, &e404)
	assert.Contains(t, string(e404.Body), `"SubnetNotFound"`)
}

// TestNeutronRouters: a VPC is the Neutron router with the same id and name, listed and read
// through the SDK's layer3/routers (an OpenStack client finds a VPC so).
func TestNeutronRouters(t *testing.T) {
	e := newEnv(t, Options{})
	_, v2 := networkClients(t, e)
	other := e.sim.AddVPC("team-b", "10.0.0.0/16")

	pages, err := routers.List(v2, routers.ListOpts{}).AllPages()
	require.NoError(t, err)
	all, err := routers.ExtractRouters(pages)
	require.NoError(t, err)
	require.Len(t, all, 2)
	assert.Equal(t, []string{SeedVPCID, other}, []string{all[0].ID, all[1].ID})

	pages, err = routers.List(v2, routers.ListOpts{Name: SeedVPCName}).AllPages()
	require.NoError(t, err)
	byName, err := routers.ExtractRouters(pages)
	require.NoError(t, err)
	require.Len(t, byName, 1)
	r := byName[0]
	assert.Equal(t, SeedVPCID, r.ID, "the router's id is the VPC's")
	assert.Equal(t, SeedVPCName, r.Name)
	assert.Equal(t, "ACTIVE", r.Status)
	assert.True(t, r.AdminStateUp)
	assert.Equal(t, e.sim.ProjectID(), r.TenantID)
	assert.Empty(t, r.GatewayInfo.NetworkID, "no external gateway")

	got, err := routers.Get(v2, other).Extract()
	require.NoError(t, err)
	assert.Equal(t, "team-b", got.Name)

	// Paged as Neutron pages: limit and a next link the SDK follows.
	pages, err = routers.List(v2, routers.ListOpts{Limit: 1}).AllPages()
	require.NoError(t, err)
	paged, err := routers.ExtractRouters(pages)
	require.NoError(t, err)
	assert.Equal(t, all, paged)

	_, err = routers.Get(v2, "nope").Extract()
	var e404 golangsdk.ErrDefault404
	require.ErrorAs(t, err, &e404)
	assert.Contains(t, string(e404.Body), `"RouterNotFound"`)
}

// TestVpcV3: the catalog's "vpc" entry gives NewVpcV3 its endpoint; the SDK's VPC v3 look-ups
// (vpcs.List with its filters, vpcs.Get) decode the simulator's answers.
func TestVpcV3(t *testing.T) {
	e := newEnv(t, Options{})
	v3, err := openstack.NewVpcV3(e.provider, golangsdk.EndpointOpts{})
	require.NoError(t, err)
	assert.Equal(t, e.srv.URL+"/vpc/v3/"+e.sim.ProjectID()+"/vpc/", v3.ResourceBaseURL())
	other := e.sim.AddVPC("team-b", "10.0.0.0/16")
	_, err = e.sim.AddSubnet(other, "team-b-1", "10.0.1.0/24")
	require.NoError(t, err)
	_, err = e.sim.AddSubnet(other, "team-b-2", "10.0.2.0/24")
	require.NoError(t, err)

	all, err := vpcsv3.List(v3, vpcsv3.ListOpts{})
	require.NoError(t, err)
	require.Len(t, all, 2)

	byName, err := vpcsv3.List(v3, vpcsv3.ListOpts{Name: []string{SeedVPCName}})
	require.NoError(t, err)
	require.Len(t, byName, 1)
	v := byName[0]
	assert.Equal(t, SeedVPCID, v.Id)
	assert.Equal(t, "192.168.0.0/16", v.Cidr)
	assert.Equal(t, "ACTIVE", v.Status)
	assert.Equal(t, e.sim.ProjectID(), v.ProjectId)
	assert.Contains(t, v.CloudResources, vpcsv3.CloudResource{ResourceType: "virsubnet", ResourceCount: 1})

	two, err := vpcsv3.List(v3, vpcsv3.ListOpts{Id: []string{SeedVPCID, other}, Cidr: []string{"10.0.0.0/16"}})
	require.NoError(t, err)
	require.Len(t, two, 1, "filters combine; the values of one filter are alternatives")
	assert.Equal(t, other, two[0].Id)

	first, err := vpcsv3.List(v3, vpcsv3.ListOpts{Limit: 1})
	require.NoError(t, err)
	require.Len(t, first, 1)
	rest, err := vpcsv3.List(v3, vpcsv3.ListOpts{Marker: first[0].Id})
	require.NoError(t, err)
	assert.Equal(t, all, append(first, rest...))

	got, err := vpcsv3.Get(v3, other)
	require.NoError(t, err)
	assert.Equal(t, "team-b", got.Name)
	assert.Contains(t, got.CloudResources, vpcsv3.CloudResource{ResourceType: "virsubnet", ResourceCount: 2})

	_, err = vpcsv3.Get(v3, "nope")
	var e404 golangsdk.ErrDefault404
	require.ErrorAs(t, err, &e404)
	assert.Contains(t, string(e404.Body), `"error_code":"VPC.0003"`)
	assert.Contains(t, string(e404.Body), `"request_id"`)
}
