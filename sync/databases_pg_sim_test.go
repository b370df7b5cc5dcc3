package reconcile_test

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/pgusers"
)

// The PostgreSQL end-to-end test: the reconciler, the real OTC adapter, the simulator, and a real
// PostgreSQL (test/postgres.sh; test/run.sh starts it and exports TEST_PG_ADDR, TEST_PG_USER and
// TEST_PG_PASSWORD) behind the simulated instance, its root password the server's root's, which
// like OTC's is no superuser. Without TEST_PG_ADDR it fails, unless -short is given.
//
// NOTE: the checks read the server with psql, as the root of the instance would, and log in with
// each user Secret's uri and dsn as an application would; neither goes through pgusers.

// pgE2E is simRds on PostgreSQL.
type pgE2E struct {
	*simRds
	password string // root's
}

func newPGE2E(t *testing.T) *pgE2E {
	t.Helper()
	addr := os.Getenv("TEST_PG_ADDR")
	if addr == "" {
		if testing.Short() {
			t.Skip("end-to-end SQL test: TEST_PG_ADDR is not set and -short is given")
		}
		t.Fatal(`TEST_PG_ADDR is not set: start a throwaway PostgreSQL with eval "$(bash test/postgres.sh)" or run bash test/run.sh`)
	}
	_, err := exec.LookPath("psql")
	require.NoError(t, err, "the checks need psql (test/postgres.sh installs it)")
	rootUser, rootPassword := os.Getenv("TEST_PG_USER"), os.Getenv("TEST_PG_PASSWORD")
	require.Contains(t, []string{"", "root"}, rootUser, "the hook logs in as root")
	e := &pgE2E{password: rootPassword, simRds: newSimRds(t, addr, pgusers.Apply, v1alpha1.RdsSpec{
		Datastoretype: "PostgreSQL", Datastoreversion: "15", Flavorref: "rds.pg.n1.large.2",
		Volumetype: "CLOUDSSD", Volumesize: 40, Availabilityzone: "eu-de-01", Region: otcsim.Region,
		Vpc: "frank-test", Subnet: "frank-test", Securitygroup: "golang",
		Password: rootPassword,
	})}
	t.Cleanup(e.cleanup)
	return e
}

// psql runs sql as root in db and returns the rows, sorted, or the error with psql's output.
func (e *pgE2E) psql(db, sql string) ([]string, error) {
	host, port, _ := net.SplitHostPort(e.addr)
	return runPsql(e.t, []string{"PGPASSWORD=" + e.password}, "-h", host, "-p", port, "-U", "root", "-d", db, "-c", sql)
}

// must is psql that fails the test on an error.
func (e *pgE2E) must(db, sql string) []string {
	e.t.Helper()
	out, err := e.psql(db, sql)
	require.NoError(e.t, err, sql)
	return out
}

