package pgusers

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/testcert"
	"github.com/mcsps/rds-lambda-controller/sync/dbusers"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// The integration tests run against a real PostgreSQL server, found through the environment:
//
//	TEST_PG_ADDR      host:port, e.g. 127.0.0.1:5433
//	TEST_PG_USER      the administrator (default root): as OTC's, no superuser, CREATEROLE CREATEDB
//	TEST_PG_PASSWORD  its password
//
// `eval "$(bash test/postgres.sh)"` starts a throwaway PostgreSQL and exports them. Without
// TEST_PG_ADDR the tests fail (so CI cannot pass them by accident) unless -short is given. They
// create databases and roles whose names start with a random per-test prefix and drop them
// afterwards; the server may be shared by test runs.

const startServerHint = `TEST_PG_ADDR is not set: the integration tests need a PostgreSQL server.
Start a throwaway PostgreSQL from the repository root with

	eval "$(bash test/postgres.sh)"

(it exports TEST_PG_ADDR, TEST_PG_USER and TEST_PG_PASSWORD; "bash test/postgres.sh stop" removes it),
or run "go test -short" to skip the integration tests.`

// testConn returns the admin connection to the test server, or fails (skips with -short).
func testConn(t *testing.T) dbusers.Conn {
	t.Helper()
	addr := os.Getenv("TEST_PG_ADDR")
	if addr == "" {
		if testing.Short() {
			t.Skip("integration test: TEST_PG_ADDR is not set and -short is given")
		}
		t.Fatal(startServerHint)
	}
	host, portText, err := net.SplitHostPort(addr)
	require.NoError(t, err, "TEST_PG_ADDR must be host:port")
	port, err := strconv.Atoi(portText)
	require.NoError(t, err, "TEST_PG_ADDR must be host:port")
	user := os.Getenv("TEST_PG_USER")
	if user == "" {
		user = "root"
	}
	return dbusers.Conn{Host: host, Port: port, User: user, Password: secret.New(os.Getenv("TEST_PG_PASSWORD")), Timeout: 10 * time.Second}
}

// testEnv is one test's view of the server: its name prefix and the admin's connection for
// setting things up and checking results independently of Apply.
type testEnv struct {
	t      *testing.T
	conn   dbusers.Conn
	prefix string
}

func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	conn := testConn(t)
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	e := &testEnv{t: t, conn: conn, prefix: "it" + hex.EncodeToString(b) + "x"}
	t.Cleanup(e.cleanup)
	return e
}

func (e *testEnv) n(name string) string { return e.prefix + name }

// login opens a connection as user to db; the caller closes it.
func (e *testEnv) login(user, password, db string) (*pgx.Conn, error) {
	return e.loginCtx(e.t.Context(), user, password, db)
}

func (e *testEnv) loginCtx(ctx context.Context, user, password, db string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig("")
	require.NoError(e.t, err)
	cfg.Host, cfg.Port, cfg.User, cfg.Password, cfg.Database = e.conn.Host, uint16(e.conn.Port), user, password, db
	cfg.TLSConfig, cfg.Fallbacks = nil, nil
	cfg.ConnectTimeout = 10 * time.Second
	return pgx.ConnectConfig(ctx, cfg)
}

func (e *testEnv) admin(db string) *pgx.Conn {
	e.t.Helper()
	c, err := e.login(e.conn.User, e.conn.Password.Reveal(), db)
	require.NoError(e.t, err, "log in as the admin to %s", db)
	return c
}

// exec runs statements as the admin in db.
func (e *testEnv) exec(db string, stmts ...string) {
	e.t.Helper()
	c := e.admin(db)
	defer c.Close(context.Background())
	for _, s := range stmts {
		_, err := c.Exec(e.t.Context(), s)
		require.NoError(e.t, err, s)
	}
}

// strings runs a query as the admin in db and returns its one text column.
func (e *testEnv) strings(db, sql string, args ...any) []string {
	e.t.Helper()
	c := e.admin(db)
	defer c.Close(context.Background())
	rows, err := c.Query(e.t.Context(), sql, args...)
	require.NoError(e.t, err, sql)
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(e.t, err, sql)
	slices.Sort(out)
	return out
}

