package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/test/testdata"
)

// TestRunBackedByPostgreSQL is `make run DB=engine:PostgreSQL=HOST:PORT` and docs/simulator.md's
// PostgreSQL walk-through: the hooks with the embedded simulator, its PostgreSQL instances backed
// by the test PostgreSQL (test/run.sh exports TEST_PG_*), and the sample Rds made a PostgreSQL one
// with the database and user of test/testdata/curl/users-pg.json. Played as Metacontroller plays
// it, the instance goes ACTIVE and the hooks create the database and the role with its grants.
// The instance takes the simulator's real-time create duration (20 s): it runs beside
// TestRunBackedByMariaDB.
func TestRunBackedByPostgreSQL(t *testing.T) {
	t.Parallel()
	addr := os.Getenv("TEST_PG_ADDR")
	if addr == "" {
		if testing.Short() {
			t.Skip("end-to-end SQL test: TEST_PG_ADDR is not set and -short is given")
		}
		t.Fatal(`TEST_PG_ADDR is not set: start a throwaway PostgreSQL with eval "$(bash test/postgres.sh)" or run bash test/run.sh`)
	}
	rootPassword := os.Getenv("TEST_PG_PASSWORD")
	host, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	psql := func(user, password, db, sql string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, "psql", "--no-psqlrc", "-X", "-w", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1",
			"-h", host, "-p", port, "-U", user, "-d", db, "-c", sql)
		cmd.Env = append(os.Environ(), "PGPASSWORD="+password, "PGCONNECT_TIMEOUT=10")
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	dropDemo := func() {
		_, _ = psql("root", rootPassword, "postgres", "DROP DATABASE IF EXISTS demoshop")
		_, _ = psql("root", rootPassword, "postgres", "DROP ROLE IF EXISTS demoapp")
	}
	dropDemo()
	t.Cleanup(dropDemo)

	req := map[string]any{}
	readJSON(t, filepath.Join(testdata.Dir(), "curl", "sync-create.json"), &req)
	spec := req["parent"].(map[string]any)["spec"].(map[string]any)
	readJSON(t, filepath.Join(testdata.Dir(), "curl", "users-pg.json"), &spec)
	spec["password"] = rootPassword

	stdout := runUntilDatabasesReady(t, req, "engine:PostgreSQL="+addr)

	// What the walk-through shows, read with psql: the role, its database, its grants.
	_, err = psql("root", rootPassword, "demoshop", "CREATE TABLE public.orders (id int)")
	require.NoError(t, err)
	out, err := psql("demoapp", "Demo-App-Passw0rd", "demoshop", "SELECT current_user || ' ' || has_schema_privilege('public', 'USAGE')")
	require.NoError(t, err, out)
	assert.Equal(t, "demoapp true", out, "the role logs in to its database with its password")
	assert.NotContains(t, stdout.String(), rootPassword, "no root password in the logs")
	assert.NotContains(t, stdout.String(), "Demo-App-Passw0rd", "no user password in the logs")
}
