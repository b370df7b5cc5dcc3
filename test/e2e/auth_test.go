package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/hookauth"
	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	"github.com/mcsps/rds-lambda-controller/server"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
)

// The attacks of issue #17 that needed no more than a pod anywhere in the cluster: with no
// enforced NetworkPolicy, a forged hook call copied or deleted another namespace's database. The
// hooks now answer only Metacontroller's token over TLS.

// bearer adds a token to every request, as Metacontroller's webhook authorization does.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// deployedHooks serves the world's cloud as the Deployment does: HTTPS with a generated
// certificate, answering only the generated token. It returns the URL, Metacontroller's client
// (the CA bundle and the token) and an attacker's client (the CA bundle, so TLS is no obstacle,
// and no token).
func (w *world) deployedHooks(t *testing.T) (url string, metacontroller, attacker *http.Client) {
	t.Helper()
	dir := t.TempDir()
	token := hookauth.NewToken()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "token"), []byte(token), 0o600))
	tokens, err := hookauth.NewTokens(filepath.Join(dir, "token"), nil)
	require.NoError(t, err)
	hooks := httptest.NewUnstartedServer(server.New(server.Options{
		Reconciler: reconcile.New(reconcile.Config{Cloud: w.cloud, Now: w.clock.Now, CallTimeout: 4 * time.Second}),
		Logger:     slog.New(slog.NewJSONHandler(w.logs, nil)),
		Auth:       tokens,
	}))
	hooks.StartTLS()
	t.Cleanup(hooks.Close)
	pool := x509.NewCertPool()
	pool.AddCert(hooks.Certificate())
	transport := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	return hooks.URL, &http.Client{Transport: bearer{token: token, next: transport}}, &http.Client{Transport: transport}
}

// TestAttackForgedHookCallsFromAnyPod: a pod that reaches the hooks posts a /sync for a made-up
// object in its own namespace with restorefrom naming rds1's instance (attack 1: a copy with a
// password it chose), and a /sync and /finalize that adopt rds1's instance with skipfinalbackup
// (attack 2: the instance deleted), without Metacontroller's token or with one it made up. Every
// call gets 401; OTC sees not one call; the victim's instance is untouched; the answers tell
// nothing (attack 3). Metacontroller's own calls are still served.
func TestAttackForgedHookCallsFromAnyPod(t *testing.T) {
	w := newWorld(t)
	id := w.victim()
	victim, _ := w.sim.Instance(id)
	w.clock.Advance(time.Hour)
	url, mcClient, attacker := w.deployedHooks(t)
	w.sim.ResetCounters()

	forged := []*metacontroller{
		w.tenant("evil", "copy", "uid-evil-1", func(spec map[string]any) {
			spec["password"] = "Evil-Passw0rd"
			spec["restorefrom"] = map[string]any{"instance": id, "restoretime": w.clock.Now().Add(-10 * time.Minute).UTC().Format(time.RFC3339)}
		}),
		w.tenant("rds1", "made-up", "uid-evil-2", func(spec map[string]any) {
			spec["instanceid"], spec["skipfinalbackup"], spec["password"] = id, true, "Evil-Passw0rd"
		}),
	}
	made := &http.Client{Transport: bearer{token: hookauth.NewToken(), next: attacker.Transport}}
	for _, client := range []*http.Client{attacker, made} {
		for _, mc := range forged {
			for _, finalize := range []bool{false, true} {
				if finalize {
					mc.obj.Delete(t0)
				}
				x, err := mc.obj.Post(client, url)
				require.NoError(t, err)
				assert.Equal(t, http.StatusUnauthorized, x.Code, "%s", mc.obj.Path())
				assert.NotContains(t, string(x.Body), id)
				assert.NotContains(t, string(x.Body), victim.Name)
			}
		}
	}
	assert.Zero(t, w.sim.Calls(otcsim.OpRestoreToNew), "no copy")
	assert.Zero(t, w.sim.MutatingCalls(), "nothing changed in OTC")
	assert.Empty(t, w.sim.CallCounts(), "not even a read")
	after, ok := w.sim.Instance(id)
	require.True(t, ok, "the victim's instance is still there")
	assert.Equal(t, victim, after)
	assert.Len(t, w.sim.Instances(), 1)
	assert.Contains(t, w.logs.String(), "hook call refused: no valid credential", "logged (at most once a second)")

	// Metacontroller itself is served by the same hooks.
	owner := w.tenant("rds1", "my-rds-single", "uid-victim", nil)
	x, err := owner.obj.Post(mcClient, url)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, x.Code, string(x.Body))
	assert.Equal(t, id, x.Answer.Status.ID)
}
