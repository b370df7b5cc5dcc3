package otcsim

import (
	"net/http"
	"testing"
	"time"

	golangsdk "github.com/opentelekomcloud/gophertelekomcloud"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/identity/v3/credentials"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/instances"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// akskClient logs in with AK/SK as a Job would.
func akskClient(t *testing.T, srv *Server, opts golangsdk.AKSKAuthOptions) (*golangsdk.ServiceClient, error) {
	t.Helper()
	opts.IdentityEndpoint = srv.AuthURL()
	provider, err := openstack.NewClient(opts.IdentityEndpoint)
	require.NoError(t, err)
	provider.HTTPClient = http.Client{Timeout: 5 * time.Second}
	if err := openstack.Authenticate(provider, opts); err != nil {
		return nil, err
	}
	return openstack.NewRDSV3(provider, golangsdk.EndpointOpts{})
}

func TestTemporaryCredentials(t *testing.T) {
	e := newEnv(t, Options{})
	identity, err := openstack.NewIdentityV3(e.provider, golangsdk.EndpointOpts{})
	require.NoError(t, err)

	cred, err := credentials.CreateTemporary(identity, credentials.CreateTemporaryOpts{Methods: []string{"token"}, Duration: 900}).Extract()
	require.NoError(t, err)
	assert.NotEmpty(t, cred.AccessKey)
	assert.NotEmpty(t, cred.SecretKey)
	assert.NotEmpty(t, cred.SecurityToken)
	expires, err := time.Parse(time.RFC3339, cred.ExpiresAt)
	require.NoError(t, err)
	assert.Equal(t, t0.Add(15*time.Minute), expires)
	assert.Equal(t, 1, e.sim.MutatingCalls())

	// The Job logs in with the temporary AK/SK (GET /v3/auth/catalog, signed) and lists instances.
	id := e.createActive(t, createOpts("job-target"))
	rds, err := akskClient(t, e.srv, golangsdk.AKSKAuthOptions{
		ProjectId: DefaultProjectID, AccessKey: cred.AccessKey, SecretKey: cred.SecretKey, SecurityToken: cred.SecurityToken,
	})
	require.NoError(t, err)
	assert.Equal(t, e.srv.URL+"/rds/v3/"+DefaultProjectID+"/", rds.Endpoint)
	res, err := instances.List(rds, instances.ListOpts{Id: id})
	require.NoError(t, err)
	require.Len(t, res.Instances, 1)
	assert.Equal(t, 1, e.sim.Calls(OpGetCatalog))

	// Expired STS credentials: 400 IAM.1108.
	e.clock.Advance(15 * time.Minute)
	_, err = instances.List(rds, instances.ListOpts{Id: id})
	status, code := rdsErrorCode(t, err)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "IAM.1108", code)

	for name, opts := range map[string]credentials.CreateTemporaryOpts{
		"too short": {Methods: []string{"token"}, Duration: 60},
		"too long":  {Methods: []string{"token"}, Duration: 86401},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := credentials.CreateTemporary(identity, opts).Extract()
			var e400 golangsdk.ErrDefault400
			require.ErrorAs(t, err, &e400)
		})
	}
}

func TestAKSKWithWrongSecurityTokenOrUnknownKey(t *testing.T) {
	e := newEnv(t, Options{AccessKey: "PERMANENTAK", SecretKey: "permanent-sk"})
	identity, err := openstack.NewIdentityV3(e.provider, golangsdk.EndpointOpts{})
	require.NoError(t, err)
	cred, err := credentials.CreateTemporary(identity, credentials.CreateTemporaryOpts{Methods: []string{"token"}}).Extract()
	require.NoError(t, err)

	_, err = akskClient(t, e.srv, golangsdk.AKSKAuthOptions{ProjectId: DefaultProjectID, AccessKey: cred.AccessKey, SecretKey: cred.SecretKey, SecurityToken: "forged"})
	require.Error(t, err)
	_, err = akskClient(t, e.srv, golangsdk.AKSKAuthOptions{ProjectId: DefaultProjectID, AccessKey: "UNKNOWN", SecretKey: "x"})
	require.Error(t, err)

	// A permanent AK/SK, with the project given by name (GET /v3/projects?name=).
	rds, err := akskClient(t, e.srv, golangsdk.AKSKAuthOptions{ProjectName: "eu-de", Domain: DefaultDomainName, AccessKey: "PERMANENTAK", SecretKey: "permanent-sk"})
	require.NoError(t, err)
	_, err = instances.List(rds, instances.ListOpts{})
	require.NoError(t, err)
	assert.Equal(t, 2, e.sim.Calls(OpListProjects), "the SDK pager fetches the first page twice")
}
