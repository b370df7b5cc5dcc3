package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	"github.com/mcsps/rds-lambda-controller/server"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
	"github.com/mcsps/rds-lambda-controller/test/testutil"
)

var t0 = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)

// jobEnv is a simulator with two MySQL instances, the hooks (logged in to it) serving their logs
// port, and the environment the log Job of the object that adopted the first instance gets: its
// Secret's data, as the hooks answered it to a sync call.
type jobEnv struct {
	srv   *otcsim.Server
	sim   *otcsim.Sim
	clock *otcsim.ManualClock
	r     *reconcile.Reconciler
	logs  *httptest.Server
	id    string
	other string // another object's instance
	job   testutil.LogJobInput
	env   map[string]string
}

// jobRequest is the request the Job answers: wide enough for every test's flags.
var jobRequest = v1alpha1.LogsRequest{Request: "r1", Since: "6h", Lines: 2000}

func newJobEnv(t *testing.T) *jobEnv {
	t.Helper()
	clock := otcsim.NewManualClock(t0)
	srv := otcsim.NewServer(otcsim.Options{Clock: clock})
	t.Cleanup(srv.Close)
	id, err := srv.Sim.AddInstance(otcsim.InstanceSpec{Name: "shop-db"})
	require.NoError(t, err)
	other, err := srv.Sim.AddInstance(otcsim.InstanceSpec{Name: "other-db"})
	require.NoError(t, err)

	client := testutil.Login(t, srv, nil)
	r := reconcile.New(reconcile.Config{Cloud: client, Now: clock.Now, JobImage: "img:1", PasswordKey: secret.New("hooks key")})
	logs := httptest.NewServer(server.NewLogs(server.LogsOptions{Reader: r}))
	t.Cleanup(logs.Close)
	job := testutil.LogJob(t, r, testutil.AdoptingRds("shop", "orders", id, jobRequest))

	env := map[string]string{"RDS_INSTANCE_ID": id}
	for k, v := range job.Env {
		env[k] = v
	}
	require.Equal(t, "http://rds-hooks.rds-system.svc:8081", env["RDS_LOGS_URL"], "the in-cluster Service")
	env["RDS_LOGS_URL"] = logs.URL // the same port, reached from the test
	srv.Sim.ResetCounters()
	return &jobEnv{srv: srv, sim: srv.Sim, clock: clock, r: r, logs: logs, id: id, other: other, job: job, env: env}
}

// runJob runs rds-logs with the window ending at t0 (before the simulator's start-up lines).
func (e *jobEnv) runJob(t *testing.T, args ...string) (stdout string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	args = append([]string{"--until", t0.Add(-time.Second).Format(time.RFC3339)}, args...)
	err = run(ctx, args, func(k string) string { return e.env[k] }, &out, &errOut)
	assert.Empty(t, errOut.String(), "run reports failures only through its error")
	return out.String(), err
}

// requireOneLine checks that a failure is one clear line without SDK details.
func requireOneLine(t *testing.T, err error, want string) {
	t.Helper()
	require.Error(t, err)
	assert.Contains(t, err.Error(), want)
	assert.NotContains(t, err.Error(), "\n")
	assert.NotContains(t, err.Error(), "http")
	assert.NotContains(t, err.Error(), "{")
}

