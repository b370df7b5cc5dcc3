package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/hookauth"
	"github.com/mcsps/rds-lambda-controller/server"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/cloudtest"
	"github.com/mcsps/rds-lambda-controller/sync/hook"
	"github.com/mcsps/rds-lambda-controller/test/testdata"
)

type harness struct {
	srv  *server.Server
	reg  *prometheus.Registry
	logs *bytes.Buffer
}

func newHarness(t testing.TB, r server.Reconciler, options ...func(*server.Options)) *harness {
	t.Helper()
	reg := prometheus.NewRegistry()
	logs := &bytes.Buffer{}
	opts := server.Options{
		Reconciler: r,
		Logger:     slog.New(slog.NewJSONHandler(logs, nil)),
		Metrics:    server.NewMetrics(reg),
		Gatherer:   reg,
		Auth:       testTokens(t),
	}
	for _, o := range options {
		o(&opts)
	}
	srv := server.New(opts)
	return &harness{srv: srv, reg: reg, logs: logs}
}

func (h *harness) post(path string, body []byte) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testToken)
	h.srv.ServeHTTP(w, req)
	return w
}

// testToken is Metacontroller's credential in the tests of this package.
const testToken = "metacontroller-test-token-0123456789abcdef"

// testTokens accepts testToken, read from a file as the Deployment's Secret volume is.
func testTokens(t testing.TB) *hookauth.Tokens {
	t.Helper()
	path := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(path, []byte(testToken+"\n"), 0o600))
	tokens, err := hookauth.NewTokens(path, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	return tokens
}

// emptyCloud is a cloud with no instances at all, which it lists as OTC's client does (finalize
// searches the listing for the object's ownership tags).
func emptyCloud() cloudtest.Listing {
	notFound := func(context.Context, string) (*cloud.Instance, error) { return nil, cloud.ErrNotFound }
	return cloudtest.Listing{Fake: &cloudtest.Fake{FindInstanceByNameFn: notFound, GetInstanceFn: notFound,
		ListInstancesFn: func(context.Context) ([]cloud.Instance, error) { return nil, nil }}}
}

// strictDecode decodes like Metacontroller does for hook version v2: unknown keys are an error.
func strictDecode(t *testing.T, body []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(v))
}

func TestCapturedRequestsWithRdsParent(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testdata.Dir(), "metacontroller", "*.request.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			h := newHarness(t, reconcile.New(reconcile.Config{Cloud: emptyCloud()}))
			body := testdata.WithRdsParent(t, f)
			finalizing := strings.Contains(f, "finalize")
			path := "/sync"
			if finalizing {
				path = "/finalize"
			}
			w := h.post(path, body)
			require.Equal(t, http.StatusOK, w.Code, w.Body.String())
			assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
			if finalizing {
				var resp struct {
					Status             map[string]any   `json:"status"`
					Children           []map[string]any `json:"children"`
					ResyncAfterSeconds float64          `json:"resyncAfterSeconds"`
					Finalized          bool             `json:"finalized"`
				}
				strictDecode(t, w.Body.Bytes(), &resp)
				assert.True(t, resp.Finalized, "no instance in the cloud: nothing to wait for")
				return
			}
			var resp struct {
				Status             map[string]any   `json:"status"`
				Children           []map[string]any `json:"children"`
				ResyncAfterSeconds float64          `json:"resyncAfterSeconds"`
			}
			strictDecode(t, w.Body.Bytes(), &resp)
			require.Len(t, resp.Children, 1)
			assert.Equal(t, "Secret", resp.Children[0]["kind"])
			assert.Equal(t, "my-rds-single-connection", resp.Children[0]["metadata"].(map[string]any)["name"])
			assert.NotContains(t, resp.Status, "password")
			assert.Positive(t, resp.ResyncAfterSeconds)
		})
	}
}

func TestBadRequests(t *testing.T) {
	h := newHarness(t, reconcile.New(reconcile.Config{Cloud: &cloudtest.Fake{}}))
	cases := map[string]struct {
		path, body string
		code       int
	}{
		"malformed JSON":        {"/sync", `{"parent": {`, http.StatusBadRequest},
		"empty body":            {"/sync", ``, http.StatusBadRequest},
		"wrong parent kind":     {"/finalize", `{"parent":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"b"}}}`, http.StatusBadRequest},
		"customize not JSON":    {"/customize", `nope`, http.StatusBadRequest},
		"body over the limit":   {"/sync", `{"x":"` + strings.Repeat("a", 9<<20) + `"}`, http.StatusRequestEntityTooLarge},
		"GET on a hook is 404s": {"/nothing", `{}`, http.StatusNotFound},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := h.post(tc.path, []byte(tc.body))
			assert.Equal(t, tc.code, w.Code)
			if tc.code == http.StatusBadRequest {
				var e struct{ Error string }
				require.NoError(t, json.Unmarshal(w.Body.Bytes(), &e))
				assert.NotEmpty(t, e.Error)
				assert.NotContains(t, e.Error, "\n", "a one-line reason")
			}
		})
	}
}

