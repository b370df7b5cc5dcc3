package otc

import (
	"os"
	"path/filepath"
	"testing"

	golangsdk "github.com/opentelekomcloud/gophertelekomcloud"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestConfigFromEnv(t *testing.T) {
	full := map[string]string{
		"OS_AUTH_URL":     "https://iam.eu-de.otc.t-systems.com/v3",
		"OS_USERNAME":     "robot",
		"OS_PASSWORD":     "s3cret ",
		"OS_DOMAIN_NAME":  "OTC-EU-DE-00000000001000000001",
		"OS_PROJECT_NAME": "eu-de_rds",
	}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range full {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	cases := map[string]struct {
		reason  string
		env     map[string]string
		want    Config
		wantErr string
	}{
		"password": {
			env: full,
			want: Config{
				AuthURL: "https://iam.eu-de.otc.t-systems.com/v3", Username: "robot", Password: secret.New("s3cret "),
				DomainName: "OTC-EU-DE-00000000001000000001", ProjectName: "eu-de_rds",
			},
		},
		"precedence": {
			reason: "the first variable of a group wins, as in the SDK",
			env:    with(map[string]string{"OS_USER_DOMAIN_NAME": "other", "OS_TENANT_ID": "t", "OS_PROJECT_ID": "p", "OS_REGION_NAME": "eu-nl"}),
			want: Config{
				AuthURL: "https://iam.eu-de.otc.t-systems.com/v3", Username: "robot", Password: secret.New("s3cret "),
				DomainName: "OTC-EU-DE-00000000001000000001", ProjectName: "eu-de_rds", ProjectID: "p", Region: "eu-nl",
			},
		},
		"token": {
			env:  map[string]string{"OS_AUTH_URL": "https://iam/v3", "OS_TOKEN": "tok", "OS_PROJECT_ID": "p"},
			want: Config{AuthURL: "https://iam/v3", Token: secret.New("tok"), ProjectID: "p"},
		},
		"clouds.yaml": {
			reason: "OS_CLOUD defers to the clouds.yaml loader in New",
			env:    map[string]string{"OS_CLOUD": "otc-rds"},
			want:   Config{Cloud: "otc-rds"},
		},
		"nothing": {
			env:     map[string]string{"HOME": "/root"},
			wantErr: ErrNoCredentials.Error(),
		},
		"no password": {
			env:     with(map[string]string{"OS_PASSWORD": ""}),
			wantErr: "incomplete OTC credentials: OS_PASSWORD not set",
		},
		"no domain": {
			env:     with(map[string]string{"OS_DOMAIN_NAME": ""}),
			wantErr: "incomplete OTC credentials: OS_DOMAIN_NAME (or OS_DOMAIN_ID) not set",
		},
		"no project": {
			reason:  "a domain-scoped token has no RDS endpoint",
			env:     with(map[string]string{"OS_PROJECT_NAME": ""}),
			wantErr: "incomplete OTC credentials: OS_PROJECT_NAME (or OS_PROJECT_ID) not set",
		},
		"no auth URL": {
			env:     with(map[string]string{"OS_AUTH_URL": ""}),
			wantErr: "incomplete OTC credentials: OS_AUTH_URL not set",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ConfigFromEnv(envOf(tc.env))
			if tc.wantErr != "" {
				require.EqualError(t, err, tc.wantErr, tc.reason)
				return
			}
			require.NoError(t, err, tc.reason)
			assert.Equal(t, tc.want, got, tc.reason)
		})
	}
}

func TestAuthOptions(t *testing.T) {
	cfg := Config{AuthURL: "https://iam/v3", Username: "u", Password: secret.New("p"), DomainName: "d", ProjectName: "eu-de_x"}
	ao, region, err := authOptions(cfg)
	require.NoError(t, err)
	assert.Equal(t, golangsdk.AuthOptions{IdentityEndpoint: "https://iam/v3", Username: "u", Password: "p", DomainName: "d", TenantName: "eu-de_x"}, ao)
	assert.False(t, ao.AllowReauth, "renewal is ours, not the SDK's")
	assert.Empty(t, region, "derived from the project after login")

	_, _, err = authOptions(Config{})
	assert.ErrorIs(t, err, ErrNoCredentials)
}

// cloudsYAML writes a clouds.yaml and points the SDK's loader at it. The loader reads the process's
// environment, so these tests cannot run in parallel.
func cloudsYAML(t *testing.T, content string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "clouds.yaml")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	for _, k := range []string{"OS_AUTH_URL", "OS_USERNAME", "OS_PASSWORD", "OS_PROJECT_NAME", "OS_PROJECT_ID", "OS_REGION_NAME",
		"OS_DOMAIN_NAME", "OS_TOKEN", "AWS_ACCESS_KEY_ID", "OS_ACCESS_KEY", "OS_CLOUD_NAME"} {
		t.Setenv(k, "")
	}
	t.Setenv("OS_CLIENT_CONFIG_FILE", path)
	t.Setenv("OS_CLIENT_SECURE_FILE", filepath.Join(dir, "none.yaml"))
	t.Setenv("OS_CLIENT_VENDOR_FILE", filepath.Join(dir, "none.yaml"))
}

func TestCloudAuthOptions(t *testing.T) {
	t.Run("password", func(t *testing.T) {
		cloudsYAML(t, `clouds:
  otc-rds:
    auth:
      auth_url: https://iam.eu-de.otc.t-systems.com/v3
      username: robot
      password: pw
      project_id: 0391e4486e864c26be5654c522f440f2
      project_domain_id: dddd
      user_domain_name: OTC-EU-DE-1
    region_name: eu-de
`)
		ao, region, err := authOptions(Config{Cloud: "otc-rds"})
		require.NoError(t, err)
		assert.Equal(t, golangsdk.AuthOptions{
			IdentityEndpoint: "https://iam.eu-de.otc.t-systems.com/v3", Username: "robot", Password: "pw",
			DomainName: "OTC-EU-DE-1", DomainID: "dddd",
			// NOTE: the SDK's AuthOptionsFromInfo would put project_domain_id here.
			TenantID: "0391e4486e864c26be5654c522f440f2",
		}, ao)
		assert.Equal(t, "eu-de", region)
	})
	t.Run("region override", func(t *testing.T) {
		cloudsYAML(t, `clouds:
  c:
    auth: {auth_url: "https://iam/v3", username: u, password: p, project_name: eu-nl_x, user_domain_name: d}
`)
		_, region, err := authOptions(Config{Cloud: "c"})
		require.NoError(t, err)
		assert.Equal(t, "eu-nl", region, "from the project name")
		_, region, err = authOptions(Config{Cloud: "c", Region: "eu-de"})
		require.NoError(t, err)
		assert.Equal(t, "eu-de", region)
	})
	t.Run("aksk refused", func(t *testing.T) {
		cloudsYAML(t, `clouds:
  c:
    auth: {auth_url: "https://iam/v3", ak: AK, sk: SK, project_name: eu-de}
`)
		_, _, err := authOptions(Config{Cloud: "c"})
		assert.ErrorContains(t, err, "AK/SK credentials are not supported")
	})
	t.Run("unknown cloud", func(t *testing.T) {
		cloudsYAML(t, "clouds:\n  c:\n    auth: {auth_url: \"https://iam/v3\", username: u, password: p}\n")
		_, _, err := authOptions(Config{Cloud: "nope"})
		assert.ErrorIs(t, err, ErrNoCredentials)
	})
}