func TestPrintsBothLogsOldestFirst(t *testing.T) {
	e := newJobEnv(t)
	require.NoError(t, e.sim.AddErrorLog(e.id, t0.Add(-50*time.Minute), "ERROR", "first"))
	require.NoError(t, e.sim.AddErrorLog(e.id, t0.Add(-10*time.Minute), "WARNING", "second\nwith \x1b[31mcolour"))
	require.NoError(t, e.sim.AddErrorLog(e.id, t0.Add(-3*time.Hour), "ERROR", "outside the window"))
	require.NoError(t, e.sim.AddSlowLog(e.id, otcsim.SlowLogEntry{
		Time: t0.Add(-20 * time.Minute), Duration: 2500 * time.Millisecond, Type: "SELECT", Database: "shop", User: "app",
		Query: "SELECT * FROM orders", ClientIP: "10.1.2.3",
	}))

	out, err := e.runJob(t)
	require.NoError(t, err)
	want := fmt.Sprintf(`== error log of instance %[1]s from 2026-05-01T08:59:59Z to 2026-05-01T09:59:59Z: 2 entries ==
2026-05-01T09:10:00  ERROR    first
2026-05-01T09:50:00  WARNING  second with [31mcolour

== slow query log of instance %[1]s from 2026-05-01T08:59:59Z to 2026-05-01T09:59:59Z: 1 entry ==
2026-05-01T09:40:00  2.50000 s  SELECT  db=shop user=app client=10.*.*.3 rows_sent=0 rows_examined=0 lock=0.00003 s
    SELECT * FROM orders

`, e.id)
	assert.Equal(t, want, out)
	assert.Equal(t, 0, e.sim.Calls(otcsim.OpCreateToken), "nothing logs in: the hooks read with their own client")
	assert.Zero(t, e.sim.MutatingCalls())
}

func TestPaging(t *testing.T) {
	e := newJobEnv(t)
	for i := range 250 {
		require.NoError(t, e.sim.AddErrorLog(e.id, t0.Add(-5*time.Hour+time.Duration(i)*time.Minute), "NOTE", fmt.Sprintf("line %03d", i)))
	}
	cases := map[string]struct {
		reason    string
		lines     string
		wantHead  string
		wantFirst string
		wantPages int
	}{
		"capped":  {reason: "the newest 150 take two pages of 100", lines: "150", wantHead: "the newest 150 of 250 entries", wantFirst: "line 100", wantPages: 2},
		"all":     {reason: "every page until the total", lines: "2000", wantHead: "250 entries", wantFirst: "line 000", wantPages: 3},
		"default": {reason: "200 lines unless asked", lines: "200", wantHead: "the newest 200 of 250 entries", wantFirst: "line 050", wantPages: 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e.sim.ResetCounters()
			out, err := e.runJob(t, "--since", "6h", "--types", "error", "--lines", tc.lines)
			require.NoError(t, err, tc.reason)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			assert.Contains(t, lines[0], tc.wantHead, tc.reason)
			assert.Contains(t, lines[1], tc.wantFirst, "oldest shown entry first: "+tc.reason)
			assert.Contains(t, lines[len(lines)-1], "line 249", "the newest entry last: "+tc.reason)
			assert.Equal(t, tc.wantPages, e.sim.Calls(otcsim.OpListErrorLogs), tc.reason)
			assert.Zero(t, e.sim.Calls(otcsim.OpListSlowLogs), "only the asked-for log")
		})
	}
}

func TestEmptyWindow(t *testing.T) {
	e := newJobEnv(t)
	out, err := e.runJob(t, "--since", "30m")
	require.NoError(t, err, "nothing to show is no failure")
	assert.Contains(t, out, "error log of instance "+e.id)
	assert.Contains(t, out, "slow query log of instance "+e.id)
	assert.Equal(t, 2, strings.Count(out, "no entries =="))
}

func TestOutputIsBounded(t *testing.T) {
	e := newJobEnv(t)
	long := strings.Repeat("x", 10000)
	for i := range 50 {
		require.NoError(t, e.sim.AddErrorLog(e.id, t0.Add(-time.Duration(i+1)*time.Minute), "ERROR", long))
	}
	out, err := e.runJob(t, "--types", "error", "--max-bytes", "20000")
	require.NoError(t, err)
	assert.LessOrEqual(t, len(out), 20000+len("... output cut at 20000 bytes\n"))
	assert.True(t, strings.HasSuffix(out, "[...]\n... output cut at 20000 bytes\n"), "cut after a whole entry, and says so")
	assert.Less(t, strings.Count(out, "\n"), 10, "each entry is cut to a few KiB")
}

