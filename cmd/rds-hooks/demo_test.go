package main

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/test/testdata"
)

// runDemo runs test/demo.sh against hooks and returns its exit code, stdout and stderr.
func runDemo(t *testing.T, hooks string) (int, string, string) {
	t.Helper()
	for _, tool := range []string{"bash", "curl", "jq"} {
		_, err := exec.LookPath(tool)
		require.NoError(t, err, "test/demo.sh needs %s (apt-get install %s)", tool, tool)
	}
	cmd := exec.Command("bash", filepath.Join(testdata.Dir(), "..", "demo.sh"), hooks)
	cmd.Env = append(os.Environ(), "DEMO_TRIES=3", "DEMO_INTERVAL=0")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), stdout.String(), stderr.String()
	}
	require.NoError(t, err)
	return 0, stdout.String(), stderr.String()
}

// TestDemoWithoutHooks: against nothing, demo.sh says what is wrong and fails (it used to exit 7,
// curl's code, without a word).
func TestDemoWithoutHooks(t *testing.T) {
	hooks := "http://" + freeAddr(t) // nothing listens there
	code, _, stderr := runDemo(t, hooks)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "demo.sh: the hooks do not answer at "+hooks+"/healthz")
	assert.Contains(t, stderr, "make run")
}

// TestDemoDoesNotDeleteWhenNeverReady: when Ready never comes, demo.sh stops after its bounded
// number of calls with a message, and never calls /finalize.
func TestDemoDoesNotDeleteWhenNeverReady(t *testing.T) {
	var syncs, finalizes atomic.Int32
	hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		switch r.URL.Path {
		case "/healthz":
			_, _ = io.WriteString(w, "ok")
		case "/sync":
			syncs.Add(1)
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"status":{"conditions":[{"type":"Ready","status":"False","reason":"Creating"}]},"children":[],"resyncAfterSeconds":10}`)
		case "/finalize":
			finalizes.Add(1)
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"status":{},"children":[],"finalized":true}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer hooks.Close()

	code, stdout, stderr := runDemo(t, hooks.URL)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "demo.sh: the Rds is not Ready after 3 sync calls: not deleting it")
	assert.Contains(t, stdout, "sync: status=- ready=False/Creating")
	assert.EqualValues(t, 3, syncs.Load())
	assert.Zero(t, finalizes.Load(), "no delete without Ready")
}