type stubReconciler struct {
	sync func(ctx context.Context, req *hook.Request) (*hook.SyncResponse, error)
}

func (s stubReconciler) Sync(ctx context.Context, req *hook.Request) (*hook.SyncResponse, error) {
	return s.sync(ctx, req)
}

func (s stubReconciler) Finalize(context.Context, *hook.Request) (*hook.FinalizeResponse, error) {
	panic("finalize exploded")
}

func sampleRequest(t testing.TB) []byte {
	return testdata.WithRdsParent(t, filepath.Join(testdata.Dir(), "metacontroller", "01-sync-v1-no-children.request.json"))
}

func TestPanicIsRecovered(t *testing.T) {
	h := newHarness(t, stubReconciler{})
	w := h.post("/finalize", sampleRequest(t))
	assert.Equal(t, http.StatusInternalServerError, w.Code)
	assert.Contains(t, h.logs.String(), "panic in handler")
	// The server keeps serving.
	w = h.post("/finalize", []byte(`{`))
	assert.Equal(t, http.StatusBadRequest, w.Code)
}

func TestThrottlingBecomes429(t *testing.T) {
	h := newHarness(t, stubReconciler{sync: func(context.Context, *hook.Request) (*hook.SyncResponse, error) {
		return nil, &reconcile.ThrottledError{RetryAfter: 2500 * time.Millisecond}
	}})
	w := h.post("/sync", sampleRequest(t))
	assert.Equal(t, http.StatusTooManyRequests, w.Code)
	assert.Equal(t, "3", w.Header().Get("Retry-After"))
}

// TestHookDeadline checks that the reconciler's context ends HookTimeout after the request came in.
// The deadline is bracketed by the times just before and just after the request, so the check
// holds however slowly a loaded machine runs the handler.
func TestHookDeadline(t *testing.T) {
	cases := map[string]struct {
		reason  string
		timeout time.Duration
		want    time.Duration
	}{
		"default":    {reason: "under Metacontroller's 10 s webhook timeout", want: 8 * time.Second},
		"configured": {reason: "Options.HookTimeout reaches the reconciler", timeout: 3 * time.Second, want: 3 * time.Second},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var deadline time.Time
			var hasDeadline bool
			h := newHarness(t, stubReconciler{sync: func(ctx context.Context, _ *hook.Request) (*hook.SyncResponse, error) {
				deadline, hasDeadline = ctx.Deadline()
				return &hook.SyncResponse{Children: []any{}}, nil
			}}, func(o *server.Options) { o.HookTimeout = tc.timeout })
			before := time.Now()
			w := h.post("/sync", sampleRequest(t))
			after := time.Now()
			require.Equal(t, http.StatusOK, w.Code)
			require.True(t, hasDeadline, tc.reason)
			assert.False(t, deadline.Before(before.Add(tc.want)), "deadline %s before request start + %s (%s)", deadline, tc.want, tc.reason)
			assert.False(t, deadline.After(after.Add(tc.want)), "deadline %s after request end + %s (%s)", deadline, tc.want, tc.reason)
		})
	}
}

func TestSecretsNeverLogged(t *testing.T) {
	h := newHarness(t, reconcile.New(reconcile.Config{Cloud: emptyCloud()}))
	w := h.post("/sync", sampleRequest(t))
	require.Equal(t, http.StatusOK, w.Code)
	assert.NotContains(t, h.logs.String(), "A12345678+")
	assert.NotContains(t, w.Body.String(), "A12345678+", "the password travels base64-encoded in the Secret only")
}

func TestProbesAndMetrics(t *testing.T) {
	h := newHarness(t, reconcile.New(reconcile.Config{Cloud: emptyCloud()}))
	get := func(path string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.srv.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		return w
	}
	assert.Equal(t, http.StatusOK, get("/healthz").Code)
	assert.Equal(t, http.StatusOK, get("/readyz").Code)
	h.post("/sync", sampleRequest(t))
	h.post("/sync", []byte("{"))

	w := get("/metrics")
	require.Equal(t, http.StatusOK, w.Code)
	body, _ := io.ReadAll(w.Body)
	assert.Contains(t, string(body), `rds_hooks_hook_duration_seconds_count{hook="sync",outcome="ok"} 1`)
	assert.Contains(t, string(body), `rds_hooks_hook_duration_seconds_count{hook="sync",outcome="bad_request"} 1`)
	assert.Equal(t, 2, testutil.CollectAndCount(h.reg, "rds_hooks_hook_duration_seconds"))

	h.srv.Drain()
	assert.Equal(t, http.StatusServiceUnavailable, get("/readyz").Code)
	assert.Equal(t, http.StatusOK, get("/healthz").Code)
}

