package otcsim

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	golangsdk "github.com/opentelekomcloud/gophertelekomcloud"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/instances"
	"github.com/stretchr/testify/require"
)

// t0 is where every manual clock starts.
var t0 = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)

// env is a simulator with SDK clients logged in to it.
type env struct {
	srv      *Server
	sim      *Sim
	clock    *ManualClock
	provider *golangsdk.ProviderClient
	rds      *golangsdk.ServiceClient
}

// newEnv starts a simulator with a manual clock and logs in with the real SDK.
func newEnv(t *testing.T, opts Options) *env {
	t.Helper()
	clock := NewManualClock(t0)
	if opts.Clock == nil {
		opts.Clock = clock
	}
	srv := NewServer(opts)
	t.Cleanup(srv.Close)
	e := &env{srv: srv, sim: srv.Sim, clock: clock}
	e.provider = login(t, srv)
	rds, err := openstack.NewRDSV3(e.provider, golangsdk.EndpointOpts{})
	require.NoError(t, err)
	e.rds = rds
	return e
}

// login authenticates with the options the simulator's Env describes.
func login(t *testing.T, srv *Server) *golangsdk.ProviderClient {
	t.Helper()
	env := srv.Env()
	provider, err := openstack.NewClient(env["OS_AUTH_URL"])
	require.NoError(t, err)
	provider.HTTPClient = http.Client{Timeout: 5 * time.Second}
	noRetries := 0
	provider.MaxBackoffRetries = &noRetries
	require.NoError(t, openstack.Authenticate(provider, golangsdk.AuthOptions{
		IdentityEndpoint: env["OS_AUTH_URL"],
		Username:         env["OS_USERNAME"],
		Password:         env["OS_PASSWORD"],
		DomainName:       env["OS_DOMAIN_NAME"],
		TenantName:       env["OS_PROJECT_NAME"],
	}))
	return provider
}

// createOpts is a valid single MySQL 8.0 instance in the seed network.
func createOpts(name string) instances.CreateRdsOpts {
	return instances.CreateRdsOpts{
		Name:             name,
		Datastore:        &instances.Datastore{Type: "MySQL", Version: "8.0"},
		FlavorRef:        "rds.mysql.c2.medium",
		Volume:           &instances.Volume{Type: "COMMON", Size: 40},
		Region:           "eu-de",
		AvailabilityZone: "eu-de-01",
		VpcId:            SeedVPCID,
		SubnetId:         SeedSubnetID,
		SecurityGroupId:  SeedSecurityGroupID,
		Port:             "3306",
		Password:         "Sim-Passw0rd!",
	}
}

// getInstance lists one instance by id.
func (e *env) getInstance(t *testing.T, id string) instances.InstanceResponse {
	t.Helper()
	res, err := instances.List(e.rds, instances.ListOpts{Id: id})
	require.NoError(t, err)
	require.Len(t, res.Instances, 1)
	return res.Instances[0]
}

// create creates an instance and returns its id and job id.
func (e *env) create(t *testing.T, opts instances.CreateRdsOpts) (string, string) {
	t.Helper()
	res, err := instances.Create(e.rds, opts)
	require.NoError(t, err)
	return res.Instance.Id, res.JobId
}

// createActive creates an instance and advances the clock until it is ACTIVE.
func (e *env) createActive(t *testing.T, opts instances.CreateRdsOpts) string {
	t.Helper()
	id, _ := e.create(t, opts)
	e.clock.Advance(e.sim.Options().Durations.Create)
	require.Equal(t, StatusActive, e.getInstance(t, id).Status)
	return id
}

// rdsJob is the answer of GET /jobs, decoded as the project's adapter does.
func (e *env) getJob(t *testing.T, id string) (golangsdk.RDSJobStatus, error) {
	t.Helper()
	var body golangsdk.RDSJobStatus
	_, err := e.rds.Get(e.rds.ServiceURL("jobs")+"?id="+id, &body, nil)
	return body, err
}

// rdsErrorCode extracts error_code from an SDK error.
func rdsErrorCode(t *testing.T, err error) (int, string) {
	t.Helper()
	require.Error(t, err)
	var code struct {
		Code string `json:"error_code"`
	}
	var ue golangsdk.ErrUnexpectedResponseCode
	switch e := err.(type) {
	case golangsdk.ErrDefault400:
		ue = e.ErrUnexpectedResponseCode
	case golangsdk.ErrDefault401:
		ue = e.ErrUnexpectedResponseCode
	case golangsdk.ErrDefault403:
		ue = e.ErrUnexpectedResponseCode
	case golangsdk.ErrDefault404:
		ue = e.ErrUnexpectedResponseCode
	case golangsdk.ErrDefault409:
		ue = e.ErrUnexpectedResponseCode
	case golangsdk.ErrDefault429:
		ue = e.ErrUnexpectedResponseCode
	case golangsdk.ErrDefault500:
		ue = e.ErrUnexpectedResponseCode
	case golangsdk.ErrDefault503:
		ue = e.ErrUnexpectedResponseCode
	case golangsdk.ErrUnexpectedResponseCode:
		ue = e
	default:
		var target golangsdk.ErrUnexpectedResponseCode
		if !errors.As(err, &target) {
			t.Fatalf("not an SDK response error: %T %v", err, err)
		}
		ue = target
	}
	require.NoError(t, json.Unmarshal(ue.Body, &code), "body: %s", ue.Body)
	return ue.Actual, code.Code
}

func decodeJSON(resp *http.Response, v any) error {
	return json.NewDecoder(resp.Body).Decode(v)
}
