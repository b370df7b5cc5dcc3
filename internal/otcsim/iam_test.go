package otcsim

import (
	"net/http"
	"testing"
	"time"

	golangsdk "github.com/opentelekomcloud/gophertelekomcloud"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/identity/v3/tokens"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/instances"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoginFromEnv(t *testing.T) {
	srv := NewServer(Options{})
	t.Cleanup(srv.Close)
	for k, v := range srv.Env() {
		t.Setenv(k, v)
	}

	ao, err := openstack.AuthOptionsFromEnv()
	require.NoError(t, err)
	provider, err := openstack.AuthenticatedClient(ao)
	require.NoError(t, err)

	assert.NotEmpty(t, provider.TokenID)
	assert.Equal(t, DefaultProjectID, provider.ProjectID)
	assert.Equal(t, "eu-de", provider.RegionID)

	rds, err := openstack.NewRDSV3(provider, golangsdk.EndpointOpts{})
	require.NoError(t, err)
	assert.Equal(t, srv.URL+"/rds/v3/"+DefaultProjectID+"/", rds.Endpoint)
	ces, err := openstack.NewCESClient(provider, golangsdk.EndpointOpts{})
	require.NoError(t, err)
	assert.Equal(t, srv.URL+"/ces/V1.0/"+DefaultProjectID+"/", ces.Endpoint)
	netV1, err := openstack.NewNetworkV1(provider, golangsdk.EndpointOpts{})
	require.NoError(t, err)
	assert.Equal(t, srv.URL+"/vpc/v1/", netV1.ResourceBaseURL())

	res, err := instances.List(rds, instances.ListOpts{})
	require.NoError(t, err)
	assert.Empty(t, res.Instances)
	assert.Equal(t, 1, srv.Sim.Calls(OpCreateToken))
	assert.Equal(t, 1, srv.Sim.Calls(OpListInstances))
}

func TestLoginScopes(t *testing.T) {
	srv := NewServer(Options{})
	t.Cleanup(srv.Close)
	cases := map[string]struct {
		opts    golangsdk.AuthOptions
		wantErr bool
	}{
		"project id":         {opts: golangsdk.AuthOptions{Username: DefaultUsername, Password: DefaultPassword, DomainName: DefaultDomainName, TenantID: DefaultProjectID}},
		"project name":       {opts: golangsdk.AuthOptions{Username: DefaultUsername, Password: DefaultPassword, DomainName: DefaultDomainName, TenantName: "eu-de"}},
		"wrong password":     {opts: golangsdk.AuthOptions{Username: DefaultUsername, Password: "nope", DomainName: DefaultDomainName, TenantName: "eu-de"}, wantErr: true},
		"wrong user":         {opts: golangsdk.AuthOptions{Username: "other", Password: DefaultPassword, DomainName: DefaultDomainName, TenantName: "eu-de"}, wantErr: true},
		"wrong domain":       {opts: golangsdk.AuthOptions{Username: DefaultUsername, Password: DefaultPassword, DomainName: "OTC-other", TenantName: "eu-de"}, wantErr: true},
		"unknown project id": {opts: golangsdk.AuthOptions{Username: DefaultUsername, Password: DefaultPassword, DomainName: DefaultDomainName, TenantID: "ffffffffffffffffffffffffffffffff"}, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tc.opts.IdentityEndpoint = srv.AuthURL()
			provider, err := openstack.AuthenticatedClient(tc.opts)
			if tc.wantErr {
				require.Error(t, err)
				assert.IsType(t, golangsdk.ErrDefault401{}, unwrapAll(err))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, DefaultProjectID, provider.ProjectID)
		})
	}
}

// unwrapAll returns the innermost wrapped error.
func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok || u.Unwrap() == nil {
			return err
		}
		err = u.Unwrap()
	}
}

func TestTokenLoginEchoesSubjectToken(t *testing.T) {
	e := newEnv(t, Options{})
	provider, err := openstack.AuthenticatedClient(golangsdk.AuthOptions{
		IdentityEndpoint: e.srv.AuthURL(), TokenID: e.provider.TokenID, TenantName: "eu-de",
	})
	require.NoError(t, err)
	assert.Equal(t, e.provider.TokenID, provider.TokenID)
	assert.Equal(t, DefaultProjectID, provider.ProjectID)
	assert.Equal(t, 1, e.sim.Calls(OpGetToken))
}

func TestTokenValidateAndRevoke(t *testing.T) {
	e := newEnv(t, Options{})
	identity, err := openstack.NewIdentityV3(e.provider, golangsdk.EndpointOpts{})
	require.NoError(t, err)

	// A second token for the same user, revoked through the first one.
	other := login(t, e.srv)
	ok, err := tokens.Validate(identity, other.TokenID)
	require.NoError(t, err)
	assert.True(t, ok)

	require.NoError(t, tokens.Revoke(identity, other.TokenID).Err)
	ok, err = tokens.Validate(identity, other.TokenID)
	require.NoError(t, err)
	assert.False(t, ok)

	rds, err := openstack.NewRDSV3(other, golangsdk.EndpointOpts{})
	require.NoError(t, err)
	_, err = instances.List(rds, instances.ListOpts{})
	status, code := rdsErrorCode(t, err)
	assert.Equal(t, http.StatusUnauthorized, status)
	assert.Equal(t, "APIGW.0301", code)
}