// TestWrongMethodIs405: a hook path with the wrong method says which methods it takes.
func TestWrongMethodIs405(t *testing.T) {
	h := newHarness(t, reconcile.New(reconcile.Config{Cloud: emptyCloud()}))
	cases := map[string]struct {
		method, path, allow string
	}{
		"GET a hook":          {http.MethodGet, "/sync", http.MethodPost},
		"PUT a hook":          {http.MethodPut, "/finalize", http.MethodPost},
		"DELETE a hook":       {http.MethodDelete, "/customize", http.MethodPost},
		"POST a probe":        {http.MethodPost, "/healthz", http.MethodGet},
		"POST to /metrics":    {http.MethodPost, "/metrics", http.MethodGet},
		"unknown path is 404": {http.MethodGet, "/nothing", ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := httptest.NewRecorder()
			h.srv.ServeHTTP(w, httptest.NewRequest(tc.method, tc.path, nil))
			if tc.allow == "" {
				assert.Equal(t, http.StatusNotFound, w.Code)
				return
			}
			assert.Equal(t, http.StatusMethodNotAllowed, w.Code)
			assert.Equal(t, tc.allow, w.Header().Get("Allow"))
			var e struct{ Error string }
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &e))
			assert.Contains(t, e.Error, "allowed: "+tc.allow)
		})
	}
}

// TestTooLargeBodyIsLogged: a 413 leaves a warning with the limit, never the body.
func TestTooLargeBodyIsLogged(t *testing.T) {
	h := newHarness(t, reconcile.New(reconcile.Config{Cloud: emptyCloud()}), func(o *server.Options) { o.MaxBodyBytes = 1024 })
	body := `{"x":"` + strings.Repeat("s3cr3t-", 300) + `"}`
	w := h.post("/sync", []byte(body))
	require.Equal(t, http.StatusRequestEntityTooLarge, w.Code)
	logs := h.logs.String()
	assert.Contains(t, logs, `"msg":"request body too large"`)
	assert.Contains(t, logs, `"path":"/sync"`)
	assert.Contains(t, logs, `"limitBytes":1024`)
	assert.Contains(t, logs, `"contentLength":`+strconv.Itoa(len(body)))
	assert.NotContains(t, logs, "s3cr3t", "no body in the log")
}

// TestRequestsOutliveTheirBody: a body's buffer serves later calls once its call is answered, so
// nothing decoded from it may point into it: a request kept from an earlier call still reads as
// it was sent after later calls were read into the same buffer.
func TestRequestsOutliveTheirBody(t *testing.T) {
	var kept []*hook.Request
	h := newHarness(t, stubReconciler{sync: func(_ context.Context, req *hook.Request) (*hook.SyncResponse, error) {
		kept = append(kept, req)
		return &hook.SyncResponse{Children: []any{}}, nil
	}})
	for _, name := range []string{"first-object", "second", "a-third-object-with-a-longer-name"} {
		var req map[string]any
		require.NoError(t, json.Unmarshal(sampleRequest(t), &req))
		parent := req["parent"].(map[string]any)
		parent["metadata"].(map[string]any)["name"] = name
		parent["spec"].(map[string]any)["flavorref"] = "rds.mysql." + name
		body, err := json.Marshal(req)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, h.post("/sync", body).Code)
	}
	require.Len(t, kept, 3)
	for i, name := range []string{"first-object", "second", "a-third-object-with-a-longer-name"} {
		assert.Equal(t, name, kept[i].Parent.Name)
		assert.Equal(t, "rds.mysql."+name, kept[i].Parent.Spec.Flavorref)
	}
}

// TestAnswerIsJSONMarshal: the answer's bytes are json.Marshal's of the reconciler's response (no
// trailing newline, HTML characters escaped), also from a buffer that served a larger answer.
func TestAnswerIsJSONMarshal(t *testing.T) {
	resp := &hook.SyncResponse{ResyncAfterSeconds: 300, Children: []any{map[string]any{"kind": "Secret", "note": "<a&b>"}}}
	big := &hook.SyncResponse{Children: []any{map[string]any{"data": strings.Repeat("x", 10000)}}}
	next := big
	h := newHarness(t, stubReconciler{sync: func(context.Context, *hook.Request) (*hook.SyncResponse, error) { return next, nil }})
	require.Equal(t, http.StatusOK, h.post("/sync", sampleRequest(t)).Code)
	next = resp
	w := h.post("/sync", sampleRequest(t))
	require.Equal(t, http.StatusOK, w.Code)
	want, err := json.Marshal(resp)
	require.NoError(t, err)
	assert.Equal(t, string(want), w.Body.String())
	assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
}