func (e *testEnv) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := e.loginCtx(ctx, e.conn.User, e.conn.Password.Reveal(), maintenanceDB)
	if err != nil {
		e.t.Logf("cleanup: %v", err)
		return
	}
	defer c.Close(ctx)
	rows, _ := c.Query(ctx, "SELECT datname FROM pg_database WHERE datname LIKE $1", e.prefix+"%")
	dbs, _ := pgx.CollectRows(rows, pgx.RowTo[string])
	for _, db := range dbs {
		_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+quoteIdent(db))
	}
	rows, _ = c.Query(ctx, "SELECT rolname FROM pg_roles WHERE rolname LIKE $1", e.prefix+"%")
	roles, _ := pgx.CollectRows(rows, pgx.RowTo[string])
	for _, r := range roles {
		_, _ = c.Exec(ctx, "DROP ROLE IF EXISTS "+quoteIdent(r))
	}
}

// apply runs Apply with the test's connection.
func (e *testEnv) apply(d dbusers.Desired, m dbusers.ManagedState) (dbusers.Result, error) {
	d.DigestKey = secret.New("digest-key")
	return Apply(e.t.Context(), e.conn, d, m)
}

// acl returns a role's privileges in db as "on: PRIVILEGE" lines, read with has_*_privilege
// functions' counterpart, aclexplode, as the admin.
func (e *testEnv) acl(db, role string) []string {
	return e.strings(db, `
SELECT 'database ' || d.datname || ': ' || a.privilege_type FROM pg_database d, aclexplode(d.datacl) a
 WHERE a.grantee = $1::regrole AND d.datname LIKE $2
UNION ALL
SELECT 'schema ' || n.nspname || ': ' || a.privilege_type FROM pg_namespace n, aclexplode(n.nspacl) a
 WHERE a.grantee = $1::regrole
UNION ALL
SELECT 'table ' || n.nspname || '.' || c.relname || ': ' || a.privilege_type FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace, aclexplode(c.relacl) a
 WHERE a.grantee = $1::regrole`, role, e.prefix+"%")
}

func (e *testEnv) canLogin(user, password, db string) bool {
	c, err := e.login(user, password, db)
	if err != nil {
		return false
	}
	_ = c.Close(context.Background())
	return true
}

func TestIntegrationAdminIsNoSuperuser(t *testing.T) {
	e := newTestEnv(t)
	got := e.strings(maintenanceDB, "SELECT rolsuper::text || ' ' || rolcreaterole::text || ' ' || rolcreatedb::text FROM pg_roles WHERE rolname = current_user")
	assert.Equal(t, []string{"false true true"}, got, "the test's admin is as OTC's root: no superuser, CREATEROLE, CREATEDB")
}

