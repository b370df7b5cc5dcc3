package dbusers

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// The integration tests run against a real server, found through the environment:
//
//	TEST_MYSQL_ADDR      host:port, e.g. 127.0.0.1:3307
//	TEST_MYSQL_USER      administrator (default root)
//	TEST_MYSQL_PASSWORD  its password
//
// `eval "$(bash test/mariadb.sh)"` starts a throwaway MariaDB and exports them. Without
// TEST_MYSQL_ADDR the tests fail (so CI cannot pass them by accident) unless -short is given.
// They create databases and users whose names start with a random per-test prefix and drop them
// afterwards; the server may be shared by test runs.

const startServerHint = `TEST_MYSQL_ADDR is not set: the integration tests need a MySQL or MariaDB server.
Start a throwaway MariaDB from the repository root with

	eval "$(bash test/mariadb.sh)"

(it exports TEST_MYSQL_ADDR, TEST_MYSQL_USER and TEST_MYSQL_PASSWORD; "bash test/mariadb.sh stop" removes it),
or run "go test -short" to skip the integration tests.`

// testConn returns the admin connection to the test server, or fails (skips with -short).
func testConn(t *testing.T) Conn {
	t.Helper()
	addr := os.Getenv("TEST_MYSQL_ADDR")
	if addr == "" {
		if testing.Short() {
			t.Skip("integration test: TEST_MYSQL_ADDR is not set and -short is given")
		}
		t.Fatal(startServerHint)
	}
	host, portText, err := net.SplitHostPort(addr)
	require.NoError(t, err, "TEST_MYSQL_ADDR must be host:port")
	port, err := strconv.Atoi(portText)
	require.NoError(t, err, "TEST_MYSQL_ADDR must be host:port")
	user := os.Getenv("TEST_MYSQL_USER")
	if user == "" {
		user = "root"
	}
	return Conn{Host: host, Port: port, User: user, Password: secret.New(os.Getenv("TEST_MYSQL_PASSWORD")), Timeout: 10 * time.Second}
}

// testEnv is one test's view of the server: its name prefix and an admin session for setting
// things up and checking results independently of Apply.
type testEnv struct {
	t      *testing.T
	conn   Conn
	prefix string
	admin  *session
}

func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	conn := testConn(t)
	ctx := t.Context()
	admin, err := open(ctx, conn)
	require.NoError(t, err, "connect to the test server at %s", conn.Addr())
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	e := &testEnv{t: t, conn: conn, prefix: "it" + hex.EncodeToString(b) + "x", admin: admin}
	t.Cleanup(func() {
		defer admin.close()
		// A fresh context: t.Context() is canceled before Cleanup runs.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, u := range e.query(ctx, "SELECT CONCAT(User, '@', Host) FROM mysql.user WHERE User LIKE ?", e.prefix+"%") {
			name, host, _ := strings.Cut(u, "@")
			e.execCtx(ctx, "DROP USER IF EXISTS "+quoteAccount(name, host))
		}
		for _, db := range e.query(ctx, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE ?", e.prefix+"%") {
			e.execCtx(ctx, "DROP DATABASE IF EXISTS "+quoteIdent(db))
		}
	})
	return e
}

// n prefixes a name: every database and user of a test starts with the test's prefix.
func (e *testEnv) n(name string) string { return e.prefix + name }

func (e *testEnv) exec(query string, args ...any) {
	e.t.Helper()
	e.execCtx(e.t.Context(), query, args...)
}

func (e *testEnv) execCtx(ctx context.Context, query string, args ...any) {
	e.t.Helper()
	_, err := e.admin.conn.ExecContext(ctx, query, args...)
	require.NoError(e.t, err, query)
}

