package otc

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// Defaults for Config's tunables.
const (
	// DefaultRequestTimeout caps one HTTP request to OTC, including reading its answer.
	DefaultRequestTimeout = 30 * time.Second
	// DefaultRetryAfter is the wait reported for a 429 that carries no usable Retry-After header.
	DefaultRetryAfter = 30 * time.Second
	// DefaultReauthBackoff is how long a token renewal refused by Keystone is remembered.
	DefaultReauthBackoff = 5 * time.Minute
	// DefaultReauthRetry is how long a token renewal that failed otherwise (Keystone unavailable or
	// throttling) is remembered.
	DefaultReauthRetry = 30 * time.Second
)

// ErrNoCredentials is returned by ConfigFromEnv and New when no credentials are configured at all.
var ErrNoCredentials = errors.New(
	"no OTC credentials: set OS_AUTH_URL/OS_USERNAME/OS_PASSWORD/OS_DOMAIN_NAME/OS_PROJECT_NAME (or OS_TOKEN) or OS_CLOUD")

// Config is what New needs: credentials (Keystone v3 password or token) or the name of a clouds.yaml
// cloud, and the adapter's tunables. The zero value of every tunable is a sane default.
type Config struct {
	// Cloud is the clouds.yaml entry to use (OS_CLOUD). When set, New loads the credentials through the
	// SDK's loader (clouds.yaml, secure.yaml and the process's OS_* variables) and ignores the fields
	// below down to Region; Region still overrides the cloud's region when set.
	Cloud string

	AuthURL     string // OS_AUTH_URL, e.g. https://iam.eu-de.otc.t-systems.com/v3
	Username    string // OS_USERNAME
	UserID      string // OS_USERID, OS_USER_ID
	Password    secret.Value
	DomainName  string // OS_DOMAIN_NAME, OS_USER_DOMAIN_NAME, OS_PROJECT_DOMAIN_NAME
	DomainID    string // OS_DOMAIN_ID, OS_USER_DOMAIN_ID, OS_PROJECT_DOMAIN_ID
	ProjectName string // OS_PROJECT_NAME, OS_TENANT_NAME, e.g. eu-de or eu-de_myproject
	ProjectID   string // OS_PROJECT_ID, OS_TENANT_ID
	// Token is a pre-issued Keystone token (OS_TOKEN). It cannot be renewed: once it expires, every
	// call fails with KindUnauthorized.
	Token secret.Value
	// AccessKey, SecretKey and SecurityToken are an AK/SK login (OS_ACCESS_KEY, OS_SECRET_KEY,
	// OS_SECURITY_TOKEN), e.g. the temporary credential of the log Job. They are used only when no
	// password or token is set, and need a project id or name; an AK/SK login has no token to renew,
	// and a temporary one simply expires.
	AccessKey     string
	SecretKey     secret.Value
	SecurityToken secret.Value
	// Region is OS_REGION_NAME. Empty: the part of the project name before "_".
	Region string

	// RequestTimeout caps each HTTP request, whatever the caller's context says. It bounds how long
	// an abandoned SDK call can linger after its context ended. Zero: DefaultRequestTimeout.
	RequestTimeout time.Duration
	// RetryAfter is the wait reported for a 429 without a Retry-After header. Zero: DefaultRetryAfter.
	RetryAfter time.Duration
	// ReauthBackoff is how long a token renewal that Keystone refused (password rotated, user
	// disabled) is remembered: until then a call that needs a new token fails at once with
	// KindUnauthorized and nobody logs in again, so that every object's call does not make one more
	// failed login (which locks the IAM user). Zero: DefaultReauthBackoff.
	ReauthBackoff time.Duration
	// ReauthRetry is the same for a renewal that failed for another reason (Keystone unavailable or
	// throttling): calls fail at once with that error until it passes. Zero: DefaultReauthRetry.
	ReauthRetry time.Duration
	// Transport carries the HTTP requests (proxies, TLS roots). Nil: a clone of http.DefaultTransport.
	Transport http.RoundTripper
	// Observe, if set, is called once per cloud call with the operation (e.g. "GetInstance"), the
	// result ("ok" or the error kind in lower case, e.g. "throttled") and the call's duration.
	Observe func(op, result string, d time.Duration)
}

// envVars lists the OS_* variables ConfigFromEnv reads, in the SDK's order of precedence
// (openstack.AuthOptionsFromEnv); the first non-empty one wins.
var envVars = struct {
	authURL, username, userID, password, domainName, domainID, projectName, projectID, token, region []string
	accessKey, secretKey, securityToken                                                              []string
}{
	authURL:     []string{"OS_AUTH_URL"},
	username:    []string{"OS_USERNAME"},
	userID:      []string{"OS_USERID", "OS_USER_ID"},
	password:    []string{"OS_PASSWORD"},
	domainName:  []string{"OS_DOMAIN_NAME", "OS_USER_DOMAIN_NAME", "OS_PROJECT_DOMAIN_NAME"},
	domainID:    []string{"OS_DOMAIN_ID", "OS_USER_DOMAIN_ID", "OS_PROJECT_DOMAIN_ID"},
	projectName: []string{"OS_PROJECT_NAME", "OS_TENANT_NAME"},
	projectID:   []string{"OS_PROJECT_ID", "OS_TENANT_ID"},
	token:       []string{"OS_TOKEN", "OS_TOKEN_ID"},
	region:      []string{"OS_REGION_NAME", "OS_REGION_ID"},
	// The SDK's loader (openstack/loader.go) reads these for AK/SK; its AWS_* names are left out on
	// purpose: they would silently take precedence.
	accessKey:     []string{"OS_ACCESS_KEY", "OS_ACCESS_KEY_ID", "OS_AK"},
	secretKey:     []string{"OS_SECRET_KEY", "OS_ACCESS_KEY_SECRET", "OS_SK"},
	securityToken: []string{"OS_SECURITY_TOKEN", "OS_AKSK_SECURITY_TOKEN", "OS_ST"},
}

