package reconcile_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/dbusers"
	"github.com/mcsps/rds-lambda-controller/sync/hook"
	"github.com/mcsps/rds-lambda-controller/test/metacontroller"
	"github.com/mcsps/rds-lambda-controller/test/testutil"
)

// These end-to-end tests wire the reconciler to the real OTC adapter, the simulator and a real
// MariaDB (test/mariadb.sh; test/run.sh starts it and exports TEST_MYSQL_ADDR, TEST_MYSQL_USER and
// TEST_MYSQL_PASSWORD). The simulated instance's endpoint is the MariaDB, and its root password
// (spec.password) is the MariaDB root's, so the hook logs in exactly as it would on RDS. Without
// TEST_MYSQL_ADDR they fail, unless -short is given. The test's databases and users carry a
// random prefix and are dropped afterwards: the server may be shared.
//
// NOTE: the checks read the server through the MySQL driver directly, independently of dbusers.

// simRds is one Rds object driven the way Metacontroller drives it, its instance in the
// simulator backed by the real server at addr, each apply of its SQL layer counted.
type simRds struct {
	t     *testing.T
	clock *otcsim.ManualClock
	sim   *otcsim.Sim
	r     *reconcile.Reconciler
	// mc is the object as Metacontroller and the cluster hold it.
	mc     *metacontroller.Object
	addr   string
	prefix string

	applies int      // calls of the SQL layer's Apply
	changes []string // Result.Changes of the last Apply
}

// newSimRds makes the reconciler over the simulator, with apply (the engine's SQL layer)
// counted, for an object of spec named shop-db in a namespace of its own.
func newSimRds(t *testing.T, addr string, apply func(context.Context, dbusers.Conn, dbusers.Desired, dbusers.ManagedState) (dbusers.Result, error), spec v1alpha1.RdsSpec) *simRds {
	t.Helper()
	clock := otcsim.NewManualClock(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC))
	srv := otcsim.NewServer(otcsim.Options{Clock: clock})
	t.Cleanup(srv.Close)
	client := testutil.Login(t, srv, nil)

	b := make([]byte, 3)
	_, _ = rand.Read(b)
	e := &simRds{t: t, clock: clock, sim: srv.Sim, addr: addr, prefix: "e2e" + hex.EncodeToString(b)}
	e.r = reconcile.New(reconcile.Config{
		Cloud: client, Now: clock.Now,
		Databases: reconcile.DatabasesConfig{DriftCheck: e2eDrift, Apply: func(ctx context.Context, conn dbusers.Conn, d dbusers.Desired, m dbusers.ManagedState) (dbusers.Result, error) {
			e.applies++
			res, err := apply(ctx, conn, d, m)
			e.changes = res.Changes
			return res, err
		}},
	})
	parent := v1alpha1.Rds{
		ObjectMeta: metav1.ObjectMeta{Name: "shop-db", Namespace: "team-" + e.prefix, UID: "uid-1", Generation: 1},
		Spec:       spec,
	}
	e.mc = metacontroller.NewRds(parent)
	require.Empty(t, reconcile.Validate(&parent.Spec),
		"the test server's root password must also be a valid OTC root password (8-32 characters, three classes); test/mariadb.sh and test/postgres.sh generate such")
	return e
}

// dbE2E is simRds on MySQL (MariaDB), with an admin connection to check the server.
type dbE2E struct {
	*simRds
	admin *sql.DB
}

const e2eDrift = 30 * time.Minute

func newDBE2E(t *testing.T) *dbE2E {
	t.Helper()
	addr := os.Getenv("TEST_MYSQL_ADDR")
	if addr == "" {
		if testing.Short() {
			t.Skip("end-to-end SQL test: TEST_MYSQL_ADDR is not set and -short is given")
		}
		t.Fatal(`TEST_MYSQL_ADDR is not set: start a throwaway MariaDB with eval "$(bash test/mariadb.sh)" or run bash test/run.sh`)
	}
	rootUser, rootPassword := os.Getenv("TEST_MYSQL_USER"), os.Getenv("TEST_MYSQL_PASSWORD")
	require.Contains(t, []string{"", "root"}, rootUser, "the hook logs in as root")

	port := intstr.FromInt32(3306)
	e := &dbE2E{simRds: newSimRds(t, addr, dbusers.Apply, v1alpha1.RdsSpec{
		Datastoretype: "MySQL", Datastoreversion: "8.0", Flavorref: "rds.mysql.n1.large.2",
		Volumetype: "CLOUDSSD", Volumesize: 40, Availabilityzone: "eu-de-01", Region: otcsim.Region,
		Vpc: "frank-test", Subnet: "frank-test", Securitygroup: "golang", Port: &port,
		// The instance's root password is the test server's: the hook reaches the MariaDB as root.
		Password: rootPassword,
	})}
	e.admin = e.open("root", rootPassword)
	t.Cleanup(e.cleanup)
	return e
}

