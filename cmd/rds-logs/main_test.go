package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/version"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/otc"
	"github.com/mcsps/rds-lambda-controller/test/otcsim"
)

var t0 = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)

// jobEnv is a simulator with one MySQL instance, and the environment the log Job gets: a temporary
// AK/SK the controller's own login issued.
type jobEnv struct {
	sim   *otcsim.Sim
	clock *otcsim.ManualClock
	id    string
	env   map[string]string
}

func newJobEnv(t *testing.T) *jobEnv {
	t.Helper()
	clock := otcsim.NewManualClock(t0)
	srv := otcsim.NewServer(otcsim.Options{Clock: clock})
	t.Cleanup(srv.Close)
	id, err := srv.Sim.AddInstance(otcsim.InstanceSpec{Name: "shop-db"})
	require.NoError(t, err)

	simEnv := srv.Env()
	cfg, err := otc.ConfigFromEnv(func(k string) string { return simEnv[k] })
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	controller, err := otc.New(ctx, cfg)
	require.NoError(t, err)
	cred, err := controller.CreateTemporaryCredential(ctx, 15*time.Minute)
	require.NoError(t, err)
	srv.Sim.ResetCounters()
	return &jobEnv{sim: srv.Sim, clock: clock, id: id, env: map[string]string{
		"OS_AUTH_URL": cred.AuthURL, "OS_PROJECT_ID": cred.ProjectID, "OS_REGION_NAME": cred.Region,
		"OS_ACCESS_KEY": cred.AccessKey, "OS_SECRET_KEY": cred.SecretKey.Reveal(), "OS_SECURITY_TOKEN": cred.SecurityToken.Reveal(),
		"RDS_INSTANCE_ID": id,
	}}
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
	assert.Equal(t, 0, e.sim.Calls(otcsim.OpCreateToken), "the Job never logs in with a password")
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
		"expired credential": {
			reason: "the temporary AK/SK lives 15 minutes",
			setup:  func(e *jobEnv) { e.clock.Advance(16 * time.Minute) },
			want:   "OTC refused the credentials; they may have expired (ask again with a new request): The security token has expired. (IAM.1108)",
		},
		"unknown instance": {
			reason: "the instance is gone",
			setup:  func(e *jobEnv) { e.env["RDS_INSTANCE_ID"] = "0123456789abcdef0123456789abcdefin01" },
			want:   "cannot read the error log: OTC does not know the instance",
		},
		"no credentials": {
			reason: "the Secret is not mounted",
			setup:  func(e *jobEnv) { delete(e.env, "OS_ACCESS_KEY") },
			want:   "no credentials: OS_ACCESS_KEY is not set",
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
			if tc.setup != nil {
				tc.setup(e)
			}
			out, err := e.runJob(t, tc.args...)
			requireOneLine(t, err, tc.want)
			assert.NotContains(t, out, e.env["OS_SECRET_KEY"], tc.reason)
		})
	}
}

func TestCredentialsFromFiles(t *testing.T) {
	e := newJobEnv(t)
	require.NoError(t, e.sim.AddErrorLog(e.id, t0.Add(-time.Minute), "ERROR", "from a mounted Secret"))
	dir := t.TempDir()
	for k, v := range e.env {
		if strings.HasPrefix(k, "OS_") {
			require.NoError(t, os.WriteFile(filepath.Join(dir, k), []byte(v+"\n"), 0o600))
			delete(e.env, k)
		}
	}
	out, err := e.runJob(t, "--credentials-dir", dir, "--types", "error")
	require.NoError(t, err)
	assert.Contains(t, out, "from a mounted Secret")
}

func TestHelp(t *testing.T) {
	_, err := parseFlags([]string{"--help"}, func(string) string { return "" })
	require.Error(t, err, "--help ends the run")
	assert.ErrorIs(t, err, flag.ErrHelp, "main prints it and exits 0")
	for _, want := range []string{"usage: rds-logs --instance <id>", "OS_SECURITY_TOKEN", "-since duration", "-credentials-dir"} {
		assert.Contains(t, err.Error(), want, "--help prints the usage, the credentials and the flags")
	}
}

// TestVersion: --version prints the build's version, whatever else is missing.
func TestVersion(t *testing.T) {
	var stdout strings.Builder
	require.NoError(t, run(context.Background(), []string{"--version"}, func(string) string { return "" }, &stdout, io.Discard))
	assert.Equal(t, "rds-logs "+version.Version+"\n", stdout.String())
}
