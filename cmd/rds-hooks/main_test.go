package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/sync/cloud/otc"
	"github.com/mcsps/rds-lambda-controller/test/testdata"
	"github.com/mcsps/rds-lambda-controller/test/testutil"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

func noEnv(string) string { return "" }

// waitReady polls /readyz until it answers 200.
func waitReady(t *testing.T, base string, errc <-chan error) {
	t.Helper()
	for range 200 {
		select {
		case err := <-errc:
			t.Fatalf("run returned early: %v", err)
		default:
		}
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("rds-hooks did not become ready")
}

// TestRunWithEmbeddedSimulator is `make run`: the hooks serve against the embedded simulator, a
// sync call with the sample object answers with a status and the connection Secret, and SIGTERM
// (the context) stops the server cleanly.
func TestRunWithEmbeddedSimulator(t *testing.T) {
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout, stderr := &testutil.Buffer{}, &testutil.Buffer{}
	errc := make(chan error, 1)
	go func() { errc <- run(ctx, []string{"--cloud", "sim", "--listen", addr}, noEnv, stdout, stderr) }()
	base := "http://" + addr
	waitReady(t, base, errc)

	body, err := os.ReadFile(filepath.Join(testdata.Dir(), "curl", "sync-create.json"))
	require.NoError(t, err)
	resp, err := http.Post(base+"/sync", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(out))
	var answer struct {
		Status   map[string]any   `json:"status"`
		Children []map[string]any `json:"children"`
	}
	require.NoError(t, json.Unmarshal(out, &answer))
	require.Len(t, answer.Children, 1)
	assert.Equal(t, "my-rds-single-connection", answer.Children[0]["metadata"].(map[string]any)["name"])

	metrics, err := http.Get(base + "/metrics")
	require.NoError(t, err)
	text, _ := io.ReadAll(metrics.Body)
	metrics.Body.Close()
	for _, want := range []string{
		`rds_hooks_hook_duration_seconds_count{hook="sync",outcome="ok"} 1`,
		`rds_hooks_otc_calls_total{operation="FindInstanceByName",result="notfound"} 1`, // no instance yet
		"go_goroutines",
	} {
		assert.True(t, strings.Contains(string(text), want), "/metrics has %s", want)
	}

	assert.Contains(t, stderr.String(), "curl -s -XPOST "+base+"/sync", "it tells a person how to try it")
	assert.Contains(t, stdout.String(), `"msg":"rds-hooks listening"`)
	assert.NotContains(t, stdout.String(), "A12345678+", "no password in the logs")

	cancel()
	select {
	case err := <-errc:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("run did not return after the context ended")
	}
	assert.Contains(t, stdout.String(), `"msg":"stopped"`)
}

// TestRunRefusesWithoutCredentials: the default is the real OTC; without credentials the binary
// says so and exits, never falling back to the simulator.
func TestRunRefusesWithoutCredentials(t *testing.T) {
	err := run(context.Background(), []string{"--listen", freeAddr(t)}, noEnv, io.Discard, io.Discard)
	require.ErrorIs(t, err, otc.ErrNoCredentials)
	assert.Contains(t, err.Error(), "OS_AUTH_URL")
	assert.Contains(t, err.Error(), "--cloud sim")
}

func TestParseFlags(t *testing.T) {
	cases := map[string]struct {
		reason  string
		args    []string
		env     map[string]string
		check   func(t *testing.T, c config)
		wantErr string
	}{
		"defaults": {
			reason: "the real cloud, on loopback, with deadlines under Metacontroller's 10s",
			check: func(t *testing.T, c config) {
				assert.Equal(t, cloudOTC, c.cloud)
				assert.Equal(t, "127.0.0.1:8080", c.listen)
				assert.Equal(t, 8*time.Second, c.hookTimeout)
				assert.Equal(t, 4*time.Second, c.callTimeout)
				assert.Equal(t, 2*time.Minute, c.viewMaxAge, "steady syncs read the shared view")
			},
		},
		"view off": {
			reason: "--view-max-age 0 reads every instance fresh",
			args:   []string{"--view-max-age", "0"},
			check:  func(t *testing.T, c config) { assert.Zero(t, c.viewMaxAge) },
		},
		"environment": {
			reason: "every flag has an RDS_HOOKS_ variable",
			env:    map[string]string{"RDS_HOOKS_LISTEN": ":9000", "RDS_HOOKS_JOB_IMAGE": "example/img:1", "RDS_HOOKS_RESYNC_STEADY": "1m", "RDS_HOOKS_LOG_LEVEL": "debug"},
			check: func(t *testing.T, c config) {
				assert.Equal(t, ":9000", c.listen)
				assert.Equal(t, "example/img:1", c.jobImage)
				assert.Equal(t, time.Minute, c.resyncSteady)
				assert.Equal(t, "DEBUG", c.logLevel.String())
			},
		},
		"flags win over the environment": {
			reason: "a flag is the more specific setting",
			args:   []string{"--listen", ":7000"},
			env:    map[string]string{"RDS_HOOKS_LISTEN": ":9000"},
			check:  func(t *testing.T, c config) { assert.Equal(t, ":7000", c.listen) },
		},
		"unknown cloud": {
			reason:  "only otc and sim exist",
			args:    []string{"--cloud", "aws"},
			wantErr: `--cloud must be "otc" or "sim"`,
		},
		"hook deadline too short": {
			reason:  "one cloud call must fit in a hook call",
			args:    []string{"--hook-timeout", "2s", "--call-timeout", "3s"},
			wantErr: "must be longer",
		},
		"stray argument": {
			reason:  "a typo is not ignored",
			args:    []string{"sim"},
			wantErr: "unexpected arguments",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := parseFlags(tc.args, func(k string) string { return tc.env[k] }, io.Discard)
			if tc.wantErr != "" {
				require.Error(t, err, tc.reason)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err, tc.reason)
			tc.check(t, c)
		})
	}
}

// TestUsageNamesEveryFlag keeps --help useful.
func TestUsageNamesEveryFlag(t *testing.T) {
	var out bytes.Buffer
	_, err := parseFlags([]string{"--help"}, noEnv, &out)
	require.Error(t, err)
	for _, f := range []string{"-listen", "-cloud", "-job-image", "-hook-timeout", "-call-timeout", "-resync-steady", "-log-level"} {
		assert.True(t, strings.Contains(out.String(), f), f)
	}
}
