package otcsim

import (
	"io"
	"net/http"
	"strings"
	"testing"

	golangsdk "github.com/opentelekomcloud/gophertelekomcloud"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAKSKSignatureVerified: an AK/SK-signed request is served only as it was signed, as API
// Gateway serves it: a signed header, the query or the body changed after signing, or a wrong
// secret key, answers 401 APIGW.0301; a header added after signing is not part of the signature.
func TestAKSKSignatureVerified(t *testing.T) {
	e := newEnv(t, Options{AccessKey: "PERMANENTAK", SecretKey: "permanent-sk"})
	instancesURL := e.srv.URL + "/rds/v3/" + DefaultProjectID + "/instances"
	cases := map[string]struct {
		reason       string
		method, body string
		secret       string
		after        func(*http.Request)
		refused      bool
	}{
		"as signed":               {reason: "the SDK's signature verifies", method: http.MethodGet},
		"a POST as signed":        {reason: "the body's hash is signed", method: http.MethodPost, body: `{"name":"x"}`},
		"a header added":          {reason: "X-Project-Id and X-Security-Token come after signing", method: http.MethodGet, after: func(r *http.Request) { r.Header.Set("X-Project-Id", DefaultProjectID) }},
		"a signed header removed": {reason: "the signature names it", method: http.MethodGet, after: func(r *http.Request) { r.Header.Del("X-Call") }, refused: true},
		"a signed header changed": {method: http.MethodGet, after: func(r *http.Request) { r.Header.Set("X-Call", "other") }, refused: true},
		"the query changed":       {method: http.MethodGet, after: func(r *http.Request) { r.URL.RawQuery = "limit=99" }, refused: true},
		"the body changed": {method: http.MethodPost, body: `{"name":"x"}`, refused: true, after: func(r *http.Request) {
			r.Body, r.ContentLength = io.NopCloser(strings.NewReader(`{"name":"y"}`)), 12
		}},
		"another secret key": {method: http.MethodGet, secret: "not-the-secret", refused: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			req, err := http.NewRequest(tc.method, instancesURL+"?limit=10", body)
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Call", "1")
			secret := tc.secret
			if secret == "" {
				secret = "permanent-sk"
			}
			golangsdk.Sign(req, golangsdk.SignOptions{AccessKey: "PERMANENTAK", SecretKey: secret})
			if tc.after != nil {
				tc.after(req)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			answer, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			if tc.refused {
				assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%s: %s", tc.reason, answer)
				assert.Contains(t, string(answer), "APIGW.0301")
			} else {
				assert.NotEqual(t, http.StatusUnauthorized, resp.StatusCode, "%s: %s", tc.reason, answer)
			}
		})
	}
}
