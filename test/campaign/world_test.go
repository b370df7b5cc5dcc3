package campaign

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	"github.com/mcsps/rds-lambda-controller/server"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/view"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
	"github.com/mcsps/rds-lambda-controller/test/testutil"
)

var t0 = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

// world is one hook server wired to the real adapter and SDK, talking HTTP to a simulated OTC on a
// manual clock (as in test/e2e), with everything random drawn from the run's seed.
type world struct {
	t      testing.TB
	seed   uint64
	rng    *rand.Rand
	clock  *otcsim.ManualClock
	sim    *otcsim.Sim
	hooks  *httptest.Server
	logs   *testutil.Buffer
	faults *faultLog
	// autopilot: the run's object has spec.autopilot, and the hooks read the cloud through the
	// shared view (as cmd/rds-hooks wires them), whose metrics reading autopilot needs.
	autopilot bool
	// unlogged is how many records of the simulator's log the counters forgot (the login's):
	// settle compares the records after them with the requests counted.
	unlogged int
}

func newWorld(t testing.TB, seed uint64) *world {
	t.Helper()
	clock := otcsim.NewManualClock(t0)
	faults := &faultLog{fired: map[string]int{}}
	// UniqueNames off, as in OTC: a second create under the name makes a second instance, so only
	// the controller's look-up and its single flight stand between a lost answer and a duplicate.
	srv := otcsim.NewServer(otcsim.Options{Clock: clock, Seed: int64(seed), Logger: slog.New(faults), UniqueNames: false})
	t.Cleanup(srv.Close)

	client := testutil.Login(t, srv, nil)
	autopilot := seed%2 == 0
	var cl cloud.Cloud = client
	if autopilot {
		cl = view.New(client, view.Options{Now: clock.Now})
	}

	var key [32]byte
	key[0], key[1] = byte(seed), byte(seed>>8)
	logs := &testutil.Buffer{}
	rec := reconcile.New(reconcile.Config{
		Cloud: cl, Now: clock.Now, CallTimeout: 4 * time.Second,
		Random:      rand.NewChaCha8(key), // only without PasswordKey
		PasswordKey: secret.New(fmt.Sprintf("campaign key %d", seed)),
		JobImage:    "ghcr.io/mcsps/rds-lambda-controller:campaign",
	})
	hooks := httptest.NewServer(server.New(server.Options{
		// The hooks' authentication has tests of its own (server, cmd/rds-hooks, test/image.sh);
		// these play an authenticated Metacontroller.
		Insecure:   true,
		Reconciler: rec,
		Logger:     slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}))
	t.Cleanup(hooks.Close)
	w := &world{
		t: t, seed: seed, rng: rand.New(rand.NewPCG(seed, 0x5eed)), clock: clock, sim: srv.Sim,
		hooks: hooks, logs: logs, faults: faults, autopilot: autopilot,
	}
	w.settle()              // the login's records, before the counters forget it
	srv.Sim.ResetCounters() // the login above is not an RDS call
	w.unlogged = faults.logged()
	return w
}

// settle waits until the simulator's log holds the record of every request it counted. The
// simulator counts a request as it arrives and writes its record ("otcsim request": its path and
// status, from which replicaRequests and busyRefusal read) once its handler is done, and that can
// come after the hook already has its answer: a commit-then-drop fault closes the connection
// before the record is written (and the shared view may still be reading in the background). Read
// at once after the hook's answer, the log could lack the call's last request: a read replica's
// growth whose answer was dropped was counted as the instance's (seed 829 at 1500 seeds), and a
// security group change OTC refused as busy, its answer dropped, as a change (seed 398). This
// loosens nothing: every request is still counted, as what its record says it did.
func (w *world) settle() {
	w.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		counted := 0
		for _, n := range w.sim.CallCounts() {
			counted += n
		}
		logged := w.faults.logged() - w.unlogged
		if logged >= counted {
			return
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("seed=%d: the simulator counted %d requests and logged %d", w.seed, counted, logged)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// faultLog counts the simulator's "otcsim fault" log records per operation: the faults that
// refused a request (status, throttle), so that a retried change is not mistaken for a repeated
// one. Commit-then-drop faults performed the request and are counted apart.
type faultLog struct {
	mu        sync.Mutex
	fired     map[string]int // op -> refused requests
	committed map[string]int // op -> performed, then dropped
	total     int
	// requests are the requests the simulator served, in order (replicas_test.go tells a read
	// replica's resize from the instance's by its path).
	requests []simRequest
}

// simRequest is one request the simulator served: its operation, path and HTTP status (0 when its
// answer was dropped).
type simRequest struct {
	op, path string
	status   int
}

// logged is how many requests the simulator has written its record of.
func (f *faultLog) logged() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

// served returns the requests served since the first n.
func (f *faultLog) served(n int) ([]simRequest, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests[min(n, len(f.requests)):]), len(f.requests)
}

func (f *faultLog) Enabled(context.Context, slog.Level) bool { return true }
func (f *faultLog) WithAttrs([]slog.Attr) slog.Handler       { return f }
func (f *faultLog) WithGroup(string) slog.Handler            { return f }

func (f *faultLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "otcsim request" {
		f.busyRefusal(r)
		var q simRequest
		r.Attrs(func(a slog.Attr) bool {
			switch a.Key {
			case "op":
				q.op = a.Value.String()
			case "path":
				q.path = a.Value.String()
			case "status":
				q.status = int(a.Value.Int64())
			}
			return true
		})
		f.mu.Lock()
		defer f.mu.Unlock()
		f.requests = append(f.requests, q)
		return nil
	}
	if r.Message != "otcsim fault" {
		return nil
	}
	var op, kind string
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "op":
			op = a.Value.String()
		case "kind":
			kind = a.Value.String()
		}
		return true
	})
	f.mu.Lock()
	defer f.mu.Unlock()
	f.total++
	if kind == otcsim.FaultCommitThenDrop.String() {
		if f.committed == nil {
			f.committed = map[string]int{}
		}
		f.committed[op]++
		return nil
	}
	f.fired[op]++
	return nil
}

// busyRefusal counts a request OTC answered 409 (busy: DBS.200019, or a backup already running)
// as refused: nothing was done, as for a refusal an injected fault made. OTC keeps an instance
// ACTIVE while it moves it to another security group (sync/day2_network.go), so a call may send
// the next change, or a duplicate of that one, while it runs; OTC refuses it, and the hooks retry
// (InstanceBusy), as docs/day2.md says.
func (f *faultLog) busyRefusal(r slog.Record) {
	var op string
	var status int64
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "op":
			op = a.Value.String()
		case "status":
			status = a.Value.Int64()
		}
		return true
	})
	if status != http.StatusConflict {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fired[op]++ // also when its answer was dropped (commit-then-drop): nothing was done
}

// snapshot returns the refused requests per operation and how many faults fired in all.
func (f *faultLog) snapshot() (map[string]int, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.fired), f.total
}

// post sends a raw body to a hook and returns the HTTP status and body.
func (w *world) post(path string, body []byte) (int, []byte) {
	w.t.Helper()
	resp, err := http.Post(w.hooks.URL+path, "application/json", bytes.NewReader(body))
	require.NoError(w.t, err, "seed=%d", w.seed)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(w.t, err, "seed=%d", w.seed)
	return resp.StatusCode, out
}
