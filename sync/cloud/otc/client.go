// Package otc is the adapter between the port cloud.Cloud and Open Telekom Cloud. It is the only
// package that imports gophertelekomcloud; everything it returns is our own types and *cloud.Error.
//
// One Client holds one logged-in SDK provider for the whole process. The token is renewed on the
// first 401 after it expires; calls never log in on their own, and a failed renewal is not tried
// again for a while (Config.ReauthBackoff, Config.ReauthRetry).
package otc

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	golangsdk "github.com/opentelekomcloud/gophertelekomcloud"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

var _ cloud.Cloud = (*Client)(nil)

// Client implements cloud.Cloud against OTC. It is safe for concurrent use.
type Client struct {
	region     string
	project    string                   // the login\'s project id
	rds        *golangsdk.ServiceClient // RDS v3, {rds}/instances, ...
	vpc        *golangsdk.ServiceClient // VPC v1: vpcs, subnets
	neutron    *golangsdk.ServiceClient // Neutron v2.0: security groups
	ces        *golangsdk.ServiceClient // Cloud Eye v1 (autopilot's metrics); nil if the catalog has none
	auth       *authenticator
	calls      calls
	transport  *transport
	networks   networkCache
	now        func() time.Time
	observe    func(op, result string, d time.Duration)
	retryAfter time.Duration
}

// New logs in to OTC and returns a Client for the config's region. It returns ErrNoCredentials, or
// a *cloud.Error of kind Unauthorized or Unavailable when the login fails.
//
// For the embedded simulator, build the config from its variables:
//
//	cfg, err := otc.ConfigFromEnv(func(k string) string { return sim.Env()[k] })
func New(ctx context.Context, cfg Config) (*Client, error) {
	opts, region, err := loginOptions(cfg)
	if err != nil {
		return nil, err
	}
	base := cfg.Transport
	if base == nil {
		base = NewTransport()
	}
	c := &Client{observe: cfg.Observe, retryAfter: cfg.retryAfter(), now: time.Now}
	c.transport = &transport{base: base, calls: &c.calls}
	c.auth = &authenticator{
		opts: opts,
		httpClient: http.Client{
			Timeout:   cfg.requestTimeout(),
			Transport: c.transport,
		},
		observe:        cfg.Observe,
		refusedBackoff: cfg.reauthBackoff(),
		failedBackoff:  cfg.reauthRetry(),
		now:            time.Now,
	}

	// The login takes no context either: give up waiting when ctx ends (the request timeout ends it).
	type result struct {
		p   *golangsdk.ProviderClient
		err error
	}
	done := make(chan result, 1)
	go func() {
		p, err := c.auth.login()
		done <- result{p, err}
	}()
	var provider *golangsdk.ProviderClient
	select {
	case r := <-done:
		if r.err != nil {
			return nil, loginError(r.err)
		}
		provider = r.p
	case <-ctx.Done():
		return nil, translate("Authenticate", ctx.Err(), callInfo{})
	}

	// NOTE: without OS_REGION_NAME the SDK derives the region from the project name ("eu-de_x" ->
	// "eu-de"), falling back to the token's project name (openstack/utils GetRegion).
	c.project = provider.ProjectID
	c.region = firstNonEmpty(region, provider.RegionID)
	if c.region == "" {
		return nil, errors.New("cannot tell the OTC region: set OS_REGION_NAME")
	}
	eo := golangsdk.EndpointOpts{Region: c.region}
	if c.rds, err = openstack.NewRDSV3(provider, eo); err != nil {
		return nil, fmt.Errorf("no RDS v3 endpoint (type rdsv3) for region %s in the service catalog", c.region)
	}
	if c.vpc, err = openstack.NewNetworkV1(provider, eo); err != nil {
		return nil, fmt.Errorf("no network endpoint (type network) for region %s in the service catalog", c.region)
	}
	if c.neutron, err = openstack.NewNetworkV2(provider, eo); err != nil {
		return nil, fmt.Errorf("no network endpoint (type network) for region %s in the service catalog", c.region)
	}
	c.ces, _ = openstack.NewCESClient(provider, eo) // NOTE: only autopilot needs it: without it, autopilot reports no metrics
	return c, nil
}

// loginError keeps the SDK's login errors (which may quote the Keystone URL and body) out of logs.
func loginError(err error) error {
	var ce *cloud.Error
	if errors.As(err, &ce) {
		return ce
	}
	out := translate("Authenticate", err, callInfo{})
	if out.Kind == cloud.KindUnknown {
		// e.g. "error extracting token": Keystone answered, but not as we expect. A login error
		// only stops the program at its start and never reaches a status, so the operator gets
		// the detail in its text.
		out.Message = oneLine("login failed: " + firstNonEmpty(out.Detail, out.Message))
	}
	return out
}

// Project is the id of the OTC project the login reaches (cloud.ProjectNamer).
func (c *Client) Project() string { return c.project }

// Region is the one region this client serves.
func (c *Client) Region() string { return c.region }

// translate is translate plus what only the client knows: why a token renewal failed, and the
// configured wait for a 429 without Retry-After.
func (c *Client) translate(op string, err error, info callInfo) *cloud.Error {
	out := translate(op, err, info)
	var unable *golangsdk.ErrUnableToReauthenticate
	// NOTE: a call that got its 401 while another call was renewing the token is not told of the
	// renewal's failure: the SDK retries it with the token it had and hands back the plain 401.
	// While the last renewal failed, that 401 has the renewal's cause too.
	renewalFailed := out.Kind == cloud.KindUnauthorized && c.auth.lastReauthError() != nil
	if errors.As(err, &unable) || renewalFailed {
		if cause := c.auth.lastReauthError(); cause != nil {
			// Keystone down or throttling is not a refusal of our credentials.
			if t := translate(op, cause, callInfo{}); t.Kind == cloud.KindUnavailable || t.Kind == cloud.KindThrottled {
				out = t
			}
		}
		out.Message = oneLine("token renewal failed: " + out.Message)
	}
	if out.Kind == cloud.KindThrottled && out.RetryAfter <= 0 {
		out.RetryAfter = c.retryAfter
	}
	return out
}

// NewTransport is the transport to OTC when the config names none: http.DefaultTransport's, which
// keeps as many idle connections to each endpoint as the hooks make calls at once, for a shorter
// time than load balancers keep an idle connection open.
//
// NOTE: with the default two per host, the calls of concurrent syncs beyond two each opened a
// connection (and made a TLS handshake) of their own.
func NewTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = idleConnsPerHost
	t.IdleConnTimeout = 30 * time.Second
	return t
}

// idleConnsPerHost is the idle connections kept to each OTC endpoint: the hooks answer up to 8
// calls at once by default (server.Options.MaxInFlight), the shared view lists the project beside
// them.
const idleConnsPerHost = 16