// ConfigFromEnv reads the credentials from OS_* variables through getenv (os.Getenv in production).
// With OS_CLOUD set, it only records the cloud's name and New reads clouds.yaml. It never falls back
// to anything: without credentials it returns ErrNoCredentials, with incomplete ones a clear error.
//
// NOTE: we read the variables ourselves instead of calling openstack.AuthOptionsFromEnv, which reads
// os.Getenv directly; the embedded simulator mode hands us its OS_* set as a map, not as the process
// environment. The variable names and their precedence are the SDK's.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	first := func(keys []string) string {
		for _, k := range keys {
			if v := strings.TrimSpace(getenv(k)); v != "" {
				return v
			}
		}
		return ""
	}
	cfg := Config{
		Cloud:       first([]string{"OS_CLOUD"}),
		AuthURL:     first(envVars.authURL),
		Username:    first(envVars.username),
		UserID:      first(envVars.userID),
		Password:    secret.New(getenv("OS_PASSWORD")), // not trimmed: a password may end in a space
		DomainName:  first(envVars.domainName),
		DomainID:    first(envVars.domainID),
		ProjectName: first(envVars.projectName),
		ProjectID:   first(envVars.projectID),
		Token:       secret.New(first(envVars.token)),
		Region:      first(envVars.region),

		AccessKey:     first(envVars.accessKey),
		SecretKey:     secret.New(first(envVars.secretKey)),
		SecurityToken: secret.New(first(envVars.securityToken)),
	}
	return cfg, cfg.validate()
}

// validate checks that the credentials are complete enough for a project-scoped Keystone login.
func (c Config) validate() error {
	if c.Cloud != "" {
		return nil // clouds.yaml: checked when New loads it
	}
	if c.AuthURL == "" && c.Username == "" && c.UserID == "" && c.Password.Empty() && c.Token.Empty() && !c.aksk() {
		return ErrNoCredentials
	}
	var missing []string
	if c.AuthURL == "" {
		missing = append(missing, "OS_AUTH_URL")
	}
	switch {
	case c.aksk():
		if c.SecretKey.Empty() {
			missing = append(missing, "OS_SECRET_KEY")
		}
	case c.Token.Empty():
		if c.Username == "" && c.UserID == "" {
			missing = append(missing, "OS_USERNAME (or OS_TOKEN)")
		}
		if c.Password.Empty() {
			missing = append(missing, "OS_PASSWORD")
		}
		if c.Username != "" && c.DomainName == "" && c.DomainID == "" {
			missing = append(missing, "OS_DOMAIN_NAME (or OS_DOMAIN_ID)")
		}
	}
	// NOTE: RDS lives in a project's catalog; a domain-scoped token has no rdsv3 endpoint.
	if c.ProjectName == "" && c.ProjectID == "" {
		missing = append(missing, "OS_PROJECT_NAME (or OS_PROJECT_ID)")
	}
	if len(missing) > 0 {
		return fmt.Errorf("incomplete OTC credentials: %s not set", strings.Join(missing, ", "))
	}
	return nil
}

// aksk reports whether the config is an AK/SK login. A password or token wins, as it did before
// AK/SK logins were read at all.
func (c Config) aksk() bool { return c.AccessKey != "" && c.Password.Empty() && c.Token.Empty() }

func (c Config) requestTimeout() time.Duration {
	if c.RequestTimeout > 0 {
		return c.RequestTimeout
	}
	return DefaultRequestTimeout
}

func (c Config) retryAfter() time.Duration {
	if c.RetryAfter > 0 {
		return c.RetryAfter
	}
	return DefaultRetryAfter
}

// StableSecret returns a secret that stays the same as long as these credentials do: the password,
// or the secret key of a permanent AK/SK. It is empty for a token or temporary credentials, which
// change by themselves. Callers use it as key material, never as a credential.
func (c Config) StableSecret() secret.Value {
	switch {
	case !c.Password.Empty():
		return secret.New("password\x00" + c.Username + c.UserID + "\x00" + c.Password.Reveal())
	case !c.SecretKey.Empty() && c.SecurityToken.Empty():
		return secret.New("aksk\x00" + c.AccessKey + "\x00" + c.SecretKey.Reveal())
	}
	return secret.Value{}
}

func (c Config) reauthBackoff() time.Duration {
	if c.ReauthBackoff > 0 {
		return c.ReauthBackoff
	}
	return DefaultReauthBackoff
}

func (c Config) reauthRetry() time.Duration {
	if c.ReauthRetry > 0 {
		return c.ReauthRetry
	}
	return DefaultReauthRetry
}
