package otc

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	golangsdk "github.com/opentelekomcloud/gophertelekomcloud"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// loginOptions is what the authenticator logs in with: a Keystone login (authOptions) or an AK/SK
// one (akskOptions).
func loginOptions(cfg Config) (golangsdk.AuthOptionsProvider, string, error) {
	if cfg.Cloud == "" && cfg.aksk() {
		return akskOptions(cfg)
	}
	return authOptions(cfg)
}

// akskOptions turns an AK/SK config into the SDK's options and the region to use.
//
// NOTE: the SDK ignores AKSKAuthOptions.Region and derives the region from ProjectName or the
// process's OS_REGION_NAME; New uses cfg.Region itself, so the SDK's guess only matters without it.
func akskOptions(cfg Config) (golangsdk.AuthOptionsProvider, string, error) {
	if err := cfg.validate(); err != nil {
		return nil, "", err
	}
	return golangsdk.AKSKAuthOptions{
		IdentityEndpoint: cfg.AuthURL,
		ProjectId:        cfg.ProjectID,
		ProjectName:      cfg.ProjectName,
		Domain:           cfg.DomainName,
		DomainID:         cfg.DomainID,
		AccessKey:        cfg.AccessKey,
		SecretKey:        cfg.SecretKey.Reveal(),
		SecurityToken:    cfg.SecurityToken.Reveal(),
		Region:           cfg.Region,
	}, cfg.Region, nil
}

// authOptions turns the config into the SDK's Keystone v3 options and the region to use.
func authOptions(cfg Config) (golangsdk.AuthOptions, string, error) {
	if cfg.Cloud != "" {
		return cloudAuthOptions(cfg)
	}
	if err := cfg.validate(); err != nil {
		return golangsdk.AuthOptions{}, "", err
	}
	ao := golangsdk.AuthOptions{
		IdentityEndpoint: cfg.AuthURL,
		Username:         cfg.Username,
		UserID:           cfg.UserID,
		Password:         cfg.Password.Reveal(),
		DomainName:       cfg.DomainName,
		DomainID:         cfg.DomainID,
		TenantName:       cfg.ProjectName,
		TenantID:         cfg.ProjectID,
		TokenID:          cfg.Token.Reveal(),
	}
	return ao, cfg.Region, nil
}

