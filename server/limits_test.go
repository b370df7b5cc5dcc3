package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/server"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/cloudtest"
	"github.com/mcsps/rds-lambda-controller/sync/hook"
)

// customizeBody is a customize call for an Rds parent with this spec (JSON object members).
func customizeBody(metadata, spec string) []byte {
	return []byte(`{"controller":{},"parent":{"apiVersion":"otc.mcsps.de/v1alpha1","kind":"Rds","metadata":` + metadata + `,"spec":` + spec + `}}`)
}

const validSpec = `{"availabilityzone":"eu-de-01","datastoretype":"MySQL","datastoreversion":"8.0","flavorref":"rds.mysql.c2.medium",
"region":"eu-de","securitygroup":"golang","subnet":"frank-test","vpc":"frank-test","volumesize":40,"volumetype":"COMMON"`

// TestCustomizeValidatesTheParent: /customize decodes and checks its parent as /sync does (400
// for what is not an Rds parent); for an invalid spec it asks only for what its valid references
// name.
func TestCustomizeValidatesTheParent(t *testing.T) {
	h := newHarness(t, reconcile.New(reconcile.Config{Cloud: &cloudtest.Fake{}}))
	named := `{"name":"db","namespace":"team-a"}`
	for name, body := range map[string]string{
		"another kind":    `{"parent":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"b"}}}`,
		"no name":         `{"parent":{"apiVersion":"otc.mcsps.de/v1alpha1","kind":"Rds","metadata":{"namespace":"b"}}}`,
		"no parent":       `{"controller":{}}`,
		"wrong spec type": string(customizeBody(named, `{"volumesize":"big"}`)),
	} {
		t.Run(name, func(t *testing.T) {
			w := h.post("/customize", []byte(body))
			assert.Equal(t, http.StatusBadRequest, w.Code, w.Body.String())
			var e struct{ Error string }
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &e))
			assert.NotContains(t, e.Error, "\n")
		})
	}

	related := func(spec string) []hook.ResourceRule {
		t.Helper()
		w := h.post("/customize", customizeBody(named, spec))
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		var resp hook.CustomizeResponse
		strictDecode(t, w.Body.Bytes(), &resp)
		require.NotNil(t, resp.RelatedResources, "an empty list, never null")
		return resp.RelatedResources
	}
	assert.Equal(t, []hook.ResourceRule{{APIVersion: "v1", Resource: "secrets", Namespace: "team-a", Names: []string{"db-root"}}},
		related(validSpec+`,"passwordsecretref":{"name":"db-root"}}`), "a valid spec")

	// An invalid spec (volumesize 45) whose password reference cannot name a Secret asks for
	// nothing: a rule without names would select every Secret of the namespace.
	assert.Empty(t, related(strings.Replace(validSpec, `"volumesize":40`, `"volumesize":45`, 1)+`,"passwordsecretref":{"name":"Not_A_Secret!"}}`))
	// Its valid references are still asked for (the finalize call may need them).
	assert.Equal(t, []hook.ResourceRule{{APIVersion: "v1", Resource: "secrets", Namespace: "team-a", Names: []string{"app-pw"}}},
		related(`{"datastoretype":"Oracle","users":[{"name":"a","passwordsecretref":{"name":"app-pw"}},{"name":"b","passwordsecretref":{"name":"../etc"}}]}`))
}

// TestInFlightLimit: beyond MaxInFlight, a hook call waits InFlightWait for a slot, then answers
// 429 with Retry-After: 1 without reading its body; a freed slot serves again.
func TestInFlightLimit(t *testing.T) {
	release := make(chan struct{})
	var entered atomic.Int32
	h := newHarness(t, stubReconciler{sync: func(context.Context, *hook.Request) (*hook.SyncResponse, error) {
		entered.Add(1)
		<-release
		return &hook.SyncResponse{Children: []any{}}, nil
	}}, func(o *server.Options) { o.MaxInFlight = 1; o.InFlightWait = 50 * time.Millisecond })

	done := make(chan int, 1)
	go func() { done <- h.post("/sync", sampleRequest(t)).Code }()
	require.Eventually(t, func() bool { return entered.Load() == 1 }, 5*time.Second, time.Millisecond)

	for _, path := range []string{"/sync", "/finalize", "/customize"} {
		w := h.post(path, sampleRequest(t))
		assert.Equal(t, http.StatusTooManyRequests, w.Code, path)
		assert.Equal(t, "1", w.Header().Get("Retry-After"), path)
	}
	assert.Equal(t, int32(1), entered.Load(), "the waiting calls never reached the reconciler")
	close(release)
	assert.Equal(t, http.StatusOK, <-done)
	assert.Equal(t, http.StatusOK, h.post("/sync", sampleRequest(t)).Code, "a freed slot serves again")
	assert.Contains(t, h.logs.String(), "too many hook calls in flight")
	assert.Equal(t, 4, testutil.CollectAndCount(h.reg, "rds_hooks_hook_duration_seconds"), "sync ok, and busy for each hook")
}

