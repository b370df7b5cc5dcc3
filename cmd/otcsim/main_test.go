package main

import (
	"bufio"
	"context"
	"flag"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	"github.com/mcsps/rds-lambda-controller/internal/version"
	"github.com/mcsps/rds-lambda-controller/test/testutil"
)

func TestRunServesAndShutsDown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var stdout testutil.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--listen", "127.0.0.1:0", "--control", "--fault", "GetJob:status:status=503"}, &stdout, io.Discard)
	}()

	// NOTE: the exports are written one line at a time: wait for the last one (OS_USERNAME, in
	// sorted order), or the assertions below may read the output before the rest is written.
	var authURL string
	require.Eventually(t, func() bool {
		sc := bufio.NewScanner(strings.NewReader(stdout.String()))
		last := false
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "export OS_AUTH_URL="); ok {
				authURL = strings.Trim(v, `"`)
			}
			last = last || strings.HasPrefix(sc.Text(), "export OS_USERNAME=")
		}
		return authURL != "" && last
	}, 5*time.Second, 10*time.Millisecond)
	out := stdout.String()
	assert.Contains(t, out, `export OS_REGION_NAME="eu-de"`)
	assert.Contains(t, out, `export OS_PROJECT_NAME="eu-de"`)
	assert.Contains(t, out, `export OS_USERNAME="sim"`)

	resp, err := http.Get(strings.TrimSuffix(authURL, "/v3") + "/_sim/state")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("run did not return after cancel")
	}
}

// TestVersionAndHelp: --version prints the build's version; --help ends the run without a failure
// (main exits 0 on flag.ErrHelp).
func TestVersionAndHelp(t *testing.T) {
	var stdout strings.Builder
	require.NoError(t, run(context.Background(), []string{"--version"}, &stdout, io.Discard))
	assert.Equal(t, "otcsim "+version.Version+"\n", stdout.String())
	assert.ErrorIs(t, run(context.Background(), []string{"--help"}, io.Discard, io.Discard), flag.ErrHelp)
}

func TestParseFlags(t *testing.T) {
	cfg, err := parseFlags([]string{
		"--fault", "CreateInstance:commit-drop:rate=0.5", "--fault", "*:latency:delay=10ms",
		"--duration-create", "3s", "--latency", "5ms",
	}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:8790", cfg.listen)
	require.Len(t, cfg.faults, 2)
	assert.Equal(t, otcsim.FaultCommitThenDrop, cfg.faults[0].Kind)
	assert.Equal(t, 0.5, cfg.faults[0].Rate)
	assert.Equal(t, 3*time.Second, cfg.opts.Durations.Create)
	assert.Equal(t, otcsim.DefaultDurations().Backup, cfg.opts.Durations.Backup)
	assert.Equal(t, 5*time.Millisecond, cfg.opts.Latency)
	assert.False(t, cfg.opts.UniqueNames, "duplicate names are allowed, as in OTC")

	cfg, err = parseFlags([]string{"--unique-names"}, io.Discard)
	require.NoError(t, err)
	assert.True(t, cfg.opts.UniqueNames)

	cfg, err = parseFlags([]string{"--endpoint", "demo=127.0.0.1:3307", "--endpoint", "db.local:3306"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"demo": "127.0.0.1:3307", "*": "db.local:3306"}, cfg.opts.Endpoints)
	for _, bad := range []string{"demo=127.0.0.1", "=h:1", "h:70000"} {
		_, err = parseFlags([]string{"--endpoint", bad}, io.Discard)
		assert.Error(t, err, bad)
	}

	_, err = parseFlags([]string{"--fault", "CreateInstance:explode"}, io.Discard)
	require.Error(t, err)
	_, err = parseFlags([]string{"--fault", "Bogus:status"}, io.Discard)
	require.Error(t, err, "a fault on an operation that does not exist would never fire")
	assert.Contains(t, err.Error(), `unknown operation "Bogus"`)
	assert.Contains(t, err.Error(), "CreateInstance, CreateReplica, CreateTemporaryCredential", "it names the valid operations")
	cfg, err = parseFlags([]string{"--fault", "CreateToken:throttle:retry-after=7"}, io.Discard)
	require.NoError(t, err, "a bare number of seconds, as HTTP's Retry-After")
	assert.Equal(t, 7*time.Second, cfg.faults[0].RetryAfter)
	_, err = parseFlags([]string{"--latency", "-1s"}, io.Discard)
	require.ErrorContains(t, err, "--latency -1s: must not be negative")
	_, err = parseFlags([]string{"--duration-create", "-5s"}, io.Discard)
	require.ErrorContains(t, err, "--duration-create -5s: must not be negative")
	// --duration sets every operation's duration; a --duration-<operation> flag, before or after
	// it, overrides it.
	cfg, err = parseFlags([]string{"--duration-resize", "4s", "--duration", "1s", "--duration-create", "2s"}, io.Discard)
	require.NoError(t, err)
	want := otcsim.Durations{Create: 2 * time.Second, Delete: time.Second, Backup: time.Second, Resize: 4 * time.Second,
		Enlarge: time.Second, Restart: time.Second, SingleToHA: time.Second, Upgrade: time.Second, Restore: time.Second}
	assert.Equal(t, want, cfg.opts.Durations)
	cfg, err = parseFlags([]string{"--duration", "0"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, otcsim.DefaultDurations(), cfg.opts.Durations, "0: each operation's default")
	_, err = parseFlags([]string{"--duration", "-1s"}, io.Discard)
	require.ErrorContains(t, err, "--duration -1s: must not be negative")
	_, err = parseFlags([]string{"--manual-clock"}, io.Discard)
	require.Error(t, err)
}
