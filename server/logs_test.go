package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/server"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/logsapi"
)

// fakeReader answers ReadLogs with fn and records the tokens it was given.
type fakeReader struct {
	fn     func(ctx context.Context, req logsapi.Request) (*logsapi.Response, error)
	tokens []string
}

func (f *fakeReader) ReadLogs(ctx context.Context, token string, req logsapi.Request) (*logsapi.Response, error) {
	f.tokens = append(f.tokens, token)
	return f.fn(ctx, req)
}

func TestLogsPort(t *testing.T) {
	ok := func(_ context.Context, req logsapi.Request) (*logsapi.Response, error) {
		return &logsapi.Response{Instance: req.Instance, Type: req.Type, Total: 1, Errors: []cloud.ErrorLogEntry{{Content: "<b>"}}}, nil
	}
	fail := func(err error) func(context.Context, logsapi.Request) (*logsapi.Response, error) {
		return func(context.Context, logsapi.Request) (*logsapi.Response, error) { return nil, err }
	}
	body := `{"instance":"i1","type":"error"}`
	cases := map[string]struct {
		reason     string
		fn         func(context.Context, logsapi.Request) (*logsapi.Response, error)
		auth, body string
		want       int
		wantBody   string
		wantToken  string
		retryAfter string
	}{
		"read":             {reason: "the capability in the header", fn: ok, auth: "Bearer SECRET-TOKEN-1", body: body, want: 200, wantBody: `"content":"<b>"`, wantToken: "SECRET-TOKEN-1"},
		"token in body":    {reason: "only in the header, which is checked before the body is read", fn: ok, body: `{"token":"SECRET-TOKEN-2","instance":"i1","type":"slow"}`, want: 401},
		"token in both":    {reason: "an older Job sends it in both", fn: ok, auth: "Bearer SECRET-TOKEN-2", body: `{"token":"SECRET-TOKEN-2","instance":"i1","type":"slow"}`, want: 200, wantToken: "SECRET-TOKEN-2"},
		"two tokens":       {reason: "the body cannot name another capability", fn: ok, auth: "Bearer SECRET-TOKEN-2", body: `{"token":"SECRET-TOKEN-3","instance":"i1","type":"slow"}`, want: 400},
		"no token":         {reason: "nothing without a capability", fn: ok, body: body, want: 401, wantBody: "no capability"},
		"not bearer":       {reason: "only Bearer", fn: ok, auth: "Basic dTpw", body: body, want: 401},
		"bad type":         {reason: "error or slow", fn: ok, auth: "Bearer t", body: `{"instance":"i1","type":"all"}`, want: 400},
		"unknown field":    {reason: "nothing but a read", fn: ok, auth: "Bearer t", body: `{"instance":"i1","type":"error","delete":true}`, want: 400},
		"too large":        {reason: "bounded body", fn: ok, auth: "Bearer t", body: `{"instance":"` + strings.Repeat("x", 40<<10) + `","type":"error"}`, want: 413},
		"invalid":          {reason: "a forged or changed token", fn: fail(reconcile.ErrCapabilityInvalid), auth: "Bearer t", body: body, want: 401, wantBody: "the capability is not valid"},
		"expired":          {reason: "after its expiry", fn: fail(&reconcile.CapabilityExpiredError{At: time.Unix(0, 0)}), auth: "Bearer t", body: body, want: 401, wantBody: "expired"},
		"outside":          {reason: "another instance", fn: fail(&reconcile.LogsRefusedError{Reason: "the capability is for another instance"}), auth: "Bearer t", body: body, want: 403},
		"same capability":  {reason: "one read per capability at a time", fn: fail(reconcile.ErrCapabilityBusy), auth: "Bearer t", body: body, want: 429, retryAfter: "2"},
		"no key":           {reason: "a token login without --password-key", fn: fail(reconcile.ErrLogsUnavailable), auth: "Bearer t", body: body, want: 503},
		"unexpected error": {reason: "its text stays in the log", fn: fail(errors.New("boom")), auth: "Bearer t", body: body, want: 500, wantBody: `"internal error"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			reader := &fakeReader{fn: tc.fn}
			logs := &bytes.Buffer{}
			h := server.NewLogs(server.LogsOptions{Reader: reader, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
			req := httptest.NewRequest(http.MethodPost, "/v1/logs", strings.NewReader(tc.body))
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			assert.Equal(t, tc.want, w.Code, tc.reason+": "+w.Body.String())
			assert.Contains(t, w.Body.String(), tc.wantBody, tc.reason)
			if tc.wantToken != "" {
				assert.Equal(t, []string{tc.wantToken}, reader.tokens, tc.reason)
			}
			assert.Equal(t, tc.retryAfter, w.Header().Get("Retry-After"), tc.reason)
			for _, secret := range []string{"SECRET-TOKEN", "dTpw"} {
				assert.NotContains(t, logs.String(), secret, "no token in the logs")
			}
		})
	}
}

func TestLogsPortThrottledAndBusy(t *testing.T) {
	reg := prometheus.NewRegistry()
	metrics := server.NewMetrics(reg)
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	reader := &fakeReader{fn: func(ctx context.Context, req logsapi.Request) (*logsapi.Response, error) {
		if req.Instance == "slow" {
			started <- struct{}{}
			<-release
		}
		return nil, &reconcile.LogsCloudError{Kind: cloud.KindThrottled, RetryAfter: 3 * time.Second}
	}}
	h := server.NewLogs(server.LogsOptions{Reader: reader, Metrics: metrics, MaxInFlight: 1})
	post := func(instance string) *httptest.ResponseRecorder {
		body, _ := json.Marshal(logsapi.Request{Instance: instance, Type: "error"})
		req := httptest.NewRequest(http.MethodPost, "/v1/logs", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer t")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	done := make(chan *httptest.ResponseRecorder)
	go func() { done <- post("slow") }()
	<-started
	busy := post("other")
	assert.Equal(t, http.StatusServiceUnavailable, busy.Code, "one read at a time")
	assert.Equal(t, "2", busy.Header().Get("Retry-After"))
	close(release)
	throttled := <-done
	assert.Equal(t, http.StatusTooManyRequests, throttled.Code)
	assert.Equal(t, "3", throttled.Header().Get("Retry-After"))

	counts := map[string]uint64{}
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != "rds_hooks_logs_read_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			counts[m.GetLabel()[0].GetValue()] = m.GetHistogram().GetSampleCount()
		}
	}
	assert.Equal(t, map[string]uint64{"busy": 1, "throttled": 1}, counts, "each read is measured by outcome")
}

// blockingBody is a request body that sends nothing until released, as a client trickling its body
// would.
type blockingBody struct {
	read    chan struct{}
	release chan struct{}
}

func (b *blockingBody) Read([]byte) (int, error) {
	select {
	case b.read <- struct{}{}:
	default:
	}
	<-b.release
	return 0, errors.New("closed")
}

// Any pod may reach the logs port: a client that holds its body back, without a capability, must
// not take the slots of the Jobs that present one.
func TestLogsPortSlowBodyTakesNoSlot(t *testing.T) {
	ok := func(_ context.Context, req logsapi.Request) (*logsapi.Response, error) {
		return &logsapi.Response{Instance: req.Instance, Type: req.Type}, nil
	}
	h := server.NewLogs(server.LogsOptions{Reader: &fakeReader{fn: ok}, MaxInFlight: 1})
	slow := &blockingBody{read: make(chan struct{}, 1), release: make(chan struct{})}
	done := make(chan int)
	go func() {
		req := httptest.NewRequest(http.MethodPost, "/v1/logs", slow)
		req.Header.Set("Authorization", "Bearer t")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		done <- w.Code
	}()
	<-slow.read
	req := httptest.NewRequest(http.MethodPost, "/v1/logs", strings.NewReader(`{"instance":"i1","type":"error"}`))
	req.Header.Set("Authorization", "Bearer t")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	assert.Equal(t, http.StatusOK, w.Code, "a Job's read is served while another client holds back its body: "+w.Body.String())
	close(slow.release)
	assert.Equal(t, http.StatusBadRequest, <-done)
}

// checkingReader is a LogsReader that can tell its capabilities (reconcile.Reconciler).
type checkingReader struct {
	fakeReader
	check func(token string) error
}

func (c *checkingReader) CheckCapability(token string) error { return c.check(token) }

// TestLogsPortChecksTheCapabilityFirst: a request whose capability the hooks would not serve is
// answered from its headers: its body is never read, so holding it back costs nothing.
func TestLogsPortChecksTheCapabilityFirst(t *testing.T) {
	reader := &checkingReader{fakeReader: fakeReader{fn: func(context.Context, logsapi.Request) (*logsapi.Response, error) {
		return &logsapi.Response{}, nil
	}}, check: func(token string) error {
		switch token {
		case "good":
			return nil
		case "old":
			return &reconcile.CapabilityExpiredError{At: time.Unix(0, 0)}
		}
		return reconcile.ErrCapabilityInvalid
	}}
	h := server.NewLogs(server.LogsOptions{Reader: reader, MaxInFlight: 1})
	for token, want := range map[string]string{"forged": "not valid", "old": "expired", "": "no capability"} {
		body := &blockingBody{read: make(chan struct{}, 1), release: make(chan struct{})}
		req := httptest.NewRequest(http.MethodPost, "/v1/logs", body)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		assert.Equal(t, http.StatusUnauthorized, w.Code, token)
		assert.Contains(t, w.Body.String(), want, token)
		select {
		case <-body.read:
			t.Errorf("the body of a request with capability %q was read", token)
		default:
		}
		close(body.release)
	}
	req := httptest.NewRequest(http.MethodPost, "/v1/logs", strings.NewReader(`{"instance":"i1","type":"error"}`))
	req.Header.Set("Authorization", "Bearer good")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	assert.Equal(t, http.StatusOK, w.Code, w.Body.String())
}