// TestInFlightBytesLimit: calls whose bodies together exceed MaxInFlightBytes wait, then answer 429.
func TestInFlightBytesLimit(t *testing.T) {
	body := sampleRequest(t)
	release := make(chan struct{})
	var entered atomic.Int32
	h := newHarness(t, stubReconciler{sync: func(context.Context, *hook.Request) (*hook.SyncResponse, error) {
		if entered.Add(1) == 1 {
			<-release
		}
		return &hook.SyncResponse{Children: []any{}}, nil
	}}, func(o *server.Options) {
		o.MaxBodyBytes = int64(len(body))
		o.MaxInFlightBytes = int64(len(body)) + 100 // room for one such body and a small one
		o.InFlightWait = 50 * time.Millisecond
	})
	done := make(chan int, 1)
	go func() { done <- h.post("/sync", body).Code }()
	require.Eventually(t, func() bool { return entered.Load() == 1 }, 5*time.Second, time.Millisecond)

	w := h.post("/sync", body)
	assert.Equal(t, http.StatusTooManyRequests, w.Code, "a second large body waits, then gives up")
	assert.Equal(t, "1", w.Header().Get("Retry-After"))
	assert.Equal(t, http.StatusBadRequest, h.post("/sync", []byte(`{}`)).Code, "a small call still has room")
	close(release)
	assert.Equal(t, http.StatusOK, <-done)
	assert.Equal(t, http.StatusOK, h.post("/sync", body).Code)
}

// TestCallInFlightBecomes429: the reconciler's single flight ends in 429 Retry-After: 1, never a 500.
func TestCallInFlightBecomes429(t *testing.T) {
	h := newHarness(t, stubReconciler{sync: func(context.Context, *hook.Request) (*hook.SyncResponse, error) {
		return nil, reconcile.ErrCallInFlight
	}})
	w := h.post("/sync", sampleRequest(t))
	assert.Equal(t, http.StatusTooManyRequests, w.Code)
	assert.Equal(t, "1", w.Header().Get("Retry-After"))
}

// TestWaitCountsAgainstTheHookTimeout: a call that waited for a slot has only what is left of
// HookTimeout, counted from its arrival, so that it still answers before Metacontroller gives up.
func TestWaitCountsAgainstTheHookTimeout(t *testing.T) {
	release := make(chan struct{})
	deadlines := make(chan time.Time, 2)
	var entered atomic.Int32
	h := newHarness(t, stubReconciler{sync: func(ctx context.Context, _ *hook.Request) (*hook.SyncResponse, error) {
		d, _ := ctx.Deadline()
		deadlines <- d
		if entered.Add(1) == 1 {
			<-release
		}
		return &hook.SyncResponse{Children: []any{}}, nil
	}}, func(o *server.Options) { o.MaxInFlight = 1; o.HookTimeout = 5 * time.Second })
	done := make(chan int, 1)
	go func() { done <- h.post("/sync", sampleRequest(t)).Code }()
	require.Eventually(t, func() bool { return entered.Load() == 1 }, 5*time.Second, time.Millisecond)
	<-deadlines

	second := make(chan int, 1)
	arrival := time.Now()
	go func() { second <- h.post("/sync", sampleRequest(t)).Code }()
	time.Sleep(300 * time.Millisecond) // the second call waits for the slot
	close(release)
	require.Equal(t, http.StatusOK, <-done)
	require.Equal(t, http.StatusOK, <-second)
	// The call arrived right after arrival and waited 300 ms; a deadline counted from the end of
	// the wait would lie at least 300 ms later.
	assert.False(t, (<-deadlines).After(arrival.Add(5*time.Second+150*time.Millisecond)), "the deadline counts from the arrival, not from the end of the wait")
}