func TestFailures(t *testing.T) {
	cases := map[string]struct {
		reason string
		setup  func(e *jobEnv)
		args   []string
		want   string
	}{
		"API error": {
			reason: "a server error names the log and OTC's answer",
			setup: func(e *jobEnv) {
				e.sim.AddFault(otcsim.Fault{Op: otcsim.OpListSlowLogs, Kind: otcsim.FaultStatus, Status: 500})
			},
			want: "cannot read the slow query log: OTC did not answer",
		},
		"expired capability": {
			reason: "the capability lives 15 minutes",
			setup:  func(e *jobEnv) { e.clock.Advance(16 * time.Minute) },
			want:   "the hooks refused the capability: the capability expired at 2026-05-01T10:15:00Z; set a new logs.request to read the logs again",
		},
		"another instance": {
			reason: "the capability names one instance",
			setup:  func(e *jobEnv) { e.env["RDS_INSTANCE_ID"] = e.other },
			want:   "the hooks refused the request: the capability is for another instance",
		},
		"wider than the request": {
			reason: "a read may only narrow the request",
			args:   []string{"--since", "7h"},
			want:   "the hooks refused the request: since must be a duration up to 6h",
		},
		"no capability": {
			reason: "the Secret is not mounted",
			setup:  func(e *jobEnv) { delete(e.env, "RDS_LOGS_TOKEN") },
			want:   "no capability: RDS_LOGS_TOKEN is not set",
		},
		"no URL": {
			reason: "the Secret is not mounted",
			setup:  func(e *jobEnv) { delete(e.env, "RDS_LOGS_URL") },
			want:   "no logs port: --url (or RDS_LOGS_URL) must name the hooks' logs port",
		},
		"hooks out of reach": {
			reason: "a NetworkPolicy or a rollout",
			setup:  func(e *jobEnv) { e.env["RDS_LOGS_URL"] = "http://127.0.0.1:1" },
			args:   []string{"--timeout", "3s"},
			want:   "cannot reach the hooks' logs port (does a NetworkPolicy block it?): dial tcp 127.0.0.1:1",
		},
		"bad arguments": {
			reason: "all problems in one line",
			args:   []string{"--lines", "0", "--types", "error,general"},
			want:   `bad arguments: --lines must be between 1 and 2000; --types: unknown log type "general" (want error, slow)`,
		},
		"unknown flag": {
			reason: "flag errors are one line too",
			args:   []string{"--verbose"},
			want:   "bad arguments: flag provided but not defined: -verbose",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := newJobEnv(t)
			token := e.env["RDS_LOGS_TOKEN"]
			if tc.setup != nil {
				tc.setup(e)
			}
			out, err := e.runJob(t, tc.args...)
			requireOneLine(t, err, tc.want)
			assert.NotContains(t, out, token, tc.reason)
			assert.NotContains(t, err.Error(), token, tc.reason)
		})
	}
}

func TestTokenFromFile(t *testing.T) {
	e := newJobEnv(t)
	require.NoError(t, e.sim.AddErrorLog(e.id, t0.Add(-time.Minute), "ERROR", "from a mounted Secret"))
	file := filepath.Join(t.TempDir(), "RDS_LOGS_TOKEN")
	require.NoError(t, os.WriteFile(file, []byte(e.env["RDS_LOGS_TOKEN"]+"\n"), 0o600))
	delete(e.env, "RDS_LOGS_TOKEN")
	out, err := e.runJob(t, "--token-file", file, "--types", "error")
	require.NoError(t, err)
	assert.Contains(t, out, "from a mounted Secret")
}

func TestHelp(t *testing.T) {
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"--help"}, func(string) string { return "" }, &out, &errOut)
	require.NoError(t, err, "--help exits 0")
	for _, want := range []string{"usage: rds-logs --instance <id>", "RDS_LOGS_TOKEN", "RDS_LOGS_URL", "-since duration", "-token-file"} {
		assert.Contains(t, out.String(), want, "--help prints the usage, what the Job needs and the flags")
	}
	assert.NotContains(t, out.String(), "OS_ACCESS_KEY", "the Job holds no OTC credential")
	assert.Empty(t, errOut.String())
}
