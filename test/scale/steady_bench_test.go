package scale

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	"github.com/mcsps/rds-lambda-controller/server"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/view"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
	standin "github.com/mcsps/rds-lambda-controller/test/metacontroller"
	"github.com/mcsps/rds-lambda-controller/test/testdata"
	"github.com/mcsps/rds-lambda-controller/test/testutil"
)

// BenchmarkSteadySync is one steady /sync of the fleet benchmark (TestScale) in process, beside the
// floor's handler on the same body: the hooks wired as rds-hooks wires them for the run (a JSON log
// at info, the metrics, the shared view, plain HTTP without a token), the instance read from the
// view, no OTC call. It is what the fleet's throughput ratio is made of, without the network and
// the other processes, so that a change to the hooks' own work shows in ns/op, B/op and allocs/op:
//
//	go test ./test/scale/ -run '^$' -bench SteadySync -count 10 | benchstat -
func BenchmarkSteadySync(b *testing.B) {
	hooks, body := steadyHooks(b)
	for _, tc := range []struct {
		name string
		h    http.Handler
	}{{"hooks", hooks}, {"floor", floorHandler()}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				tc.h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/sync", bytes.NewReader(body)))
				if w.Code != http.StatusOK {
					b.Fatalf("status %d: %s", w.Code, w.Body.String())
				}
			}
		})
	}
}

// steadyHooks returns the hooks' handler, as rds-hooks builds it for the fleet benchmark, and the
// body of a steady sync of one of its objects: created, Ready, asking for the steady resync, its
// instance unchanged for longer than the view's settle time. It checks that the steady sync
// makes no OTC call and answers what the object holds.
func steadyHooks(b *testing.B) (http.Handler, []byte) {
	b.Helper()
	clock := otcsim.NewManualClock(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	srv := otcsim.NewServer(otcsim.Options{Clock: clock, Durations: otcsim.Durations{Create: createTime}, Logger: slog.New(slog.DiscardHandler)})
	b.Cleanup(srv.Close)
	client := testutil.Login(b, srv, nil)

	logger := slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
	reg := prometheus.NewRegistry()
	shared := view.New(client, view.Options{Now: clock.Now, Logger: logger})
	rec := reconcile.New(reconcile.Config{
		Cloud:         shared,
		Now:           clock.Now,
		PasswordKey:   secret.New("scale-benchmark-password-key"),
		ResyncPending: resyncPending,
		ResyncSteady:  resyncSteady,
		ClusterID:     "scale",
	})
	hooks := server.New(server.Options{Reconciler: rec, Logger: logger, Metrics: server.NewMetrics(reg), Gatherer: reg, Insecure: true})

	var parent map[string]any
	require.NoError(b, json.Unmarshal([]byte(testdata.SampleRds), &parent))
	parent["metadata"] = map[string]any{
		"name": "steady", "namespace": "scale", "uid": "scale-steady", "generation": 1, "resourceVersion": "1",
		"finalizers": []any{standin.Finalizer},
	}
	obj := standin.New(parent)
	sync := func() *standin.Answer {
		body, err := obj.Body()
		require.NoError(b, err)
		w := httptest.NewRecorder()
		hooks.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/sync", bytes.NewReader(body)))
		require.Equal(b, http.StatusOK, w.Code, w.Body.String())
		resp, err := standin.Decode(w.Body.Bytes())
		require.NoError(b, err)
		require.NoError(b, obj.Apply(resp))
		return resp
	}
	steady := func(a *standin.Answer) bool {
		for _, c := range a.Status.Conditions {
			if c.Type == v1alpha1.ConditionReady && c.Status == "True" {
				return a.ResyncAfterSeconds == resyncSteady.Seconds()
			}
		}
		return false
	}
	for i := 0; !steady(sync()); i++ {
		require.Less(b, i, 20, "the object did not become steady: %+v", obj.Status())
		clock.Advance(createTime)
	}
	clock.Advance(view.DefaultSettle + time.Second)
	sync() // the view begins its listing of the project
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(b, shared.Refresh(ctx)) // joins it: no call of it is counted below

	body, err := obj.Body()
	require.NoError(b, err)
	srv.Sim.ResetCounters()
	sync()
	after, err := obj.Body()
	require.NoError(b, err)
	require.JSONEq(b, string(body), string(after), "a steady sync changes nothing")
	require.Empty(b, srv.Sim.CallCounts(), "a steady sync makes no OTC call")
	return hooks, body
}