// cloudAuthOptions loads the named cloud from clouds.yaml (and secure.yaml, and the process's OS_*
// variables, which the SDK's loader merges in).
//
// NOTE: we build the AuthOptions from the loaded AuthInfo ourselves instead of calling
// openstack.AuthOptionsFromInfo, which overwrites ProjectID with PROJECT_DOMAIN_ID/USER_DOMAIN_ID
// (an SDK bug) and drops AllowReauth. AK/SK credentials are refused rather than silently ignored.
func cloudAuthOptions(cfg Config) (golangsdk.AuthOptions, string, error) {
	c, err := openstack.NewEnv("OS_").Cloud(cfg.Cloud)
	if err != nil {
		return golangsdk.AuthOptions{}, "", fmt.Errorf("OS_CLOUD=%s: %w", cfg.Cloud, err)
	}
	in := c.AuthInfo
	authType := strings.ToLower(string(c.AuthType))
	if strings.Contains(authType, "aksk") || (in.Password == "" && in.Token == "" && in.AccessKey != "") {
		return golangsdk.AuthOptions{}, "", fmt.Errorf("OS_CLOUD=%s: AK/SK credentials are not supported; use a password or a token", cfg.Cloud)
	}
	ao := golangsdk.AuthOptions{
		IdentityEndpoint: in.AuthURL,
		Username:         in.Username,
		UserID:           in.UserID,
		Password:         in.Password,
		DomainName:       firstNonEmpty(in.UserDomainName, in.DomainName, in.ProjectDomainName),
		DomainID:         firstNonEmpty(in.UserDomainID, in.DomainID, in.ProjectDomainID),
		TenantName:       in.ProjectName,
		TenantID:         in.ProjectID,
		TokenID:          in.Token,
	}
	if strings.Contains(authType, "token") {
		ao.Username, ao.UserID, ao.Password, ao.DomainName, ao.DomainID = "", "", "", "", ""
	}
	if ao.IdentityEndpoint == "" || (ao.TokenID == "" && ao.Password == "") {
		return golangsdk.AuthOptions{}, "", fmt.Errorf("OS_CLOUD=%s: %w", cfg.Cloud, ErrNoCredentials)
	}
	return ao, firstNonEmpty(cfg.Region, c.RegionName), nil
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// authenticator logs in to Keystone and renews the shared provider's token.
type authenticator struct {
	opts       golangsdk.AuthOptionsProvider // AuthOptions (AllowReauth stays false: see reauth) or AKSKAuthOptions
	httpClient http.Client
	observe    func(op, result string, d time.Duration)
	// failedBackoff is how long a renewal that failed with Keystone unavailable or throttling is
	// remembered, refusedBackoff the same for any other failure (credentials refused).
	refusedBackoff, failedBackoff time.Duration
	now                           func() time.Time

	mu sync.Mutex
	// lastErr is the error of the last renewal, nil if it succeeded. The SDK reports a failed renewal
	// as ErrUnableToReauthenticate carrying only the original 401; this tells us why it failed.
	lastErr error
	// retryAt is when a renewal may be tried again after lastErr.
	retryAt time.Time
}

// newProvider returns a logged-in provider that uses our HTTP client and never sleeps on a 429.
func (a *authenticator) newProvider() (*golangsdk.ProviderClient, error) {
	p, err := openstack.NewClient(a.opts.GetIdentityEndpoint())
	if err != nil {
		return nil, fmt.Errorf("parse auth URL: %w", err)
	}
	p.HTTPClient = a.httpClient
	// NOTE: the SDK sleeps BackoffRetryTimeout (60 s) and retries on every 429 while
	// *MaxBackoffRetries > 0 (provider_client.go Request); with 0 it returns ErrDefault429 at once.
	// Both are set here because Request otherwise writes its defaults into the shared provider on
	// every call, a data race between concurrent calls.
	noRetries, noBackoff := 0, time.Duration(0)
	p.MaxBackoffRetries, p.BackoffRetryTimeout = &noRetries, &noBackoff
	if err := openstack.Authenticate(p, a.opts); err != nil {
		return nil, err
	}
	// NOTE: token auth (OS_TOKEN) against a Keystone that does not echo X-Subject-Token "succeeds"
	// with an empty token; every later call would then be anonymous.
	if !a.aksk() && p.TokenID == "" {
		return nil, errors.New("keystone returned no token")
	}
	return p, nil
}

// login makes the first provider and installs our token renewal on it.
func (a *authenticator) login() (*golangsdk.ProviderClient, error) {
	start := time.Now()
	p, err := a.newProvider()
	a.report("Authenticate", err, time.Since(start))
	if err != nil {
		return nil, err
	}
	if a.aksk() {
		return p, nil // every request is signed: there is no token to renew
	}
	p.ReauthFunc = func() error { return a.reauth(p) }
	return p, nil
}

// reauth renews p's token after a 401.
//
// NOTE: we do not use the SDK's own renewal (AllowReauth=true). It logs in again *through p*, while
// p's token lock is held (reauthenticateAndRetry); if that login gets a 401 (password rotated, user
// disabled), the SDK recurses into reauthenticateAndRetry and blocks on the same lock for ever, and
// with it every later call (seen against a fake Keystone with v0.9.8). It also rewrites p.ProjectID and
// p.EndpointLocator while other goroutines read them. Instead we log in on a fresh provider without
// a ReauthFunc and copy only its token. The SDK calls this holding p's token lock, so the token is
// written directly (SetToken would deadlock); concurrent 401s wait on that lock and retry with the
// new token without logging in again.
//
// A failed renewal is remembered: until retryAt, reauth fails at once with the same error. Without
// that, every call after a password rotation would log in again (the token lock only serialises
// the logins, the token stays the refused one), and repeated failed logins lock the IAM user.
func (a *authenticator) reauth(p *golangsdk.ProviderClient) error {
	a.mu.Lock()
	if a.lastErr != nil && a.now().Before(a.retryAt) {
		err := a.lastErr
		a.mu.Unlock()
		return err
	}
	a.mu.Unlock()

	start := time.Now()
	fresh, err := a.newProvider()
	a.report("Reauthenticate", err, time.Since(start))
	a.mu.Lock()
	defer a.mu.Unlock()
	a.lastErr = err
	if err != nil {
		// As Client.translate: only Keystone down or throttling is not a refusal of our credentials.
		wait := a.refusedBackoff
		if k := translate("Reauthenticate", err, callInfo{}).Kind; k == cloud.KindUnavailable || k == cloud.KindThrottled {
			wait = a.failedBackoff
		}
		a.retryAt = a.now().Add(wait)
		return err
	}
	p.TokenID = fresh.TokenID
	return nil
}

func (a *authenticator) aksk() bool {
	_, ok := a.opts.(golangsdk.AKSKAuthOptions)
	return ok
}

// lastReauthError returns why the last renewal failed, nil if it succeeded.
func (a *authenticator) lastReauthError() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.lastErr
}

func (a *authenticator) report(op string, err error, d time.Duration) {
	if a.observe == nil {
		return
	}
	result := "ok"
	if err != nil {
		result = resultLabel(translate(op, err, callInfo{}))
	}
	a.observe(op, result, d)
}
