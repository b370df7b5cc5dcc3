package otc

import (
	"testing"

	golangsdk "github.com/opentelekomcloud/gophertelekomcloud"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConfigFromEnvAKSK(t *testing.T) {
	cases := map[string]struct {
		reason  string
		env     map[string]string
		wantErr string
	}{
		"complete": {
			reason: "the log Job's Secret: keys, token and where to use them",
			env: map[string]string{"OS_AUTH_URL": "https://iam/v3", "OS_PROJECT_ID": "p1", "OS_REGION_NAME": "eu-de",
				"OS_ACCESS_KEY": "AK", "OS_SECRET_KEY": "SK", "OS_SECURITY_TOKEN": "ST"},
		},
		"no secret key": {
			reason:  "an access key alone cannot sign",
			env:     map[string]string{"OS_AUTH_URL": "https://iam/v3", "OS_PROJECT_ID": "p1", "OS_ACCESS_KEY": "AK"},
			wantErr: "OS_SECRET_KEY",
		},
		"password wins": {
			reason: "a deployment that also carries an AK logs in as before",
			env: map[string]string{"OS_AUTH_URL": "https://iam/v3", "OS_USERNAME": "u", "OS_PASSWORD": "p", "OS_DOMAIN_NAME": "d",
				"OS_PROJECT_NAME": "eu-de", "OS_ACCESS_KEY": "AK"},
		},
		"no project": {
			reason:  "RDS lives in a project",
			env:     map[string]string{"OS_AUTH_URL": "https://iam/v3", "OS_ACCESS_KEY": "AK", "OS_SECRET_KEY": "SK"},
			wantErr: "OS_PROJECT_NAME (or OS_PROJECT_ID)",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cfg, err := ConfigFromEnv(func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr, tc.reason)
				return
			}
			require.NoError(t, err, tc.reason)
			opts, region, err := loginOptions(cfg)
			require.NoError(t, err, tc.reason)
			if tc.env["OS_PASSWORD"] != "" {
				assert.IsType(t, golangsdk.AuthOptions{}, opts, tc.reason)
				return
			}
			assert.Equal(t, "eu-de", region)
			assert.Equal(t, golangsdk.AKSKAuthOptions{IdentityEndpoint: "https://iam/v3", ProjectId: "p1", Region: "eu-de",
				AccessKey: "AK", SecretKey: "SK", SecurityToken: "ST"}, opts, tc.reason)
		})
	}
}
