package main

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/otc"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
	"github.com/mcsps/rds-lambda-controller/test/testutil"
)

// TestJobReachesOnlyItsOwnLogs replays issue #10's first attack against today's log Job: with
// everything the Job is given (its Secret's data and its arguments), it reads its own instance's
// logs and nothing else. It cannot read another instance's logs or any instance's details, cannot
// delete anything, reads nothing once its capability expired, and its token is no OTC credential.
func TestJobReachesOnlyItsOwnLogs(t *testing.T) {
	e := newJobEnv(t)
	require.NoError(t, e.sim.AddErrorLog(e.id, t0.Add(-10*time.Minute), "ERROR", "ours"))
	require.NoError(t, e.sim.AddErrorLog(e.other, t0.Add(-10*time.Minute), "ERROR", "theirs"))
	token := e.env["RDS_LOGS_TOKEN"]
	require.NotEmpty(t, token)
	assert.ElementsMatch(t, []string{"RDS_LOGS_TOKEN", "RDS_LOGS_URL"}, slices.Collect(maps.Keys(e.job.Env)),
		"the Job's Secret holds the capability and the URL, no OTC credential")
	assert.Equal(t, []string{"--instance=" + e.id, "--since=6h", "--lines=2000", "--types=error,slow"}, e.job.Args)

	t.Run("its own logs", func(t *testing.T) {
		out, err := e.runJob(t, e.job.Args...)
		require.NoError(t, err)
		assert.Contains(t, out, "== error log of instance "+e.id)
		assert.Contains(t, out, "ours")
		assert.NotContains(t, out, "theirs")
	})

	t.Run("another instance's logs", func(t *testing.T) {
		before := e.sim.CallCounts()
		_, err := e.runJob(t, "--instance", e.other, "--types", "error")
		requireOneLine(t, err, "the hooks refused the request: the capability is for another instance")

		// The bytes of the token changed (an attempt to make it name another instance).
		tampered := []byte(token)
		i := len(tampered) / 2
		tampered[i] = map[bool]byte{true: 'B', false: 'A'}[tampered[i] == 'A']
		e.env["RDS_LOGS_TOKEN"] = string(tampered)
		_, err = e.runJob(t, "--types", "error")
		requireOneLine(t, err, "the hooks refused the capability: the capability is not valid")

		// A token for the other instance sealed with another key (another controller's, or one
		// an attacker runs), presented to these hooks.
		r2 := reconcile.New(reconcile.Config{Cloud: testutil.Login(t, e.srv, nil), Now: e.clock.Now, JobImage: "img:1", PasswordKey: secret.New("another key")})
		forged := testutil.LogJob(t, r2, testutil.AdoptingRds("evil", "thief", e.other, jobRequest))
		e.env["RDS_LOGS_TOKEN"] = forged.Env["RDS_LOGS_TOKEN"]
		_, err = e.runJob(t, "--instance", e.other, "--types", "error")
		requireOneLine(t, err, "the hooks refused the capability: the capability is not valid")
		e.env["RDS_LOGS_TOKEN"] = token

		after := e.sim.CallCounts()
		assert.Equal(t, before[otcsim.OpListErrorLogs], after[otcsim.OpListErrorLogs], "no log was read")
	})

	t.Run("no endpoint reads details or changes anything", func(t *testing.T) {
		e.sim.ResetCounters()
		body := `{"instance":"` + e.id + `","type":"error"}`
		for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			for _, path := range []string{
				"/", "/v1/logs", "/v1/logs/" + e.id, "/v1/instances/" + e.id, "/v1/instances",
				"/rds/v3/" + otcsim.DefaultProjectID + "/instances", "/rds/v3/" + otcsim.DefaultProjectID + "/instances/" + e.other,
				"/v3/auth/tokens", "/sync", "/finalize", "/customize", "/metrics", "/healthz",
			} {
				if method == http.MethodPost && path == "/v1/logs" {
					continue // the one read
				}
				code := e.post(t, method, path, token, body)
				assert.Contains(t, []int{http.StatusNotFound, http.StatusMethodNotAllowed}, code, "%s %s on the logs port", method, path)
			}
		}
		for name, body := range map[string]string{
			"an action":         `{"instance":"` + e.id + `","type":"error","action":"delete"}`,
			"details":           `{"instance":"` + e.id + `","type":"details"}`,
			"another log":       `{"instance":"` + e.id + `","type":"general"}`,
			"not a log request": `[1,2,3]`,
		} {
			assert.Equal(t, http.StatusBadRequest, e.post(t, http.MethodPost, "/v1/logs", token, body), name)
		}
		assert.Equal(t, map[string]int{}, e.sim.CallCounts(), "no OTC call at all")
		assert.Zero(t, e.sim.MutatingCalls())
		_, ok := e.sim.Instance(e.other)
		assert.True(t, ok, "the other instance is still there")
	})

	t.Run("the token is no OTC credential", func(t *testing.T) {
		e.sim.ResetCounters()
		simEnv := e.srv.Env()
		base := map[string]string{"OS_AUTH_URL": simEnv["OS_AUTH_URL"], "OS_PROJECT_ID": otcsim.DefaultProjectID, "OS_REGION_NAME": simEnv["OS_REGION_NAME"]}
		logins := map[string]map[string]string{
			"as a token":  {"OS_TOKEN": token},
			"as an AK/SK": {"OS_ACCESS_KEY": token[:20], "OS_SECRET_KEY": token},
		}
		for name, creds := range logins {
			env := maps.Clone(base)
			maps.Copy(env, creds)
			cfg, err := otc.ConfigFromEnv(func(k string) string { return env[k] })
			require.NoError(t, err, name)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			client, err := otc.New(ctx, cfg)
			if err == nil {
				_, _, err = client.ListErrorLogs(ctx, e.other, cloud.LogQuery{Start: t0.Add(-time.Hour), End: t0})
				if err == nil {
					_, err = client.DeleteInstance(ctx, e.other)
				}
			}
			cancel()
			assert.ErrorIs(t, err, cloud.ErrUnauthorized, "%s: OTC refuses the capability", name)
		}
		rds := e.srv.URL + "/rds/v3/" + otcsim.DefaultProjectID + "/instances"
		for method, url := range map[string]string{http.MethodGet: rds + "?id=" + e.other, http.MethodDelete: rds + "/" + e.other} {
			req, err := http.NewRequest(method, url, nil)
			require.NoError(t, err)
			req.Header.Set("X-Auth-Token", token)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%s with the token as X-Auth-Token", method)
		}
		assert.Zero(t, e.sim.Calls(otcsim.OpListErrorLogs))
		inst, ok := e.sim.Instance(e.other)
		require.True(t, ok, "the other instance is still there")
		assert.Equal(t, "ACTIVE", inst.Status, "and not being deleted")
	})

	t.Run("after expiry it reads nothing", func(t *testing.T) {
		e.sim.ResetCounters()
		e.clock.Advance(15 * time.Minute)
		out, err := e.runJob(t, e.job.Args...)
		requireOneLine(t, err, "the hooks refused the capability: the capability expired at 2026-05-01T10:15:00Z")
		assert.Empty(t, out)
		assert.Equal(t, map[string]int{}, e.sim.CallCounts(), "no OTC call")
	})
}

// post sends one request with the capability to the logs port and returns the status.
func (e *jobEnv) post(t *testing.T, method, path, token, body string) int {
	t.Helper()
	req, err := http.NewRequest(method, e.logs.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}