func TestIntegrationApply(t *testing.T) {
	e := newTestEnv(t)
	shop, logs, app, reader := e.n("shop"), e.n("logs"), e.n("app"), e.n("reader")
	d := dbusers.Desired{
		Databases: []string{shop, logs},
		Users: []dbusers.UserSpec{
			{Name: app, Password: secret.New("App-pw-1 'quoted' \\ back"), Grants: []dbusers.Grant{
				{Database: shop, Privileges: []string{"ALL"}},
				{Database: shop, Schema: "public", Privileges: []string{"USAGE", "CREATE"}},
			}},
			{Name: reader, Password: secret.New("Reader-pw-1"), Grants: []dbusers.Grant{
				{Database: shop, Schema: "public", Privileges: []string{"USAGE"}},
				{Database: shop, Schema: "public", Table: AllTables, Privileges: []string{"SELECT"}},
			}},
		},
	}
	res, err := e.apply(d, dbusers.ManagedState{})
	require.NoError(t, err)
	assert.Equal(t, []string{shop, logs}, slices.DeleteFunc(slices.Clone(d.Databases), func(db string) bool {
		return len(e.strings(maintenanceDB, "SELECT datname FROM pg_database WHERE datname = $1", db)) == 0
	}), "databases created")
	assert.ElementsMatch(t, []string{app, reader}, []string{res.Managed.Users[0].Name, res.Managed.Users[1].Name})
	assert.ElementsMatch(t, []string{logs, shop}, res.Managed.Databases)
	assert.True(t, e.canLogin(app, "App-pw-1 'quoted' \\ back", shop), "a password with quotes and a backslash is set as it is")
	assert.True(t, e.canLogin(reader, "Reader-pw-1", shop))
	assert.False(t, e.canLogin(reader, "Reader-pw-1", logs), "a database the role has no grant in is closed to it")
	assert.Equal(t, []string{"database " + shop + ": CONNECT", "database " + shop + ": CREATE", "database " + shop + ": TEMPORARY", "schema public: CREATE", "schema public: USAGE"},
		e.acl(shop, app))

	// The application creates a table as root (which owns the database); the reader's grant on
	// every table of public reaches it at the next apply.
	e.exec(shop, "CREATE TABLE public.orders (id int)", "INSERT INTO public.orders VALUES (1)")
	res, err = e.apply(d, res.Managed)
	require.NoError(t, err)
	assert.Equal(t, []string{"granted SELECT on table " + shop + ".public.orders to " + reader}, res.Changes)
	rc, err := e.login(reader, "Reader-pw-1", shop)
	require.NoError(t, err)
	var n int
	require.NoError(t, rc.QueryRow(t.Context(), "SELECT count(*) FROM public.orders").Scan(&n))
	assert.Equal(t, 1, n)
	_, err = rc.Exec(t.Context(), "INSERT INTO public.orders VALUES (2)")
	assert.Error(t, err, "the reader may not write")
	_ = rc.Close(context.Background())

	again, err := e.apply(d, res.Managed)
	require.NoError(t, err)
	assert.Empty(t, again.Changes, "a second identical apply changes nothing")
	assert.Equal(t, res.Managed, again.Managed)

	// Drift: a privilege granted behind the controller's back is revoked.
	e.exec(shop, "GRANT INSERT ON public.orders TO "+quoteIdent(reader))
	res, err = e.apply(d, again.Managed)
	require.NoError(t, err)
	assert.Equal(t, []string{"revoked INSERT on table " + shop + ".public.orders from " + reader}, res.Changes)

	// A grant removed is revoked; a user removed is dropped; a new password is set.
	d.Users = []dbusers.UserSpec{{Name: app, Password: secret.New("App-pw-2"), Grants: []dbusers.Grant{{Database: shop, Privileges: []string{"CONNECT"}}}}}
	res, err = e.apply(d, res.Managed)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"changed password of user " + app,
		"revoked CREATE, TEMPORARY on database " + shop + " from " + app,
		"revoked USAGE, CREATE on schema " + shop + ".public from " + app,
		"revoked ALL on database " + shop + " from " + reader,
		"revoked ALL on schema " + shop + ".public from " + reader,
		"revoked ALL on table " + shop + ".public.orders from " + reader,
		"dropped user " + reader,
	}, res.Changes)
	assert.Empty(t, e.strings(maintenanceDB, "SELECT rolname FROM pg_roles WHERE rolname = $1", reader), "the reader is dropped")
	assert.True(t, e.canLogin(app, "App-pw-2", shop))
	assert.Equal(t, []string{"database " + shop + ": CONNECT"}, e.acl(shop, app))

	// Prune.
	d.PruneDatabases, d.Databases = true, []string{shop}
	res, err = e.apply(d, res.Managed)
	require.NoError(t, err)
	assert.Equal(t, []string{"dropped database " + logs}, res.Changes)
	assert.Equal(t, []string{shop}, res.Managed.Databases)
}