// runPsql runs psql with the connection arguments given, no .psqlrc, no password prompt.
func runPsql(t *testing.T, env []string, args ...string) ([]string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "psql", append([]string{"--no-psqlrc", "-X", "-w", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1"}, args...)...)
	cmd.Env = append(os.Environ(), append([]string{"PGCONNECT_TIMEOUT=10"}, env...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, &psqlError{err: err, out: string(out)}
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	lines = slices.DeleteFunc(lines, func(l string) bool { return l == "" })
	slices.Sort(lines)
	return lines, nil
}

type psqlError struct {
	err error
	out string
}

func (e *psqlError) Error() string { return e.err.Error() + ": " + e.out }

func (e *pgE2E) cleanup() {
	for _, db := range e.must("postgres", "SELECT datname FROM pg_database WHERE datname LIKE '"+e.prefix+"%'") {
		_, _ = e.psql("postgres", `DROP DATABASE IF EXISTS "`+db+`"`)
	}
	for _, r := range e.must("postgres", "SELECT rolname FROM pg_roles WHERE rolname LIKE '"+e.prefix+"%'") {
		_, _ = e.psql("postgres", `DROP ROLE IF EXISTS "`+r+`"`)
	}
}

// acl is what role holds in db, as "object: PRIVILEGE" lines, read by root.
func (e *pgE2E) acl(db, role string) []string {
	return e.must(db, `
SELECT 'database ' || d.datname || ': ' || a.privilege_type FROM pg_database d, aclexplode(d.datacl) a
 WHERE a.grantee = '`+role+`'::regrole AND d.datname LIKE '`+e.prefix+`%'
UNION ALL
SELECT 'schema ' || n.nspname || ': ' || a.privilege_type FROM pg_namespace n, aclexplode(n.nspacl) a WHERE a.grantee = '`+role+`'::regrole
UNION ALL
SELECT 'table ' || c.relname || ': ' || a.privilege_type FROM pg_class c, aclexplode(c.relacl) a WHERE a.grantee = '`+role+`'::regrole`)
}

// login runs sql with the connection string a user Secret holds under key (uri or dsn).
func (e *pgE2E) login(secretName, key, sql string) ([]string, error) {
	e.t.Helper()
	s := e.mc.Secrets[secretName]
	require.NotNil(e.t, s, "the user Secret %s", secretName)
	return runPsql(e.t, nil, "-d", string(s.Data[key]), "-c", sql)
}

// TestPostgreSQLDatabasesEndToEnd is issue #22's demonstration: a PostgreSQL Rds with two
// databases and two users, one of them read-only, against a real server.
func TestPostgreSQLDatabasesEndToEnd(t *testing.T) {
	e := newPGE2E(t)
	shop, logs, app, reader := e.n("shop"), e.n("logs"), e.n("app"), e.n("reader")
	e.edit(func(s *v1alpha1.RdsSpec) {
		s.Databases = []string{shop, logs}
		s.Users = []v1alpha1.User{
			{Name: app, Password: "App-pw-1", Grants: []v1alpha1.DatabaseGrant{
				{Database: shop, Privileges: []string{"CONNECT", "TEMPORARY"}},
				{Database: shop, Schema: "public", Privileges: []string{"ALL"}},
				{Database: logs, Privileges: []string{"ALL"}},
			}},
			// Read-only, its password generated.
			{Name: reader, Grants: []v1alpha1.DatabaseGrant{
				{Database: shop, Schema: "public", Privileges: []string{"USAGE"}},
				{Database: shop, Schema: "public", Table: "*", Privileges: []string{"SELECT"}},
			}},
		}
	})
	e.createInstance()
	e.converge()
	appSecret, readerSecret := reconcile.UserSecretName("shop-db", app, ""), reconcile.UserSecretName("shop-db", reader, "")

	t.Run("roles, databases and grants are there", func(t *testing.T) {
		assert.Equal(t, []string{logs, shop}, e.must("postgres", "SELECT datname FROM pg_database WHERE datname LIKE '"+e.prefix+"%'"))
		assert.Equal(t, []string{app + "|true|false", reader + "|true|false"},
			e.must("postgres", "SELECT rolname || '|' || rolcanlogin || '|' || rolsuper FROM pg_roles WHERE rolname LIKE '"+e.prefix+"%'"))
		assert.Equal(t, []string{
			"database " + logs + ": CONNECT", "database " + logs + ": CREATE", "database " + logs + ": TEMPORARY",
			"database " + shop + ": CONNECT", "database " + shop + ": TEMPORARY",
			"schema public: CREATE", "schema public: USAGE",
		}, e.acl(shop, app))
		assert.Equal(t, []string{"database " + shop + ": CONNECT", "schema public: USAGE"}, e.acl(shop, reader))
		assert.Empty(t, e.must("postgres", "SELECT 1 FROM pg_database d, aclexplode(d.datacl) a WHERE d.datname = '"+shop+"' AND a.grantee = 0"),
			"the controller's databases are closed to PUBLIC")
	})

	t.Run("a login with each Secret works", func(t *testing.T) {
		for _, key := range []string{reconcile.KeyURI, reconcile.KeyDSN} {
			out, err := e.login(appSecret, key, "SELECT current_user || '@' || current_database() || ' ssl=' || (SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid())")
			require.NoError(t, err, key)
			assert.Equal(t, []string{app + "@" + shop + " ssl=true"}, out, "%s: the user, its first database, over TLS", key)
			out, err = e.login(readerSecret, key, "SELECT current_user")
			require.NoError(t, err, key)
			assert.Equal(t, []string{reader}, out, key)
		}
		s := e.mc.Secrets[readerSecret]
		assert.Equal(t, shop, string(s.Data[reconcile.KeyDatabase]))
		b, err := json.Marshal(e.mc.Status())
		require.NoError(t, err)
		assert.NotContains(t, string(b), string(s.Data[reconcile.KeyPassword]), "no password in status")
		assert.NotContains(t, string(b), "App-pw-1", "no password in status")
	})

	t.Run("the application's tables reach the read-only user; it cannot write", func(t *testing.T) {
		_, err := e.login(appSecret, reconcile.KeyURI, "CREATE TABLE public.orders (id int); INSERT INTO public.orders VALUES (1)")
		require.NoError(t, err)
		e.clock.Advance(e2eDrift) // the drift check applies again and finds the new table
		e.sync()
		assert.Contains(t, e.changes, "granted SELECT on table "+shop+".public.orders to "+reader)
		out, err := e.login(readerSecret, reconcile.KeyURI, "SELECT count(*) FROM public.orders")
		require.NoError(t, err)
		assert.Equal(t, []string{"1"}, out)
		_, err = e.login(readerSecret, reconcile.KeyURI, "INSERT INTO public.orders VALUES (2)")
		assert.ErrorContains(t, err, "permission denied")
		_, err = e.login(readerSecret, reconcile.KeyURI, "CREATE TABLE public.mine (id int)")
		assert.ErrorContains(t, err, "permission denied", "read-only: no CREATE on the schema")
	})

	t.Run("identical call changes nothing", func(t *testing.T) {
		before, applies := e.mc.Status(), e.applies
		e.sim.ResetCounters()
		e.sync()
		assert.Equal(t, applies, e.applies, "no SQL at all while the spec is unchanged")
		assert.Equal(t, before, e.mc.Status())
		assert.Zero(t, e.sim.MutatingCalls())
	})

	t.Run("a grant removed is revoked, a user removed is dropped", func(t *testing.T) {
		e.edit(func(s *v1alpha1.RdsSpec) {
			s.Users = []v1alpha1.User{s.Users[0]}
			s.Users[0].Grants = s.Users[0].Grants[:2] // no longer ALL on logs
		})
		e.sync()
		assert.Equal(t, metav1.ConditionTrue, e.condition(v1alpha1.ConditionDatabasesReady).Status, "%+v", e.condition(v1alpha1.ConditionDatabasesReady))
		assert.Contains(t, e.changes, "revoked CREATE, CONNECT, TEMPORARY on database "+logs+" from "+app)
		assert.Contains(t, e.changes, "dropped user "+reader)
		assert.Empty(t, e.must("postgres", "SELECT rolname FROM pg_roles WHERE rolname = '"+reader+"'"), "the reader is dropped")
		assert.Nil(t, e.mc.Secrets[readerSecret], "and its Secret deleted")
		assert.NotContains(t, e.acl(shop, app), "database "+logs+": CONNECT")
		_, err := e.login(appSecret, reconcile.KeyURI, "SELECT 1")
		assert.NoError(t, err, "the application still logs in")
	})

	t.Run("a user that owns objects is not dropped: UserOwnsObjects", func(t *testing.T) {
		e.edit(func(s *v1alpha1.RdsSpec) { s.Users = nil })
		e.sync()
		c := e.condition(v1alpha1.ConditionDatabasesReady)
		assert.Equal(t, reconcile.ReasonUserOwnsObjects, c.Reason)
		assert.Contains(t, c.Message, "user "+app+" is not dropped: it owns objects in database "+shop)
		assert.NotEmpty(t, e.must("postgres", "SELECT rolname FROM pg_roles WHERE rolname = '"+app+"'"), "the owner and its table stay")
		assert.NotNil(t, e.mc.Secrets[appSecret], "and so does its Secret")

		e.must(shop, "DROP TABLE public.orders") // root is a member of app now
		e.clock.Advance(time.Hour)
		e.sync()
		assert.Equal(t, metav1.ConditionTrue, e.condition(v1alpha1.ConditionDatabasesReady).Status, "%+v", e.condition(v1alpha1.ConditionDatabasesReady))
		assert.Empty(t, e.must("postgres", "SELECT rolname FROM pg_roles WHERE rolname = '"+app+"'"), "dropped once it owns nothing")
	})

	t.Run("hostile input is refused before any SQL", func(t *testing.T) {
		good := e.mc.Rds().Spec
		cases := map[string]struct {
			reason string
			mutate func(*v1alpha1.RdsSpec)
		}{
			"name": {"a quote in a user name", func(s *v1alpha1.RdsSpec) {
				s.Users = []v1alpha1.User{{Name: app + `"; DROP DATABASE ` + shop + "; --"}}
			}},
			"database": {"a quote in a database name", func(s *v1alpha1.RdsSpec) { s.Databases = []string{shop + `"; DROP ROLE root; --`} }},
			"schema": {"a quote in a schema", func(s *v1alpha1.RdsSpec) {
				s.Users = []v1alpha1.User{{Name: app, Grants: []v1alpha1.DatabaseGrant{{Database: shop, Schema: `public" TO PUBLIC; --`, Privileges: []string{"USAGE"}}}}}
			}},
			"privilege": {"SQL in a privilege", func(s *v1alpha1.RdsSpec) {
				s.Users = []v1alpha1.User{{Name: app, Grants: []v1alpha1.DatabaseGrant{{Database: shop, Privileges: []string{"CONNECT ON DATABASE postgres TO PUBLIC; --"}}}}}
			}},
			"grant string": {"a GRANT string", func(s *v1alpha1.RdsSpec) {
				s.Users = []v1alpha1.User{{Name: app, Privileges: []string{"GRANT ALL ON DATABASE " + shop + " TO " + app}}}
			}},
			"reserved": {"root itself", func(s *v1alpha1.RdsSpec) { s.Users = []v1alpha1.User{{Name: "root"}} }},
		}
		for name, tc := range cases {
			t.Run(name, func(t *testing.T) {
				spec := good
				spec.Databases = slices.Clone(good.Databases)
				tc.mutate(&spec)
				e.edit(func(s *v1alpha1.RdsSpec) { *s = spec })
				applies := e.applies
				e.sync()
				c := e.condition(v1alpha1.ConditionDatabasesReady)
				assert.Equal(t, reconcile.ReasonInvalidSpec, c.Reason, tc.reason)
				assert.Equal(t, applies, e.applies, "%s: nothing is executed", tc.reason)
				assert.Equal(t, []string{shop}, e.must("postgres", "SELECT datname FROM pg_database WHERE datname = '"+shop+"'"), tc.reason)
			})
		}
		e.edit(func(s *v1alpha1.RdsSpec) { *s = good })
		e.sync()
		assert.Equal(t, reconcile.ReasonApplied, e.condition(v1alpha1.ConditionDatabasesReady).Reason, "a fixed spec is valid again")
	})
}
