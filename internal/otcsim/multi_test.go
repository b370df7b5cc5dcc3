package otcsim

import (
	"net/http"
	"testing"
	"time"

	golangsdk "github.com/opentelekomcloud/gophertelekomcloud"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/instances"
	vpcsv3 "github.com/opentelekomcloud/gophertelekomcloud/openstack/vpc/v3/vpcs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// multiLogin logs in with the real SDK as the i-th project's user.
func multiLogin(t *testing.T, m *MultiServer, i int) (*golangsdk.ProviderClient, *golangsdk.ServiceClient) {
	t.Helper()
	env := m.Env(i)
	provider, err := openstack.NewClient(env["OS_AUTH_URL"])
	require.NoError(t, err)
	provider.HTTPClient = http.Client{Timeout: 5 * time.Second}
	noRetries := 0
	provider.MaxBackoffRetries = &noRetries
	require.NoError(t, openstack.Authenticate(provider, golangsdk.AuthOptions{
		IdentityEndpoint: env["OS_AUTH_URL"], Username: env["OS_USERNAME"], Password: env["OS_PASSWORD"],
		DomainName: env["OS_DOMAIN_NAME"], TenantName: env["OS_PROJECT_NAME"],
	}))
	rds, err := openstack.NewRDSV3(provider, golangsdk.EndpointOpts{Region: Region})
	require.NoError(t, err)
	return provider, rds
}

func TestMultiKeepsProjectsApart(t *testing.T) {
	m := NewMultiServer(
		Options{Seed: 1, Clock: NewManualClock(t0)},
		Options{Seed: 2, ProjectID: "a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a1", ProjectName: "eu-de_a", Username: "a", Password: "pw-a", Clock: NewManualClock(t0)},
	)
	t.Cleanup(m.Close)
	_, rds0 := multiLogin(t, m, 0)
	providerA, rdsA := multiLogin(t, m, 1)
	assert.Equal(t, 1, m.Sims[0].Calls(OpCreateToken))
	assert.Equal(t, 1, m.Sims[1].Calls(OpCreateToken), "each login goes to its user's project")
	assert.Contains(t, rdsA.ResourceBaseURL(), "a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a1")

	_, err := instances.Create(rdsA, createOpts("only-in-a"))
	require.NoError(t, err)
	listA, err := instances.List(rdsA, instances.ListOpts{})
	require.NoError(t, err)
	assert.Len(t, listA.Instances, 1)
	list0, err := instances.List(rds0, instances.ListOpts{})
	require.NoError(t, err)
	assert.Empty(t, list0.Instances, "the other project lists none of it")
	assert.Len(t, m.Sims[1].Instances(), 1)
	assert.Empty(t, m.Sims[0].Instances())

	// VPC v3 has the project in its path too: each project reads its own VPCs.
	m.Sims[1].AddVPC("only-in-a", "10.1.0.0/16")
	v3, err := openstack.NewVpcV3(providerA, golangsdk.EndpointOpts{Region: Region})
	require.NoError(t, err)
	vpcsA, err := vpcsv3.List(v3, vpcsv3.ListOpts{Name: []string{"only-in-a"}})
	require.NoError(t, err)
	assert.Len(t, vpcsA, 1)
	assert.Equal(t, 1, m.Sims[1].Calls(OpListVpcsV3))
	assert.Zero(t, m.Sims[0].Calls(OpListVpcsV3))

	// Project A's path with project 0's token: the token is routed with the path, and refused.
	rds0.Endpoint, rds0.ResourceBase = rdsA.Endpoint, rdsA.ResourceBase
	_, err = instances.List(rds0, instances.ListOpts{})
	require.Error(t, err)

	// A wrong password is refused by the user's own project.
	env := m.Env(1)
	provider, err := openstack.NewClient(env["OS_AUTH_URL"])
	require.NoError(t, err)
	err = openstack.Authenticate(provider, golangsdk.AuthOptions{
		IdentityEndpoint: env["OS_AUTH_URL"], Username: "a", Password: "wrong", DomainName: env["OS_DOMAIN_NAME"], TenantName: env["OS_PROJECT_NAME"],
	})
	require.Error(t, err)
	assert.Equal(t, 2, m.Sims[1].Calls(OpCreateToken))
}

func TestNewMultiRefusesEqualSeeds(t *testing.T) {
	assert.Panics(t, func() { NewMulti(New(Options{}), New(Options{ProjectID: "b1", Username: "b"})) })
}