func TestIntegrationOwnerIsNotDropped(t *testing.T) {
	e := newTestEnv(t)
	shop, app := e.n("shop"), e.n("app")
	d := dbusers.Desired{Databases: []string{shop}, Users: []dbusers.UserSpec{{Name: app, Password: secret.New("App-pw-1"), Grants: []dbusers.Grant{
		{Database: shop, Schema: "public", Privileges: []string{"USAGE", "CREATE"}},
	}}}}
	res, err := e.apply(d, dbusers.ManagedState{})
	require.NoError(t, err)

	ac, err := e.login(app, "App-pw-1", shop)
	require.NoError(t, err)
	_, err = ac.Exec(t.Context(), "CREATE TABLE public.mine (id int)")
	require.NoError(t, err)
	_ = ac.Close(context.Background())

	d.Users = nil
	res, err = e.apply(d, res.Managed)
	require.ErrorIs(t, err, ErrOwnsObjects)
	assert.ErrorIs(t, err, dbusers.ErrRefused)
	assert.Contains(t, err.Error(), "owns objects in database "+shop)
	assert.Empty(t, res.Changes, "nothing of the owner is touched")
	assert.Equal(t, app, res.Managed.Users[0].Name, "it stays managed, to be dropped later")
	assert.True(t, e.canLogin(app, "App-pw-1", shop))

	// Once its table is gone, it is dropped.
	e.exec(shop, "DROP TABLE public.mine")
	res, err = e.apply(d, res.Managed)
	require.NoError(t, err)
	assert.Contains(t, res.Changes, "dropped user "+app)
	assert.Empty(t, res.Managed.Users)
}

func TestIntegrationUnauthorizedAndUnreachable(t *testing.T) {
	e := newTestEnv(t)
	d := dbusers.Desired{Databases: []string{e.n("x")}}
	bad := e.conn
	bad.Password = secret.New("wrong")
	_, err := Apply(t.Context(), bad, d, dbusers.ManagedState{})
	assert.ErrorIs(t, err, dbusers.ErrUnauthorized)
	assert.NotContains(t, err.Error(), "wrong")

	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().(*net.TCPAddr)
	require.NoError(t, l.Close())
	closed := e.conn
	closed.Port = addr.Port
	closed.ConnectTimeout = time.Second
	_, err = Apply(t.Context(), closed, d, dbusers.ManagedState{})
	assert.ErrorIs(t, err, dbusers.ErrUnreachable)
}

// TestIntegrationTablesOfAManagedRole: the application's role creates its tables, so they are its
// own; the admin, no superuser, joins that role (it manages it) to grant on them, once.
func TestIntegrationTablesOfAManagedRole(t *testing.T) {
	e := newTestEnv(t)
	shop, app, reader := e.n("shop"), e.n("app"), e.n("reader")
	d := dbusers.Desired{
		Databases: []string{shop},
		Users: []dbusers.UserSpec{
			{Name: app, Password: secret.New("App-pw-1"), Grants: []dbusers.Grant{{Database: shop, Schema: "public", Privileges: []string{"ALL"}}}},
			{Name: reader, Password: secret.New("Reader-pw-1"), Grants: []dbusers.Grant{{Database: shop, Schema: "public", Table: AllTables, Privileges: []string{"SELECT"}}}},
		},
	}
	res, err := e.apply(d, dbusers.ManagedState{})
	require.NoError(t, err)

	ac, err := e.login(app, "App-pw-1", shop)
	require.NoError(t, err)
	_, err = ac.Exec(t.Context(), "CREATE TABLE public.orders (id int)")
	require.NoError(t, err)
	_ = ac.Close(context.Background())

	res, err = e.apply(d, res.Managed)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"granted membership in " + app + " to " + e.conn.User + " (to grant on its tables)",
		"granted SELECT on table " + shop + ".public.orders to " + reader,
	}, res.Changes)
	assert.Equal(t, []string{"database " + shop + ": CONNECT", "table public.orders: SELECT"}, e.acl(shop, reader))

	again, err := e.apply(d, res.Managed)
	require.NoError(t, err)
	assert.Empty(t, again.Changes, "the membership is made once")

	// A grant removed is revoked, also on the application's table.
	d.Users[1].Grants = []dbusers.Grant{{Database: shop, Privileges: []string{"CONNECT"}}}
	res, err = e.apply(d, again.Managed)
	require.NoError(t, err)
	assert.Equal(t, []string{"revoked SELECT on table " + shop + ".public.orders from " + reader}, res.Changes)
	assert.Equal(t, []string{"database " + shop + ": CONNECT"}, e.acl(shop, reader))
}

