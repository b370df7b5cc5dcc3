package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	"github.com/mcsps/rds-lambda-controller/server"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/otc"
	standin "github.com/mcsps/rds-lambda-controller/test/metacontroller"
	"github.com/mcsps/rds-lambda-controller/test/testdata"
	"github.com/mcsps/rds-lambda-controller/test/testutil"
)

var t0 = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

// world is one hook server wired to the real adapter and SDK, talking HTTP to a simulated OTC on a
// manual clock, and driven by a stand-in for Metacontroller.
type world struct {
	t     testing.TB
	clock *otcsim.ManualClock
	sim   *otcsim.Sim
	hooks *httptest.Server
	logs  *testutil.Buffer
	// cloud is the hooks' OTC client, for tests that act in OTC behind the hooks' back.
	cloud *otc.Client
}

func newWorld(t testing.TB) *world {
	t.Helper()
	clock := otcsim.NewManualClock(t0)
	srv := otcsim.NewServer(otcsim.Options{Clock: clock, Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(srv.Close)

	client := testutil.Login(t, srv, nil)

	logs := &testutil.Buffer{}
	rec := reconcile.New(reconcile.Config{Cloud: client, Now: clock.Now, CallTimeout: 4 * time.Second})
	hooks := httptest.NewServer(server.New(server.Options{
		// The hooks' authentication has tests of its own (server, cmd/rds-hooks, test/image.sh);
		// these play an authenticated Metacontroller.
		Insecure:   true,
		Reconciler: rec,
		Logger:     slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}))
	t.Cleanup(hooks.Close)
	// The login above is not an RDS call: start counting from here.
	srv.Sim.ResetCounters()
	return &world{t: t, clock: clock, sim: srv.Sim, hooks: hooks, logs: logs, cloud: client}
}

// metacontroller plays Metacontroller for one Rds object over HTTP, through the shared stand-in
// (test/metacontroller): hook version v1 as the captured requests show it, status replaced whole,
// children applied per their updateStrategy.
type metacontroller struct {
	w   *world
	obj *standin.Object
	// parent is obj.Parent, the stored object, for tests that edit it as JSON.
	parent map[string]any
}

// newObject returns a Metacontroller for the sample Rds object, edited by edit.
func (w *world) newObject(edit func(spec map[string]any)) *metacontroller {
	var parent map[string]any
	require.NoError(w.t, json.Unmarshal([]byte(testdata.SampleRds), &parent))
	parent["metadata"] = map[string]any{
		"name": "my-rds-single", "namespace": "rds1", "uid": "6a3c7f0e-1d2b-4c5a-9e8f-0123456789ab",
		"generation": 1, "resourceVersion": "1",
		"finalizers": []any{standin.Finalizer},
	}
	if edit != nil {
		edit(parent["spec"].(map[string]any))
	}
	obj := standin.New(parent)
	return &metacontroller{w: w, obj: obj, parent: obj.Parent}
}

// hookResponse is the union of the sync and finalize answers, decoded strictly as Metacontroller
// decodes hook version v2 answers.
type hookResponse = standin.Answer

// envelope builds the next request the way Metacontroller does.
func (m *metacontroller) envelope() []byte {
	body, err := m.obj.Body()
	require.NoError(m.w.t, err)
	return body
}

// post sends a raw body to a hook and returns the HTTP status and body.
func (w *world) post(path string, body []byte) (int, http.Header, []byte) {
	w.t.Helper()
	resp, err := http.Post(w.hooks.URL+path, "application/json", bytes.NewReader(body))
	require.NoError(w.t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(w.t, err)
	return resp.StatusCode, resp.Header, out
}

// call sends the next sync or finalize call and, on 200, applies the answer as Metacontroller does.
func (m *metacontroller) call() (int, *hookResponse) {
	m.w.t.Helper()
	x, err := m.obj.Post(nil, m.w.hooks.URL)
	require.NoError(m.w.t, err)
	if x.Code != http.StatusOK {
		return x.Code, nil
	}
	return x.Code, x.Answer
}

// sync calls /sync and requires a 200.
func (m *metacontroller) sync() *hookResponse {
	m.w.t.Helper()
	require.False(m.w.t, m.obj.Deleting(), "a deleted object is finalized, not synced")
	code, resp := m.call()
	require.Equal(m.w.t, http.StatusOK, code)
	return resp
}

// finalize marks the object deleted and calls /finalize, requiring a 200.
func (m *metacontroller) finalize() *hookResponse {
	m.w.t.Helper()
	m.obj.Delete(t0)
	code, resp := m.call()
	require.Equal(m.w.t, http.StatusOK, code)
	return resp
}

// secret returns the observed child Secret with this name, or nil.
func (m *metacontroller) secret(name string) *corev1.Secret { return m.obj.Secrets[name] }

// condition returns the status condition of this type, or nil.
func condition(st v1alpha1.RdsStatus, typ string) *v1alpha1.Condition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == typ {
			return &st.Conditions[i]
		}
	}
	return nil
}

func mustMarshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// logText returns what the server logged so far.
func (w *world) logText() string { return w.logs.String() }
