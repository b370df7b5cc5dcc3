package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/test/testdata"
	"github.com/mcsps/rds-lambda-controller/test/testutil"
)

// TestRunBackedByMariaDB is `make run DB=HOST:PORT` and docs/simulator.md's walk-through: the hooks
// with the embedded simulator, every simulated instance backed by the test MariaDB (test/run.sh
// exports TEST_MYSQL_*), and the sample Rds with the database and user of
// test/testdata/curl/users.json. Played as Metacontroller plays it (each answer fed back), the
// instance goes ACTIVE and the hooks create the database and the user with its grant in MariaDB.
// The instance takes the simulator's real-time create duration (20 s).
func TestRunBackedByMariaDB(t *testing.T) {
	t.Parallel()
	addr := os.Getenv("TEST_MYSQL_ADDR")
	if addr == "" {
		if testing.Short() {
			t.Skip("end-to-end SQL test: TEST_MYSQL_ADDR is not set and -short is given")
		}
		t.Fatal(`TEST_MYSQL_ADDR is not set: start a throwaway MariaDB with eval "$(bash test/mariadb.sh)" or run bash test/run.sh`)
	}
	rootPassword := os.Getenv("TEST_MYSQL_PASSWORD")
	admin := openMySQL(t, addr, "root", rootPassword)
	dropDemo := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := admin.ExecContext(ctx, "DROP USER IF EXISTS 'demoapp'@'%'")
		assert.NoError(t, err)
		_, err = admin.ExecContext(ctx, "DROP DATABASE IF EXISTS demoshop")
		assert.NoError(t, err)
	}
	dropDemo()
	t.Cleanup(dropDemo)

	// The walk-through's request: the sample Rds, its root password the server's, plus users.json.
	req := map[string]any{}
	readJSON(t, filepath.Join(testdata.Dir(), "curl", "sync-create.json"), &req)
	spec := req["parent"].(map[string]any)["spec"].(map[string]any)
	readJSON(t, filepath.Join(testdata.Dir(), "curl", "users.json"), &spec)
	spec["password"] = rootPassword

	stdout := runUntilDatabasesReady(t, req, addr)

	// What the walk-through shows: the user and its grant, read straight from MariaDB.
	var grants []string
	rows, err := admin.QueryContext(context.Background(), "SHOW GRANTS FOR 'demoapp'@'%'")
	require.NoError(t, err)
	for rows.Next() {
		var g string
		require.NoError(t, rows.Scan(&g))
		grants = append(grants, g)
	}
	require.NoError(t, rows.Err())
	rows.Close()
	assert.Contains(t, grants, "GRANT SELECT, INSERT ON `demoshop`.* TO `demoapp`@`%`")

	app := openMySQL(t, addr, "demoapp", "Demo-App-Passw0rd")
	_, err = app.ExecContext(context.Background(), "CREATE TABLE demoshop.t (id INT)")
	assert.Error(t, err, "no CREATE privilege")
	require.NoError(t, app.PingContext(context.Background()), "the user logs in with its password")
	assert.NotContains(t, stdout.String(), rootPassword, "no root password in the logs")
	assert.NotContains(t, stdout.String(), "Demo-App-Passw0rd", "no user password in the logs")
}

// runUntilDatabasesReady runs the hooks against the embedded simulator with the endpoint given
// (--sim-endpoint), plays Metacontroller with req (each answer fed back) until DatabasesReady is
// True, and returns what the hooks logged. The hooks stop when the test ends.
func runUntilDatabasesReady(t *testing.T, req map[string]any, endpoint string) *testutil.Buffer {
	t.Helper()
	listen := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	stdout := &testutil.Buffer{}
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, []string{"--cloud", "sim", "--listen", listen, "--logs-listen", freeAddr(t), "--sim-endpoint", endpoint, "--insecure-no-auth"}, noEnv, stdout, io.Discard)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-errc:
			assert.NoError(t, err)
		case <-time.After(20 * time.Second):
			t.Error("run did not return after the context ended")
		}
	})
	base := "http://" + listen
	waitReady(t, base, errc)

	var conditions []map[string]any
	deadline := time.Now().Add(90 * time.Second)
	for !conditionTrue(conditions, "DatabasesReady") {
		require.True(t, time.Now().Before(deadline), "DatabasesReady never turned True: %v", conditions)
		req = syncAndFeed(t, base, req)
		status := req["parent"].(map[string]any)["status"].(map[string]any)
		conditions = nil
		for _, c := range status["conditions"].([]any) {
			conditions = append(conditions, c.(map[string]any))
		}
		if !conditionTrue(conditions, "DatabasesReady") {
			time.Sleep(time.Second)
		}
	}
	return stdout
}

func openMySQL(t *testing.T, addr, user, password string) *sql.DB {
	t.Helper()
	cfg := mysql.NewConfig()
	cfg.Net, cfg.Addr, cfg.User, cfg.Passwd = "tcp", addr, user, password
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = 10*time.Second, 10*time.Second, 10*time.Second
	connector, err := mysql.NewConnector(cfg)
	require.NoError(t, err)
	db := sql.OpenDB(connector)
	t.Cleanup(func() { db.Close() })
	return db
}

// readJSON merges a JSON file into v.
func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, v))
}

// syncAndFeed posts req to /sync and returns the next request, as test/testdata/curl/feed.jq builds
// it: the answer's status replaces the parent's, its children become the observed children.
func syncAndFeed(t *testing.T, base string, req map[string]any) map[string]any {
	t.Helper()
	body, err := json.Marshal(req)
	require.NoError(t, err)
	answer := postSync(t, base, body)
	req["parent"].(map[string]any)["status"] = answer.Status
	observed := map[string]map[string]any{"Secret.v1": {}, "Job.batch/v1": {}}
	for _, c := range answer.Children {
		key := map[string]string{"Secret": "Secret.v1", "Job": "Job.batch/v1"}[c["kind"].(string)]
		require.NotEmpty(t, key, "a child of kind %v", c["kind"])
		observed[key][c["metadata"].(map[string]any)["name"].(string)] = c
	}
	req["children"] = observed
	return req
}

func conditionTrue(conditions []map[string]any, typ string) bool {
	for _, c := range conditions {
		if c["type"] == typ {
			return strings.EqualFold(c["status"].(string), "True")
		}
	}
	return false
}