// TestIntegrationHostileNames: names and passwords built to break out of their quotes are refused
// before any SQL, or (a password) travel as a verifier and log in as they are.
func TestIntegrationHostileNames(t *testing.T) {
	e := newTestEnv(t)
	shop := e.n("shop")
	for name, d := range map[string]dbusers.Desired{
		"role":     {Users: []dbusers.UserSpec{{Name: e.n(`x"; DROP DATABASE postgres; --`), Password: secret.New("pw-123456")}}},
		"database": {Databases: []string{shop + `"; DROP ROLE root; --`}},
		"schema": {Users: []dbusers.UserSpec{{Name: e.n("u"), Password: secret.New("pw-123456"), Grants: []dbusers.Grant{
			{Database: shop, Schema: `public"; DROP TABLE x; --`, Privileges: []string{"USAGE"}}}}}},
		"privilege": {Users: []dbusers.UserSpec{{Name: e.n("u"), Password: secret.New("pw-123456"), Grants: []dbusers.Grant{
			{Database: shop, Privileges: []string{"CONNECT ON DATABASE postgres TO PUBLIC; --"}}}}}},
	} {
		_, err := e.apply(d, dbusers.ManagedState{})
		assert.ErrorIs(t, err, dbusers.ErrInvalid, name)
	}
	assert.Empty(t, e.strings(maintenanceDB, "SELECT datname FROM pg_database WHERE datname LIKE $1", e.prefix+"%"), "nothing was created")

	hostile := `pw'; DROP ROLE root; -- \' " $$ ` + "\t"
	for _, pw := range []string{hostile, "päßwörd-ünïcode'\\"} {
		d := dbusers.Desired{Users: []dbusers.UserSpec{{Name: e.n("h"), Password: secret.New(pw)}}}
		res, err := e.apply(d, dbusers.ManagedState{})
		require.NoError(t, err)
		assert.True(t, e.canLogin(e.n("h"), pw, maintenanceDB), "the password is set as it is: %q", pw)
		_, err = e.apply(dbusers.Desired{}, res.Managed)
		require.NoError(t, err)
	}
}

// TestIntegrationVerifiedSession: with a CA (--db-ca-file) that signs the real server's
// certificate, Apply works over TLS verified as sslmode=verify-ca, also in the sessions it opens
// to other databases (the schema grant below); with another CA, the server is sent nothing but the
// TLS handshake, and the databases are not made.
func TestIntegrationVerifiedSession(t *testing.T) {
	e := newTestEnv(t)
	chain := serverChain(t, e.conn)
	ca := x509.NewCertPool()
	ca.AddCert(chain[len(chain)-1]) // test/postgres.sh's certificate signs itself
	shop, app := e.n("shop"), e.n("app")
	d := dbusers.Desired{Databases: []string{shop}, Users: []dbusers.UserSpec{{Name: app, Password: secret.New("App-pw-1"),
		Grants: []dbusers.Grant{{Database: shop, Schema: "public", Privileges: []string{"USAGE"}}}}}}

	e.conn.TLS = dbusers.VerifyCA(testcert.New(t).Pool)
	_, err := e.apply(d, dbusers.ManagedState{})
	require.ErrorIs(t, err, dbusers.ErrUntrusted, "another CA")
	assert.Empty(t, e.strings(maintenanceDB, "SELECT datname FROM pg_database WHERE datname = $1", shop), "nothing was made")

	e.conn.TLS = dbusers.VerifyCA(ca)
	_, err = e.apply(d, dbusers.ManagedState{})
	require.NoError(t, err, "the server's CA")
	assert.Equal(t, []string{"database " + shop + ": CONNECT", "schema public: USAGE"}, e.acl(shop, app))
}

// serverChain returns the certificates the server at c shows, unverified.
func serverChain(t *testing.T, c dbusers.Conn) []*x509.Certificate {
	t.Helper()
	nc, err := net.DialTimeout("tcp", c.Addr(), 10*time.Second)
	require.NoError(t, err)
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	_, err = nc.Write([]byte{0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f}) // SSLRequest
	require.NoError(t, err)
	answer := make([]byte, 1)
	_, err = io.ReadFull(nc, answer)
	require.NoError(t, err)
	require.Equal(t, "S", string(answer), "the test server offers TLS (test/postgres.sh)")
	tc := tls.Client(nc, &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}) //nolint:gosec // only to read the certificate
	require.NoError(t, tc.Handshake())
	return tc.ConnectionState().PeerCertificates
}