func (e *testEnv) query(ctx context.Context, query string, args ...any) []string {
	e.t.Helper()
	rows, err := e.admin.conn.QueryContext(ctx, query, args...)
	require.NoError(e.t, err, query)
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

// showGrants is SHOW GRANTS without the USAGE line (it holds the password hash), sorted.
func (e *testEnv) showGrants(user, host string) []string {
	e.t.Helper()
	lines := e.query(e.t.Context(), "SHOW GRANTS FOR "+quoteAccount(user, host))
	lines = slices.DeleteFunc(lines, func(l string) bool { return strings.HasPrefix(l, "GRANT USAGE ON *.*") })
	slices.Sort(lines)
	return lines
}

func (e *testEnv) userExists(user, host string) bool {
	e.t.Helper()
	return len(e.query(e.t.Context(), "SELECT User FROM mysql.user WHERE User = ? AND Host = ?", user, host)) == 1
}

func (e *testEnv) dbExists(db string) bool {
	e.t.Helper()
	return len(e.query(e.t.Context(), "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", db)) == 1
}

// login tries to log in as user (whose host must match the test client, e.g. %).
func (e *testEnv) login(user, password string) error {
	c := e.conn
	c.User, c.Password = user, secret.New(password)
	s, err := open(e.t.Context(), c)
	if err == nil {
		s.close()
	}
	return err
}

func (e *testEnv) apply(d Desired, managed ManagedState) (Result, error) {
	return Apply(e.t.Context(), e.conn, d, managed)
}

// mustApply applies d and requires success.
func (e *testEnv) mustApply(d Desired, managed ManagedState) Result {
	e.t.Helper()
	res, err := e.apply(d, managed)
	require.NoError(e.t, err)
	return res
}

func TestApplyIntegration(t *testing.T) {
	testConn(t) // fail (or skip) once, not once per case
	type given struct {
		d       Desired
		managed ManagedState
	}
	cases := map[string]struct {
		reason string
		// before brings the server into the starting state; it returns the spec and state to apply.
		before func(e *testEnv) given
		// wantChanges are the expected Result.Changes (names unprefixed: {p} is the prefix).
		wantChanges []string
		// wantErr, if set, is a substring of the expected error.
		wantErr string
		check   func(t *testing.T, e *testEnv, res Result, err error)
	}{
		"create from scratch": {
			reason: "databases and users are created, grants given, everything remembered",
			before: func(e *testEnv) given {
				return given{d: Desired{
					Databases: []string{e.n("shop"), e.n("my_app")},
					Users: []UserSpec{
						{Name: e.n("app"), Password: secret.New("app-pw-1"), Grants: []Grant{
							{Database: e.n("shop"), Privileges: []string{"ALL"}},
							{Database: e.n("my_app"), Privileges: []string{"SELECT", "INSERT"}},
						}},
						{Name: e.n("ro"), Host: "10.%", Password: secret.New("ro-pw"), Grants: []Grant{
							{Database: e.n("shop"), Privileges: []string{"SELECT"}},
						}},
					},
				}}
			},
			wantChanges: []string{
				"created database {p}my_app",
				"created database {p}shop",
				"created user '{p}app'@'%'",
				"granted SELECT, INSERT on {p}my_app.* to '{p}app'@'%'",
				"granted ALL PRIVILEGES on {p}shop.* to '{p}app'@'%'",
				"created user '{p}ro'@'10.%'",
				"granted SELECT on {p}shop.* to '{p}ro'@'10.%'",
			},
			check: func(t *testing.T, e *testEnv, res Result, _ error) {
				assert.NoError(t, e.login(e.n("app"), "app-pw-1"))
				assert.Equal(t, []string{
					"GRANT ALL PRIVILEGES ON `" + e.n("shop") + "`.* TO `" + e.n("app") + "`@`%`",
					"GRANT SELECT, INSERT ON `" + e.n("my\\_app") + "`.* TO `" + e.n("app") + "`@`%`",
				}, e.showGrants(e.n("app"), "%"), "the underscore is escaped: no wildcard grant")
				assert.Equal(t, []string{"GRANT SELECT ON `" + e.n("shop") + "`.* TO `" + e.n("ro") + "`@`10.%`"}, e.showGrants(e.n("ro"), "10.%"))
				assert.Equal(t, []string{e.n("my_app"), e.n("shop")}, res.Managed.Databases)
				assert.Equal(t, []ManagedUser{
					{Name: e.n("app"), Host: "%", PasswordDigest: PasswordDigest(secret.Value{}, e.n("app"), "%", secret.New("app-pw-1"))},
					{Name: e.n("ro"), Host: "10.%", PasswordDigest: PasswordDigest(secret.Value{}, e.n("ro"), "10.%", secret.New("ro-pw"))},
				}, res.Managed.Users)
			},
		},
		"change password": {
			reason: "a new password in the spec is set; the old one stops working",
			before: func(e *testEnv) given {
				d := Desired{Users: []UserSpec{{Name: e.n("app"), Password: secret.New("old-pw")}}}
				res := e.mustApply(d, ManagedState{})
				d.Users[0].Password = secret.New("new-pw")
				return given{d: d, managed: res.Managed}
			},
			wantChanges: []string{"changed password of user '{p}app'@'%'"},
			check: func(t *testing.T, e *testEnv, _ Result, _ error) {
				assert.NoError(t, e.login(e.n("app"), "new-pw"))
				assert.ErrorIs(t, e.login(e.n("app"), "old-pw"), ErrUnauthorized)
			},
		},
		"password changed behind our back": {
			reason: "the stored hash is compared, so an out-of-band change is corrected",
			before: func(e *testEnv) given {
				d := Desired{Users: []UserSpec{{Name: e.n("app"), Password: secret.New("spec-pw")}}}
				res := e.mustApply(d, ManagedState{})
				e.exec("ALTER USER " + quoteAccount(e.n("app"), "%") + " IDENTIFIED BY 'someone-else'")
				return given{d: d, managed: res.Managed}
			},
			wantChanges: []string{"changed password of user '{p}app'@'%'"},
			check: func(t *testing.T, e *testEnv, _ Result, _ error) {
				assert.NoError(t, e.login(e.n("app"), "spec-pw"))
			},
		},
		"password with quotes and backslashes": {
			reason: "the driver escapes passwords; they arrive byte for byte",
			before: func(e *testEnv) given {
				return given{d: Desired{Users: []UserSpec{{Name: e.n("app"), Password: secret.New(`a'b"c\'; DROP DATABASE mysql; -- \` + "`?")}}}}
			},
			wantChanges: []string{"created user '{p}app'@'%'"},
			check: func(t *testing.T, e *testEnv, _ Result, _ error) {
				assert.NoError(t, e.login(e.n("app"), `a'b"c\'; DROP DATABASE mysql; -- \`+"`?"))
				assert.Error(t, e.login(e.n("app"), `a'b"c'; DROP DATABASE mysql; --`+"`?"))
			},
		},
		"password with NO_BACKSLASH_ESCAPES": {
			reason: "with NO_BACKSLASH_ESCAPES a backslash is literal; the driver notices the mode",
			before: func(e *testEnv) given {
				old := e.query(e.t.Context(), "SELECT @@GLOBAL.sql_mode")[0]
				e.exec("SET GLOBAL sql_mode = CONCAT(@@GLOBAL.sql_mode, ',NO_BACKSLASH_ESCAPES')")
				e.t.Cleanup(func() {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					e.execCtx(ctx, "SET GLOBAL sql_mode = ?", old)
				})
				return given{d: Desired{Users: []UserSpec{{Name: e.n("app"), Password: secret.New(`x\'y''z\\`)}}}}
			},
			wantChanges: []string{"created user '{p}app'@'%'"},
			check: func(t *testing.T, e *testEnv, _ Result, _ error) {
				assert.NoError(t, e.login(e.n("app"), `x\'y''z\\`))
			},
		},
		"grants added and revoked": {
			reason: "the grants are diffed: extra ones revoked, missing ones granted",
			before: func(e *testEnv) given {
				d := Desired{
					Databases: []string{e.n("shop")},
					Users: []UserSpec{{Name: e.n("app"), Password: secret.New("pw"), Grants: []Grant{
						{Database: e.n("shop"), Privileges: []string{"SELECT", "INSERT", "DELETE"}},
					}}},
				}
				res := e.mustApply(d, ManagedState{})
				e.exec("CREATE TABLE " + quoteIdent(e.n("shop")) + ".orders (id INT)")
				d.Users[0].Grants = []Grant{
					{Database: e.n("shop"), Privileges: []string{"SELECT", "UPDATE"}},
					{Database: e.n("shop"), Table: "orders", Privileges: []string{"INSERT"}},
				}
				return given{d: d, managed: res.Managed}
			},
			wantChanges: []string{
				"revoked INSERT, DELETE on {p}shop.* from '{p}app'@'%'",
				"granted UPDATE on {p}shop.* to '{p}app'@'%'",
				"granted INSERT on {p}shop.orders to '{p}app'@'%'",
			},
			check: func(t *testing.T, e *testEnv, _ Result, _ error) {
				assert.Equal(t, []string{
					"GRANT INSERT ON `" + e.n("shop") + "`.`orders` TO `" + e.n("app") + "`@`%`",
					"GRANT SELECT, UPDATE ON `" + e.n("shop") + "`.* TO `" + e.n("app") + "`@`%`",
				}, e.showGrants(e.n("app"), "%"))
			},
		},
		"drift is reverted": {
			reason: "privileges, GRANT OPTION and grants on other databases added behind our back are revoked",
			before: func(e *testEnv) given {
				d := Desired{
					Databases: []string{e.n("shop")},
					Users: []UserSpec{{Name: e.n("app"), Password: secret.New("pw"), Grants: []Grant{
						{Database: e.n("shop"), Privileges: []string{"ALL"}},
					}}},
				}
				res := e.mustApply(d, ManagedState{})
				acct := quoteAccount(e.n("app"), "%")
				e.exec("GRANT ALL ON " + quoteIdent(e.n("shop")) + ".* TO " + acct + " WITH GRANT OPTION")
				e.exec("GRANT SELECT ON " + quoteIdent(e.n("other")) + ".* TO " + acct)
				e.exec("REVOKE DELETE ON " + quoteIdent(e.n("shop")) + ".* FROM " + acct)
				return given{d: d, managed: res.Managed}
			},
			wantChanges: []string{
				"revoked SELECT on {p}other.* from '{p}app'@'%'",
				"revoked GRANT OPTION on {p}shop.* from '{p}app'@'%'",
				"granted ALL PRIVILEGES on {p}shop.* to '{p}app'@'%'",
			},
			check: func(t *testing.T, e *testEnv, _ Result, _ error) {
				assert.Equal(t, []string{"GRANT ALL PRIVILEGES ON `" + e.n("shop") + "`.* TO `" + e.n("app") + "`@`%`"}, e.showGrants(e.n("app"), "%"))
			},
		},
		"wildcard grant replaced": {
			reason: "an unescaped (wildcard) grant, as the original operator made them, becomes an exact one",
			before: func(e *testEnv) given {
				e.exec("CREATE USER " + quoteAccount(e.n("app"), "%") + " IDENTIFIED BY 'pw'")
				e.exec("GRANT SELECT ON " + quoteIdent(e.n("my_db")) + ".* TO " + quoteAccount(e.n("app"), "%"))
				return given{
					d: Desired{Users: []UserSpec{{Name: e.n("app"), Password: secret.New("pw"), Grants: []Grant{
						{Database: e.n("my_db"), Privileges: []string{"SELECT"}},
					}}}},
					managed: ManagedState{Users: []ManagedUser{{Name: e.n("app"), Host: "%"}}},
				}
			},
			wantChanges: []string{
				"revoked SELECT on pattern {p}my_db.* from '{p}app'@'%'",
				"granted SELECT on {p}my_db.* to '{p}app'@'%'",
			},
			check: func(t *testing.T, e *testEnv, _ Result, _ error) {
				assert.Equal(t, []string{"GRANT SELECT ON `" + e.n("my\\_db") + "`.* TO `" + e.n("app") + "`@`%`"}, e.showGrants(e.n("app"), "%"))
			},
		},
		"drop user removed from spec": {
			reason: "a managed user that left the spec is dropped; an unmanaged one is untouched",
			before: func(e *testEnv) given {
				d := Desired{Users: []UserSpec{
					{Name: e.n("keep"), Password: secret.New("pw")},
					{Name: e.n("gone"), Host: "10.%", Password: secret.New("pw")},
				}}
				res := e.mustApply(d, ManagedState{})
				e.exec("CREATE USER " + quoteAccount(e.n("foreign"), "%") + " IDENTIFIED BY 'pw'")
				d.Users = d.Users[:1]
				return given{d: d, managed: res.Managed}
			},
			wantChanges: []string{"dropped user '{p}gone'@'10.%'"},
			check: func(t *testing.T, e *testEnv, res Result, _ error) {
				assert.False(t, e.userExists(e.n("gone"), "10.%"))
				assert.True(t, e.userExists(e.n("keep"), "%"))
				assert.True(t, e.userExists(e.n("foreign"), "%"), "never touch users we did not create")
				assert.Equal(t, []ManagedUser{{Name: e.n("keep"), Host: "%", PasswordDigest: PasswordDigest(secret.Value{}, e.n("keep"), "%", secret.New("pw"))}}, res.Managed.Users)
			},
		},
		"adopt existing user": {
			reason: "a user the spec names that exists already is managed from now on",
			before: func(e *testEnv) given {
				e.exec("CREATE USER " + quoteAccount(e.n("app"), "%") + " IDENTIFIED BY 'pw'")
				return given{d: Desired{Users: []UserSpec{{Name: e.n("app"), Password: secret.New("pw")}}}}
			},
			wantChanges: []string{"adopted existing user '{p}app'@'%'"},
			check: func(t *testing.T, e *testEnv, res Result, _ error) {
				require.Len(t, res.Managed.Users, 1)
				assert.Equal(t, e.n("app"), res.Managed.Users[0].Name)
			},
		},
		"prune off": {
			reason: "without PruneDatabases a database that left the spec stays, and stays remembered",
			before: func(e *testEnv) given {
				res := e.mustApply(Desired{Databases: []string{e.n("a"), e.n("b")}}, ManagedState{})
				return given{d: Desired{Databases: []string{e.n("a")}}, managed: res.Managed}
			},
			check: func(t *testing.T, e *testEnv, res Result, _ error) {
				assert.True(t, e.dbExists(e.n("b")))
				assert.Equal(t, []string{e.n("a"), e.n("b")}, res.Managed.Databases)
			},
		},
		"prune on": {
			reason: "with PruneDatabases only the databases this controller created are dropped",
			before: func(e *testEnv) given {
				e.exec("CREATE DATABASE " + quoteIdent(e.n("foreign")))
				res := e.mustApply(Desired{Databases: []string{e.n("a"), e.n("b"), e.n("foreign")}}, ManagedState{})
				require.Equal(e.t, []string{e.n("a"), e.n("b")}, res.Managed.Databases, "a database that existed is not ours")
				return given{d: Desired{Databases: []string{e.n("a")}, PruneDatabases: true}, managed: res.Managed}
			},
			wantChanges: []string{"dropped database {p}b"},
			check: func(t *testing.T, e *testEnv, res Result, _ error) {
				assert.False(t, e.dbExists(e.n("b")))
				assert.True(t, e.dbExists(e.n("a")))
				assert.True(t, e.dbExists(e.n("foreign")), "never drop a database we did not create")
				assert.Equal(t, []string{e.n("a")}, res.Managed.Databases)
			},
		},
		"missing table": {
			reason: "a table grant before the table exists fails alone; everything else is applied",
			before: func(e *testEnv) given {
				return given{d: Desired{
					Databases: []string{e.n("shop")},
					Users: []UserSpec{{Name: e.n("app"), Password: secret.New("pw"), Grants: []Grant{
						{Database: e.n("shop"), Table: "later", Privileges: []string{"SELECT"}},
						{Database: e.n("shop"), Privileges: []string{"INSERT"}},
					}}},
				}}
			},
			wantChanges: []string{
				"created database {p}shop",
				"created user '{p}app'@'%'",
				"granted INSERT on {p}shop.* to '{p}app'@'%'",
			},
			wantErr: "grant SELECT on {p}shop.later to '{p}app'@'%': server error 1146: Table '{p}shop.later' doesn't exist",
			check: func(t *testing.T, e *testEnv, res Result, err error) {
				assert.ErrorIs(t, err, ErrRefused)
				var se *StatementError
				require.ErrorAs(t, err, &se)
				assert.EqualValues(t, 1146, se.Number)
				assert.Len(t, res.Managed.Users, 1, "the created user is remembered although the call failed")
			},
		},
		"password refused by policy": {
			reason: "a refused password: no password in the error, the user's other steps skipped",
			before: func(e *testEnv) given {
				if _, err := e.admin.conn.ExecContext(e.t.Context(), "INSTALL SONAME 'simple_password_check'"); err != nil {
					e.t.Skipf("the server has no simple_password_check plugin (MariaDB only): %v", err)
				}
				e.t.Cleanup(func() {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					e.execCtx(ctx, "UNINSTALL SONAME 'simple_password_check'")
				})
				return given{d: Desired{
					Databases: []string{e.n("shop")},
					Users: []UserSpec{
						{Name: e.n("weak"), Password: secret.New("weakpw"), Grants: []Grant{{Database: e.n("shop"), Privileges: []string{"SELECT"}}}},
						{Name: e.n("strong"), Password: secret.New("Str0ng-Enough!pw"), Grants: []Grant{{Database: e.n("shop"), Privileges: []string{"SELECT"}}}},
					},
				}}
			},
			wantChanges: []string{
				"created database {p}shop",
				"created user '{p}strong'@'%'",
				"granted SELECT on {p}shop.* to '{p}strong'@'%'",
			},
			wantErr: "create user '{p}weak'@'%': server error 1819: the password does not satisfy the server's password policy",
			check: func(t *testing.T, e *testEnv, res Result, err error) {
				assert.NotContains(t, err.Error(), "weakpw")
				assert.False(t, e.userExists(e.n("weak"), "%"))
				assert.Equal(t, []string{e.n("strong")}, managedNames(res.Managed))
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := newTestEnv(t)
			g := tc.before(e)
			res, err := e.apply(g.d, g.managed)
			p := func(s string) string { return strings.ReplaceAll(s, "{p}", e.prefix) }
			if tc.wantErr == "" {
				require.NoError(t, err, tc.reason)
			} else {
				require.Error(t, err, tc.reason)
				assert.Equal(t, p(tc.wantErr), err.Error(), tc.reason)
			}
			want := make([]string, len(tc.wantChanges))
			for i, c := range tc.wantChanges {
				want[i] = p(c)
			}
			if len(want) == 0 {
				want = nil
			}
			assert.Equal(t, want, res.Changes, tc.reason)
			if tc.check != nil {
				tc.check(t, e, res, err)
			}
			if err != nil {
				return
			}
			// Idempotency: the same spec with the state just returned changes nothing.
			again, err := e.apply(g.d, res.Managed)
			require.NoError(t, err)
			assert.Empty(t, again.Changes, "a second identical Apply must change nothing")
			assert.Equal(t, res.Managed, again.Managed, "and remember the same")
		})
	}
}

func managedNames(m ManagedState) []string {
	var out []string
	for _, u := range m.Users {
		out = append(out, u.Name)
	}
	return out
}

func TestApplyIntegrationLogin(t *testing.T) {
	testConn(t)
	cases := map[string]struct {
		reason string
		mutate func(c *Conn)
		want   error
	}{
		"wrong password": {
			reason: "a refused login is ErrUnauthorized, not worth a quick retry",
			mutate: func(c *Conn) { c.Password = secret.New("wrong-" + c.Password.Reveal()) },
			want:   ErrUnauthorized,
		},
		"unknown user": {
			reason: "an unknown admin user is refused the same way",
			mutate: func(c *Conn) { c.User = "no-such-admin" },
			want:   ErrUnauthorized,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			conn := testConn(t)
			tc.mutate(&conn)
			_, err := Apply(t.Context(), conn, Desired{}, ManagedState{})
			require.Error(t, err, tc.reason)
			assert.True(t, errors.Is(err, tc.want), "%v", err)
			assert.NotContains(t, err.Error(), conn.Password.Reveal())
		})
	}
}

// TestApplyIntegrationSequence walks one spec through its life, checking after every step that
// repeating it changes nothing.
func TestApplyIntegrationSequence(t *testing.T) {
	e := newTestEnv(t)
	pw := secret.New("pw-1")
	spec := Desired{
		Databases: []string{e.n("shop")},
		Users: []UserSpec{{Name: e.n("app"), Password: pw, Grants: []Grant{
			{Database: e.n("shop"), Privileges: []string{"SELECT"}},
		}}},
	}
	var managed ManagedState
	steps := []struct {
		name   string
		change func()
		want   int // number of changes
	}{
		{"create", func() {}, 3},
		{"grant more", func() { spec.Users[0].Grants[0].Privileges = []string{"SELECT", "INSERT"} }, 1},
		{"new password", func() { spec.Users[0].Password = secret.New("pw-2") }, 1},
		{"remove user", func() { spec.Users = nil }, 1},
		{"prune", func() { spec.Databases, spec.PruneDatabases = nil, true }, 1},
	}
	for _, s := range steps {
		s.change()
		res, err := e.apply(spec, managed)
		require.NoError(t, err, s.name)
		assert.Len(t, res.Changes, s.want, "%s: %v", s.name, res.Changes)
		managed = res.Managed
		again, err := e.apply(spec, managed)
		require.NoError(t, err, s.name)
		assert.Empty(t, again.Changes, "%s: repeated", s.name)
		assert.Equal(t, managed, again.Managed)
	}
	assert.Equal(t, ManagedState{}, managed, "nothing left to remember")
	assert.False(t, e.dbExists(e.n("shop")))
	assert.False(t, e.userExists(e.n("app"), "%"))
}
