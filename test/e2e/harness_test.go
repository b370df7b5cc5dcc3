package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/mcsps/rds-lambda-controller/server"
	rdssync "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/otc"
	"github.com/mcsps/rds-lambda-controller/test/otcsim"
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
	rec := rdssync.New(rdssync.Config{Cloud: client, Now: clock.Now, CallTimeout: 4 * time.Second})
	hooks := httptest.NewServer(server.New(server.Options{
		Reconciler: rec,
		Logger:     slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}))
	t.Cleanup(hooks.Close)
	// The login above is not an RDS call: start counting from here.
	srv.Sim.ResetCounters()
	return &world{t: t, clock: clock, sim: srv.Sim, hooks: hooks, logs: logs, cloud: client}
}

// metacontroller plays Metacontroller for one Rds object: it sends the request envelope exactly as
// the captured requests show it (hook version v1, children keyed by name), replaces the parent's
// status with each answer, and keeps exactly the children the last answer returned.
type metacontroller struct {
	w        *world
	parent   map[string]any
	children map[string]map[string]json.RawMessage // "Secret.v1" -> name -> object
	related  map[string]map[string]json.RawMessage
}

// newObject returns a Metacontroller for the sample Rds object, edited by edit.
func (w *world) newObject(edit func(spec map[string]any)) *metacontroller {
	var parent map[string]any
	require.NoError(w.t, json.Unmarshal([]byte(testdata.SampleRds), &parent))
	parent["metadata"] = map[string]any{
		"name": "my-rds-single", "namespace": "rds1", "uid": "6a3c7f0e-1d2b-4c5a-9e8f-0123456789ab",
		"generation": 1, "resourceVersion": "1",
		"finalizers": []any{"metacontroller.io/compositecontroller-rds-controller"},
	}
	if edit != nil {
		edit(parent["spec"].(map[string]any))
	}
	return &metacontroller{
		w: w, parent: parent,
		children: map[string]map[string]json.RawMessage{"Secret.v1": {}, "Job.batch/v1": {}},
		related:  map[string]map[string]json.RawMessage{},
	}
}

// hookResponse is the union of the sync and finalize answers, decoded strictly as Metacontroller
// decodes hook version v2 answers.
type hookResponse struct {
	Status             v1alpha1.RdsStatus `json:"status"`
	Children           []json.RawMessage  `json:"children"`
	ResyncAfterSeconds float64            `json:"resyncAfterSeconds"`
	Finalized          bool               `json:"finalized"`
}

// envelope builds a request the way Metacontroller does, from a captured request's controller.
func (m *metacontroller) envelope(finalizing bool) []byte {
	captured := "01-sync-v1-no-children.request.json"
	if finalizing {
		captured = "05-finalize-v1-first-call-hold.request.json"
	}
	body, err := os.ReadFile(filepath.Join(testdata.Dir(), "metacontroller", captured))
	require.NoError(m.w.t, err)
	var req map[string]any
	require.NoError(m.w.t, json.Unmarshal(body, &req))
	req["parent"], req["children"], req["related"], req["finalizing"] = m.parent, m.children, m.related, finalizing
	out, err := json.Marshal(req)
	require.NoError(m.w.t, err)
	return out
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

// call sends one sync or finalize call and, on 200, applies the answer as Metacontroller does.
func (m *metacontroller) call(path string) (int, *hookResponse) {
	m.w.t.Helper()
	code, _, body := m.w.post(path, m.envelope(path == "/finalize"))
	if code != http.StatusOK {
		return code, nil
	}
	var resp hookResponse
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	require.NoError(m.w.t, dec.Decode(&resp), string(body))

	var status map[string]any
	require.NoError(m.w.t, json.Unmarshal(mustMarshal(m.w.t, resp.Status), &status))
	m.parent["status"] = status
	next := map[string]map[string]json.RawMessage{"Secret.v1": {}, "Job.batch/v1": {}}
	for _, raw := range resp.Children {
		var obj struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		require.NoError(m.w.t, json.Unmarshal(raw, &obj))
		group := obj.Kind + "." + obj.APIVersion
		require.Contains(m.w.t, next, group, "a child of a type the CompositeController does not declare")
		next[group][obj.Metadata.Name] = raw
	}
	m.children = next
	return code, &resp
}

// sync calls /sync and requires a 200.
func (m *metacontroller) sync() *hookResponse {
	m.w.t.Helper()
	code, resp := m.call("/sync")
	require.Equal(m.w.t, http.StatusOK, code)
	return resp
}

// finalize marks the object deleted and calls /finalize, requiring a 200.
func (m *metacontroller) finalize() *hookResponse {
	m.w.t.Helper()
	md := m.parent["metadata"].(map[string]any)
	md["deletionTimestamp"] = t0.Format(time.RFC3339)
	code, resp := m.call("/finalize")
	require.Equal(m.w.t, http.StatusOK, code)
	return resp
}

// secret returns the observed child Secret with this name, or nil.
func (m *metacontroller) secret(name string) *corev1.Secret {
	raw, ok := m.children["Secret.v1"][name]
	if !ok {
		return nil
	}
	var s corev1.Secret
	require.NoError(m.w.t, json.Unmarshal(raw, &s))
	return &s
}

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