// n prefixes a name with the test's prefix.
func (e *simRds) n(name string) string { return e.prefix + name }

func (e *dbE2E) open(user, password string) *sql.DB {
	cfg := mysql.NewConfig()
	cfg.Net, cfg.Addr, cfg.User, cfg.Passwd = "tcp", e.addr, user, password
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = 10*time.Second, 10*time.Second, 10*time.Second
	connector, err := mysql.NewConnector(cfg)
	require.NoError(e.t, err)
	return sql.OpenDB(connector)
}

func (e *dbE2E) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	defer e.admin.Close()
	for _, u := range e.query(ctx, "SELECT CONCAT(User, '@', Host) FROM mysql.user WHERE User LIKE ?", e.prefix+"%") {
		name, host, _ := strings.Cut(u, "@")
		_, _ = e.admin.ExecContext(ctx, "DROP USER IF EXISTS '"+name+"'@'"+host+"'")
	}
	for _, db := range e.query(ctx, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE ?", e.prefix+"%") {
		_, _ = e.admin.ExecContext(ctx, "DROP DATABASE IF EXISTS `"+db+"`")
	}
}

func (e *dbE2E) query(ctx context.Context, q string, args ...any) []string {
	e.t.Helper()
	rows, err := e.admin.QueryContext(ctx, q, args...)
	require.NoError(e.t, err, q)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		require.NoError(e.t, rows.Scan(&s))
		out = append(out, s)
	}
	require.NoError(e.t, rows.Err())
	return out
}

// sync runs one sync call and feeds its answer back as the next call's observed state.
func (e *simRds) sync() *hook.SyncResponse {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	resp, err := e.mc.Sync(ctx, e.r)
	require.NoError(e.t, err)
	return resp
}

// edit changes the spec as a user would: the generation moves.
func (e *simRds) edit(change func(*v1alpha1.RdsSpec)) { e.mc.EditRds(change) }

func (e *simRds) condition(typ string) v1alpha1.Condition {
	e.t.Helper()
	for _, c := range e.mc.Status().Conditions {
		if c.Type == typ {
			return c
		}
	}
	e.t.Fatalf("no condition %s in %+v", typ, e.mc.Status().Conditions)
	return v1alpha1.Condition{}
}

// createInstance drives the object until the instance is ACTIVE, backed by the MariaDB.
func (e *simRds) createInstance() {
	e.t.Helper()
	e.sync() // stores the root password
	e.sync() // creates the instance
	e.sync() // writes its ownership tags
	id := e.mc.Status().ID
	require.NotEmpty(e.t, id)
	host, portText, err := net.SplitHostPort(e.addr)
	require.NoError(e.t, err)
	port, err := strconv.Atoi(portText)
	require.NoError(e.t, err)
	require.NoError(e.t, e.sim.SetInstanceEndpoint(id, host, port))
	e.clock.Advance(otcsim.DefaultDurations().Create + time.Second)
}

// converge syncs until DatabasesReady is True (at most a few calls).
func (e *simRds) converge() {
	e.t.Helper()
	for range 4 {
		e.sync()
		e.clock.Advance(2 * time.Second)
		if c := e.condition(v1alpha1.ConditionDatabasesReady); c.Status == metav1.ConditionTrue {
			return
		}
	}
	e.t.Fatalf("DatabasesReady did not become True: %+v", e.condition(v1alpha1.ConditionDatabasesReady))
}

func (e *dbE2E) grants(user, host string) []string {
	e.t.Helper()
	lines := e.query(e.t.Context(), "SHOW GRANTS FOR '"+user+"'@'"+host+"'")
	lines = slices.DeleteFunc(lines, func(l string) bool { return strings.HasPrefix(l, "GRANT USAGE ON *.*") })
	slices.Sort(lines)
	return lines
}

