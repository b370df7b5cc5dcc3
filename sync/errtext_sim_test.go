package reconcile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/test/testutil"
)

// errtextGateway stands between the adapter and the simulator like a gateway in front of OTC: it
// answers every create with status and a body holding a request id that differs on every call.
func errtextGateway(t *testing.T, status int, body func(requestID string) string) (*reconcile.Reconciler, *otcsim.ManualClock) {
	t.Helper()
	var sim atomic.Pointer[url.URL]
	var calls atomic.Int32
	// NOTE: a connection the proxy dialed but never used holds the simulator's Close for 5 s: the
	// proxy has its own transport, whose idle connections are closed before the simulator is.
	transport := &http.Transport{}
	gateway := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/instances") {
			id := fmt.Sprintf("req-%04d-%x", calls.Add(1), time.Now().UnixNano())
			w.Header().Set("X-Request-Id", id)
			w.WriteHeader(status)
			fmt.Fprint(w, body(id))
			return
		}
		proxy := httputil.NewSingleHostReverseProxy(sim.Load())
		proxy.Transport = transport
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(gateway.Close)

	clock := otcsim.NewManualClock(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC))
	// The catalog sends the services' calls through the gateway; the login goes to the simulator.
	srv := otcsim.NewServer(otcsim.Options{Clock: clock, BaseURL: gateway.URL})
	t.Cleanup(srv.Close)
	t.Cleanup(transport.CloseIdleConnections)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	sim.Store(u)

	client := testutil.Login(t, srv, nil)
	return reconcile.New(reconcile.Config{Cloud: client, Now: clock.Now}), clock
}

// TestRefusalsDifferingInRequestIDGiveTheSameStatus: OTC's text without an error code may hold a
// request id. Two calls refused alike must answer byte for byte the same status, or Metacontroller
// writes status on every call; the id belongs in the log only.
func TestRefusalsDifferingInRequestIDGiveTheSameStatus(t *testing.T) {
	cases := map[string]struct {
		reason      string
		status      int
		body        func(id string) string
		wantReason  string
		wantMessage string
	}{
		"codeless 413": {
			reason:      "a too-large request refused without an OTC code",
			status:      http.StatusRequestEntityTooLarge,
			body:        func(id string) string { return `{"error_msg":"Request entity too large, request id ` + id + `"}` },
			wantReason:  reconcile.ReasonCloudRefused,
			wantMessage: "OTC refused the request: OTC answered 413: the request was too large.",
		},
		"codeless 404": {
			reason:      "a 404 whose body is a message but no code",
			status:      http.StatusNotFound,
			body:        func(id string) string { return `{"code":404,"message":"Not found (request ` + id + `)"}` },
			wantReason:  reconcile.ReasonCloudRefused,
			wantMessage: "OTC refused the request: OTC answered 404: not found.",
		},
		"400 with a body that is not the documented JSON": {
			reason:      "a body of another form is not OTC's documented error",
			status:      http.StatusBadRequest,
			body:        func(id string) string { return `{"errors":[{"detail":"bad body","request_id":"` + id + `"}]}` },
			wantReason:  reconcile.ReasonCloudUnavailable,
			wantMessage: "OTC did not answer as expected; the call will be retried.",
		},
		"HTML page of a gateway": {
			reason:      "a gateway answers with its own page",
			status:      http.StatusForbidden,
			body:        func(id string) string { return "<html><body><h1>403 Forbidden</h1><p>" + id + "</p></body></html>" },
			wantReason:  reconcile.ReasonCloudUnauthorized,
			wantMessage: "OTC refused the controller's credentials.",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r, clock := errtextGateway(t, tc.status, tc.body)
			w := &restoreWorld{t: t, clock: clock, r: r}
			w.object("errtext", restoreSpec())
			logs := &testutil.Buffer{}
			ctx := reconcile.WithLogger(context.Background(), slog.New(slog.NewJSONHandler(logs, nil)))

			// The first call only stores the connection Secret; the create follows.
			w.syncCtx(ctx)

			var answers [][]byte
			for range 2 {
				resp, err := w.mc.Sync(ctx, w.r)
				require.NoError(t, err, tc.reason)
				answer, err := json.Marshal(resp.Status)
				require.NoError(t, err)
				assert.NotContains(t, string(answer), "req-", "%s: no request id in status", tc.reason)
				answers = append(answers, answer)
				c := w.synced()
				assert.Equal(t, tc.wantReason, c.Reason, tc.reason)
				assert.Equal(t, tc.wantMessage, c.Message, tc.reason)
				clock.Advance(time.Minute)
			}
			assert.Equal(t, string(answers[0]), string(answers[1]), "%s: the same refusal gives the same status", tc.reason)
			assert.Contains(t, logs.String(), `"level":"WARN","msg":"cloud call failed"`, tc.reason)
			assert.Contains(t, logs.String(), `"detail":"`, "%s: OTC's text is in the log", tc.reason)
		})
	}
}