func TestTokenExpiresAfter24Hours(t *testing.T) {
	e := newEnv(t, Options{})
	e.clock.Advance(24*time.Hour - time.Second)
	_, err := instances.List(e.rds, instances.ListOpts{})
	require.NoError(t, err)

	e.clock.Advance(time.Second)
	_, err = instances.List(e.rds, instances.ListOpts{})
	status, code := rdsErrorCode(t, err)
	assert.Equal(t, http.StatusUnauthorized, status)
	assert.Equal(t, "APIGW.0301", code)
}

func TestUnknownTokenAndMissingToken(t *testing.T) {
	e := newEnv(t, Options{})
	for name, tok := range map[string]string{"unknown": "MIIbogus", "missing": ""} {
		t.Run(name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, e.rds.ServiceURL("instances"), nil)
			require.NoError(t, err)
			if tok != "" {
				req.Header.Set("X-Auth-Token", tok)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		})
	}
}

func TestUnknownPathAnswersJSON404(t *testing.T) {
	e := newEnv(t, Options{})
	_, err := e.rds.Get(e.rds.ServiceURL("nothing-here"), nil, nil)
	status, code := rdsErrorCode(t, err)
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, "DBS.200045", code)
}

func TestAllowReauthRenewsExpiredToken(t *testing.T) {
	srv := NewServer(Options{Clock: NewManualClock(t0)})
	t.Cleanup(srv.Close)
	clock := srv.Sim.Options().Clock.(*ManualClock)
	provider, err := openstack.AuthenticatedClient(golangsdk.AuthOptions{
		IdentityEndpoint: srv.AuthURL(), Username: DefaultUsername, Password: DefaultPassword,
		DomainName: DefaultDomainName, TenantName: "eu-de", AllowReauth: true,
	})
	require.NoError(t, err)
	rds, err := openstack.NewRDSV3(provider, golangsdk.EndpointOpts{})
	require.NoError(t, err)

	clock.Advance(25 * time.Hour)
	_, err = instances.List(rds, instances.ListOpts{})
	require.NoError(t, err)
	assert.Equal(t, 2, srv.Sim.Calls(OpCreateToken))
	assert.Equal(t, 2, srv.Sim.Calls(OpListInstances))
}

func TestVersionDiscovery(t *testing.T) {
	srv := NewServer(Options{})
	t.Cleanup(srv.Close)
	provider, err := openstack.AuthenticatedClient(golangsdk.AuthOptions{
		IdentityEndpoint: srv.URL, Username: DefaultUsername, Password: DefaultPassword,
		DomainName: DefaultDomainName, TenantName: "eu-de",
	})
	require.NoError(t, err)
	assert.Equal(t, DefaultProjectID, provider.ProjectID)
	assert.Equal(t, 1, srv.Sim.Calls(OpGetVersions))
}

func TestTokensCreateAndGetDecode(t *testing.T) {
	e := newEnv(t, Options{})
	identity, err := openstack.NewIdentityV3(e.provider, golangsdk.EndpointOpts{})
	require.NoError(t, err)

	res := tokens.Create(identity, &tokens.AuthOptions{
		Username: DefaultUsername, Password: DefaultPassword, DomainName: DefaultDomainName,
		Scope: tokens.Scope{ProjectName: DefaultProjectName, DomainName: DefaultDomainName},
	})
	require.NoError(t, res.Err)
	token, err := res.ExtractToken()
	require.NoError(t, err)
	assert.NotEmpty(t, token.ID, "read from X-Subject-Token")
	assert.Equal(t, t0.Add(24*time.Hour), token.ExpiresAt.UTC(), "tokens live 24 h")
	project, err := res.ExtractProject()
	require.NoError(t, err)
	assert.Equal(t, DefaultProjectID, project.ID)
	assert.Equal(t, DefaultProjectName, project.Name)
	catalog, err := res.ExtractServiceCatalog()
	require.NoError(t, err)
	var types []string
	for _, entry := range catalog.Entries {
		types = append(types, entry.Type)
	}
	assert.Subset(t, types, []string{"rdsv3", "volumev2", "network", "identity"})

	got := tokens.Get(identity, token.ID)
	require.NoError(t, got.Err)
	same, err := got.ExtractToken()
	require.NoError(t, err)
	assert.Equal(t, token.ID, same.ID, "GET echoes X-Subject-Token")
	user, err := got.ExtractUser()
	require.NoError(t, err)
	assert.Equal(t, DefaultUsername, user.Name)
}