func (e *dbE2E) exists(q string, args ...any) bool {
	e.t.Helper()
	return len(e.query(e.t.Context(), q, args...)) == 1
}

func (e *dbE2E) userExists(user string) bool {
	return e.exists("SELECT User FROM mysql.user WHERE User = ?", user)
}

func (e *dbE2E) dbExists(db string) bool {
	return e.exists("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", db)
}

func (e *dbE2E) canLogin(user, password string) bool {
	db := e.open(user, password)
	defer db.Close()
	return db.PingContext(e.t.Context()) == nil
}

func TestDatabasesEndToEnd(t *testing.T) {
	e := newDBE2E(t)
	shop, logs, app, gen := e.n("shop"), e.n("logs"), e.n("app"), e.n("gen")
	e.edit(func(s *v1alpha1.RdsSpec) {
		s.Databases = []string{shop, logs}
		s.Users = []v1alpha1.User{
			{Name: app, Host: "%", Password: "App-pw-1", Privileges: []string{"GRANT SELECT, INSERT ON `" + shop + "`.* TO '" + app + "'@'%'"}},
			{Name: gen, Grants: []v1alpha1.DatabaseGrant{{Database: logs, Privileges: []string{"ALL"}}}},
		}
	})
	e.createInstance()
	e.converge()

	t.Run("create", func(t *testing.T) {
		assert.True(t, e.dbExists(shop) && e.dbExists(logs), "databases created")
		assert.Equal(t, []string{"GRANT SELECT, INSERT ON `" + shop + "`.* TO `" + app + "`@`%`"}, e.grants(app, "%"))
		assert.Equal(t, []string{"GRANT ALL PRIVILEGES ON `" + logs + "`.* TO `" + gen + "`@`%`"}, e.grants(gen, "%"))
		assert.True(t, e.canLogin(app, "App-pw-1"), "the spec's password is set")
		genSecret := e.mc.Secrets[reconcile.UserSecretName("shop-db", gen, "")]
		require.NotNil(t, genSecret, "the generated password has its Secret")
		assert.Equal(t, gen, string(genSecret.Data[reconcile.KeyUsername]))
		assert.Equal(t, logs, string(genSecret.Data[reconcile.KeyDatabase]))
		assert.Equal(t, e.addr, net.JoinHostPort(string(genSecret.Data[reconcile.KeyHost]), string(genSecret.Data[reconcile.KeyPort])))
		assert.True(t, e.canLogin(gen, string(genSecret.Data[reconcile.KeyPassword])), "the generated password is the one in the Secret")
		b, err := json.Marshal(e.mc.Status())
		require.NoError(t, err)
		status := string(b)
		assert.NotContains(t, status, "App-pw-1", "no password in status")
		assert.NotContains(t, status, string(genSecret.Data[reconcile.KeyPassword]), "no password in status")
	})

	t.Run("identical call changes nothing", func(t *testing.T) {
		before, applies := e.mc.Status(), e.applies
		e.sim.ResetCounters()
		e.sync()
		assert.Equal(t, applies, e.applies, "no SQL at all while the spec is unchanged")
		assert.Equal(t, before, e.mc.Status(), "the same status")
		assert.Zero(t, e.sim.MutatingCalls(), "no change in the cloud")
	})

	t.Run("drift check repairs changes made behind the controller's back", func(t *testing.T) {
		_, err := e.admin.ExecContext(t.Context(), "GRANT DELETE ON `"+shop+"`.* TO '"+app+"'@'%'")
		require.NoError(t, err)
		e.clock.Advance(e2eDrift)
		e.sync()
		assert.Equal(t, []string{"revoked DELETE on " + shop + ".* from '" + app + "'@'%'"}, e.changes)
		applies := e.applies
		e.sync()
		assert.Equal(t, applies, e.applies, "the drift check runs once per interval")
	})

	t.Run("change, revoke, drop", func(t *testing.T) {
		e.edit(func(s *v1alpha1.RdsSpec) {
			s.Users = []v1alpha1.User{
				{Name: app, Password: "App-pw-2", Privileges: []string{"grant select on " + shop + ".* to " + app}},
			}
			s.Databases = []string{shop}
		})
		e.sync()
		assert.Equal(t, metav1.ConditionTrue, e.condition(v1alpha1.ConditionDatabasesReady).Status)
		assert.ElementsMatch(t, []string{
			"changed password of user '" + app + "'@'%'",
			"revoked INSERT on " + shop + ".* from '" + app + "'@'%'",
			"dropped user '" + gen + "'@'%'",
		}, e.changes)
		assert.True(t, e.canLogin(app, "App-pw-2"))
		assert.False(t, e.canLogin(app, "App-pw-1"))
		assert.False(t, e.userExists(gen), "a user removed from the spec is dropped")
		assert.Nil(t, e.mc.Secrets[reconcile.UserSecretName("shop-db", gen, "")], "and its Secret deleted")
		assert.True(t, e.dbExists(logs), "a database removed from the spec stays without prunedatabases")

		applies := e.applies
		e.sync()
		assert.Equal(t, applies, e.applies, "a second identical call changes nothing")
	})

	t.Run("prune", func(t *testing.T) {
		e.edit(func(s *v1alpha1.RdsSpec) { s.Prunedatabases = true })
		e.sync()
		assert.Equal(t, []string{"dropped database " + logs}, e.changes)
		assert.False(t, e.dbExists(logs))
		assert.True(t, e.dbExists(shop))
	})

	t.Run("injection attempts are refused before any SQL", func(t *testing.T) {
		good := e.mc.Rds().Spec
		cases := map[string]struct {
			reason string
			mutate func(*v1alpha1.RdsSpec)
		}{
			"name":     {"a quote in a user name", func(s *v1alpha1.RdsSpec) { s.Users[0].Name = app + "'@'%'; DROP DATABASE " + shop + "; --" }},
			"host":     {"a quote in a host", func(s *v1alpha1.RdsSpec) { s.Users[0].Host = "%' IDENTIFIED BY 'x" }},
			"database": {"a backtick in a database name", func(s *v1alpha1.RdsSpec) { s.Databases = []string{shop + "`; DROP DATABASE `" + shop} }},
			"grant: stacked": {"a second statement", func(s *v1alpha1.RdsSpec) {
				s.Users[0].Privileges = []string{"GRANT SELECT ON " + shop + ".* TO " + app + "; DROP DATABASE " + shop}
			}},
			"grant: global": {"a global grant", func(s *v1alpha1.RdsSpec) { s.Users[0].Privileges = []string{"GRANT ALL ON *.* TO " + app} }},
			"grant: other":  {"a grant for another account", func(s *v1alpha1.RdsSpec) { s.Users[0].Privileges = []string{"GRANT ALL ON " + shop + ".* TO root"} }},
			"grant: comment": {"a comment hiding the rest", func(s *v1alpha1.RdsSpec) {
				s.Users[0].Privileges = []string{"GRANT SELECT ON " + shop + ".* TO " + app + " /*' WITH GRANT OPTION */"}
			}},
		}
		for name, tc := range cases {
			t.Run(name, func(t *testing.T) {
				spec := good
				spec.Users = slices.Clone(good.Users)
				spec.Databases = slices.Clone(good.Databases)
				tc.mutate(&spec)
				e.edit(func(s *v1alpha1.RdsSpec) { *s = spec })
				applies := e.applies
				e.sim.ResetCounters()
				e.sync()
				dbReady := e.condition(v1alpha1.ConditionDatabasesReady)
				assert.Equal(t, reconcile.ReasonInvalidSpec, dbReady.Reason, tc.reason)
				assert.Equal(t, metav1.ConditionFalse, dbReady.Status, tc.reason)
				assert.Equal(t, metav1.ConditionTrue, e.condition(v1alpha1.ConditionReady).Status, "%s: the instance is still reported", tc.reason)
				assert.Equal(t, applies, e.applies, "%s: nothing is executed", tc.reason)
				assert.Zero(t, e.sim.MutatingCalls(), tc.reason)
				assert.True(t, e.dbExists(shop), tc.reason)
				assert.True(t, e.canLogin(app, "App-pw-2"), tc.reason)
			})
		}
		e.edit(func(s *v1alpha1.RdsSpec) { *s = good })
		e.sync()
		assert.Equal(t, reconcile.ReasonApplied, e.condition(v1alpha1.ConditionDatabasesReady).Reason, "a fixed spec is valid again")
	})
}
