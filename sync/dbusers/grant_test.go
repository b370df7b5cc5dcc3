package dbusers

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseGrantAccepts(t *testing.T) {
	cases := map[string]struct {
		reason string
		stmt   string
		user   string
		host   string
		want   Grant
	}{
		"original format": {
			reason: "the original operator's example must keep working",
			stmt:   "GRANT ALL ON db1.* TO 'user1'@'%';",
			user:   "user1", host: "%",
			want: Grant{Database: "db1", Privileges: []string{"ALL"}},
		},
		"ALL PRIVILEGES": {
			reason: "ALL PRIVILEGES is ALL",
			stmt:   "GRANT ALL PRIVILEGES ON db1.* TO 'user1'@'%'",
			user:   "user1", host: "%",
			want: Grant{Database: "db1", Privileges: []string{"ALL"}},
		},
		"table with backticks and unquoted user": {
			reason: "backticks for names, an unquoted user and a quoted wildcard host",
			stmt:   "GRANT SELECT, INSERT ON `shop`.`orders` TO user1@'10.%'",
			user:   "user1", host: "10.%",
			want: Grant{Database: "shop", Table: "orders", Privileges: []string{"SELECT", "INSERT"}},
		},
		"lower case keywords": {
			reason: "keywords and privileges are case-insensitive; privileges come back in MySQL's order",
			stmt:   "grant insert,select on shop.* to \"user1\"@\"%\" ;",
			user:   "user1", host: "",
			want: Grant{Database: "shop", Privileges: []string{"SELECT", "INSERT"}},
		},
		"no host": {
			reason: "a missing @host means %, like in MySQL",
			stmt:   "GRANT SELECT ON shop.* TO user1",
			user:   "user1", host: "%",
			want: Grant{Database: "shop", Privileges: []string{"SELECT"}},
		},
		"multi-word privileges": {
			reason: "privileges of several words, with odd spacing",
			stmt:   "GRANT CREATE   TEMPORARY TABLES, LOCK TABLES,\n\tSHOW VIEW, CREATE ROUTINE, ALTER ROUTINE, EXECUTE, EVENT, TRIGGER, CREATE VIEW ON app.* TO `app`@`%`",
			user:   "app", host: "%",
			want: Grant{Database: "app", Privileges: []string{"CREATE TEMPORARY TABLES", "LOCK TABLES", "EXECUTE", "CREATE VIEW", "SHOW VIEW", "CREATE ROUTINE", "ALTER ROUTINE", "EVENT", "TRIGGER"}},
		},
		"duplicates": {
			reason: "a privilege named twice is granted once",
			stmt:   "GRANT SELECT, select ON app.* TO app@'%'",
			user:   "app", host: "%",
			want: Grant{Database: "app", Privileges: []string{"SELECT"}},
		},
		"unquoted IP host": {
			reason: "MySQL reads an unquoted host with dots",
			stmt:   "GRANT SELECT ON app.* TO app@10.1.2.3",
			user:   "app", host: "10.1.2.3",
			want: Grant{Database: "app", Privileges: []string{"SELECT"}},
		},
		"unquoted host name, host case": {
			reason: "host names compare case-insensitively",
			stmt:   "GRANT SELECT ON app.* TO app@LocalHost",
			user:   "app", host: "localhost",
			want: Grant{Database: "app", Privileges: []string{"SELECT"}},
		},
		"netmask host": {
			reason: "address/netmask accounts",
			stmt:   "GRANT SELECT ON app.* TO 'app'@'192.168.1.0/255.255.255.0'",
			user:   "app", host: "192.168.1.0/255.255.255.0",
			want: Grant{Database: "app", Privileges: []string{"SELECT"}},
		},
		"names with - and $": {
			reason: "allowed characters that need quoting in SQL",
			stmt:   "GRANT SELECT ON `my-db`.`t$1` TO 'app.user-1'@'%'",
			user:   "app.user-1", host: "%",
			want: Grant{Database: "my-db", Table: "t$1", Privileges: []string{"SELECT"}},
		},
		"keywords as names": {
			reason: "a database called table or on is a name in that position",
			stmt:   "GRANT SELECT ON `table`.on TO app",
			user:   "app", host: "%",
			want: Grant{Database: "table", Table: "on", Privileges: []string{"SELECT"}},
		},
		"table ALL": {
			reason: "ALL on a table",
			stmt:   "GRANT ALL ON shop.orders TO app",
			user:   "app", host: "%",
			want: Grant{Database: "shop", Table: "orders", Privileges: []string{"ALL"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseGrant(tc.stmt, tc.user, tc.host)
			require.NoError(t, err, tc.reason)
			assert.Equal(t, tc.want, got, tc.reason)

			again, err := ParseGrant(got.Statement(tc.user, tc.host), tc.user, tc.host)
			require.NoError(t, err, "the canonical form must parse")
			assert.Equal(t, got, again, "the canonical form must parse to the same grant")
		})
	}
}

func TestParseGrantRejects(t *testing.T) {
	cases := map[string]struct {
		reason string
		stmt   string
		user   string // default user1
		host   string // default %
		want   string // substring of the error
	}{
		"second statement": {
			reason: "a statement smuggled after the semicolon must never run",
			stmt:   "GRANT ALL ON db.* TO 'user1'@'%'; DROP DATABASE x",
			want:   "only one statement is allowed",
		},
		"second statement without semicolon": {
			reason: "trailing words are not ignored",
			stmt:   "GRANT ALL ON db.* TO 'user1'@'%' DROP DATABASE x",
			want:   `unexpected "DROP" after the account`,
		},
		"two semicolons": {
			reason: "only one optional semicolon",
			stmt:   "GRANT ALL ON db.* TO user1;;",
			want:   "only one statement is allowed",
		},
		"global": {
			reason: "*.* would give the privileges on every database, mysql included",
			stmt:   "GRANT ALL ON *.* TO 'user1'@'%'",
			want:   "global grants (*.*) are not allowed",
		},
		"current database": {
			reason: "ON * depends on the session's database",
			stmt:   "GRANT ALL ON * TO 'user1'@'%'",
			want:   "grants on the current database (*) are not allowed",
		},
		"unqualified table": {
			reason: "a table without its database depends on the session",
			stmt:   "GRANT SELECT ON orders TO user1",
			want:   "as db.* or db.table",
		},
		"system schema": {
			reason: "the mysql schema holds the accounts",
			stmt:   "GRANT SELECT ON mysql.* TO user1",
			want:   "system schema",
		},
		"system schema upper case": {
			reason: "system schemas are refused whatever their case",
			stmt:   "GRANT SELECT ON `MySQL`.`user` TO user1",
			want:   "system schema",
		},
		"with grant option": {
			reason: "the user could pass the privileges on",
			stmt:   "GRANT ALL ON db.* TO 'user1'@'%' WITH GRANT OPTION",
			want:   "WITH clauses",
		},
		"resource limits": {
			reason: "WITH MAX_QUERIES_PER_HOUR is not ours to manage",
			stmt:   "GRANT SELECT ON db.* TO user1 WITH MAX_QUERIES_PER_HOUR 1",
			want:   "WITH clauses",
		},
		"identified by": {
			reason: "passwords belong in the password field, never in a grant",
			stmt:   "GRANT ALL ON db.* TO 'user1'@'%' IDENTIFIED BY 'x'",
			want:   "IDENTIFIED BY is not allowed",
		},
		"require": {
			reason: "TLS requirements are account options",
			stmt:   "GRANT ALL ON db.* TO user1 REQUIRE SSL",
			want:   "REQUIRE clauses are not allowed",
		},
		"other user": {
			reason: "a user's grant must not give privileges to someone else",
			stmt:   "GRANT ALL ON db.* TO 'admin'@'%'",
			want:   `the grant is for the account "admin"@"%", not for 'user1'@'%'`,
		},
		"other host": {
			reason: "the same user from another host is another account",
			stmt:   "GRANT ALL ON db.* TO 'user1'@'10.%'",
			want:   "not for 'user1'@'%'",
		},
		"user case": {
			reason: "user names are case-sensitive",
			stmt:   "GRANT ALL ON db.* TO 'USER1'@'%'",
			want:   "not for 'user1'@'%'",
		},
		"two accounts": {
			reason: "exactly one account",
			stmt:   "GRANT ALL ON db.* TO user1, admin",
			want:   "exactly one account",
		},
		"super": {
			reason: "administrative privileges are refused",
			stmt:   "GRANT SUPER ON db.* TO user1",
			want:   `privilege "SUPER" is a global or administrative privilege`,
		},
		"grant option privilege": {
			reason: "GRANT OPTION as a privilege is refused too",
			stmt:   "GRANT SELECT, GRANT OPTION ON db.* TO user1",
			want:   `privilege "GRANT OPTION" is a global or administrative privilege`,
		},
		"file": {
			reason: "FILE reads the server's files",
			stmt:   "GRANT FILE ON db.* TO user1",
			want:   "global or administrative",
		},
		"create user": {
			reason: "CREATE USER is global",
			stmt:   "GRANT CREATE USER ON db.* TO user1",
			want:   "global or administrative",
		},
		"unknown privilege": {
			reason: "typos are errors, not ignored",
			stmt:   "GRANT SELEKT ON db.* TO user1",
			want:   `unknown privilege "SELEKT"`,
		},
		"missing comma": {
			reason: "two privileges without a comma are one unknown privilege",
			stmt:   "GRANT SELECT INSERT ON db.* TO user1",
			want:   `unknown privilege "SELECT INSERT"`,
		},
		"ALL with others": {
			reason: "MySQL refuses ALL in a list",
			stmt:   "GRANT ALL, SELECT ON db.* TO user1",
			want:   "ALL cannot be combined",
		},
		"database privilege on table": {
			reason: "EXECUTE exists only for databases",
			stmt:   "GRANT EXECUTE ON db.t TO user1",
			want:   "privilege EXECUTE cannot be granted on a table",
		},
		"column privileges": {
			reason: "column lists are not supported",
			stmt:   "GRANT SELECT (id) ON db.t TO user1",
			want:   "column-level privileges are not supported",
		},
		"column after table": {
			reason: "db.table.column is not an object",
			stmt:   "GRANT SELECT ON db.t.c TO user1",
			want:   "column names are not supported",
		},
		"procedure": {
			reason: "routine grants are not supported",
			stmt:   "GRANT EXECUTE ON PROCEDURE db.p TO user1",
			want:   "object types (PROCEDURE) are not supported",
		},
		"role grant": {
			reason: "GRANT role TO user has no ON",
			stmt:   "GRANT admin TO user1",
			want:   "expected ON after the privileges",
		},
		"revoke": {
			reason: "only GRANT",
			stmt:   "REVOKE ALL ON db.* FROM user1",
			want:   `must start with GRANT, found "REVOKE"`,
		},
		"empty": {
			reason: "nothing is not a grant",
			stmt:   "   ",
			want:   "must start with GRANT, found the end of the statement",
		},
		"no privileges": {
			reason: "GRANT ON is incomplete",
			stmt:   "GRANT ON db.* TO user1",
			want:   "expected a privilege",
		},
		"block comment": {
			reason: "comments can hide or (MySQL's /*! */) execute text",
			stmt:   "GRANT ALL ON db.* /*! , mysql.* */ TO user1",
			want:   "comments are not allowed",
		},
		"line comment": {
			reason: "-- comments",
			stmt:   "GRANT ALL ON db.* TO user1 -- and more",
			want:   "comments are not allowed",
		},
		"hash comment": {
			reason: "# comments",
			stmt:   "GRANT ALL ON db.* TO user1 # x",
			want:   "comments are not allowed",
		},
		"backtick inside name": {
			reason: "a doubled backtick would end the identifier in a naive renderer",
			stmt:   "GRANT ALL ON `db``; DROP DATABASE x; --`.* TO user1",
			want:   "quote characters are not allowed inside names",
		},
		"quote inside account": {
			reason: "a doubled quote inside the user name",
			stmt:   "GRANT ALL ON db.* TO 'user1''@''%'",
			want:   "quote characters are not allowed inside names",
		},
		"other quote inside name": {
			reason: "a single quote inside a backticked name fails the allow-list",
			stmt:   "GRANT ALL ON `db'x`.* TO user1",
			want:   `database name "db'x" must be`,
		},
		"backslash in host": {
			reason: "backslash escapes differ with NO_BACKSLASH_ESCAPES",
			stmt:   `GRANT ALL ON db.* TO 'user1'@'\'`,
			want:   "backslashes are not allowed inside names",
		},
		"backslash escaped quote": {
			reason: `'\'' is an escaped quote in MySQL, a quote plus junk here`,
			stmt:   `GRANT ALL ON db.* TO 'user1\''@'%'`,
			want:   "are not allowed inside names",
		},
		"unterminated": {
			reason: "an open quote",
			stmt:   "GRANT ALL ON `db.* TO user1",
			want:   "unterminated quoted name",
		},
		"wildcard in database": {
			reason: "% in a database-level grant matches many databases",
			stmt:   "GRANT ALL ON `db%`.* TO user1",
			want:   `database name "db%" must be`,
		},
		"space in database": {
			reason: "spaces are not in the allow-list",
			stmt:   "GRANT ALL ON `my db`.* TO user1",
			want:   `database name "my db" must be`,
		},
		"fullwidth GRANT": {
			reason: "look-alike letters are not keywords",
			stmt:   "ＧＲＡＮＴ ALL ON db.* TO user1",
			want:   "unexpected character U+FF27 at offset 0",
		},
		"cyrillic a in database": {
			reason: "homoglyphs in names are refused",
			stmt:   "GRANT ALL ON `dаta`.* TO user1",
			want:   "unexpected character U+0430 inside a name",
		},
		"kelvin sign": {
			reason: "strings.EqualFold would fold U+212A to k; the lexer refuses it first",
			stmt:   "GRANT LOC\u212A TABLES ON db.* TO user1",
			want:   "unexpected character U+212A",
		},
		"zero width space": {
			reason: "invisible characters",
			stmt:   "GRANT ALL ON db.*\u200b TO user1",
			want:   "unexpected character U+200B",
		},
		"non-breaking space": {
			reason: "only ASCII whitespace",
			stmt:   "GRANT\u00a0ALL ON db.* TO user1",
			want:   "unexpected character U+00A0",
		},
		"right-to-left override in name": {
			reason: "bidi controls hide text",
			stmt:   "GRANT ALL ON `db\u202e`.* TO user1",
			want:   "unexpected character U+202E inside a name",
		},
		"NUL": {
			reason: "NUL bytes truncate strings in C code",
			stmt:   "GRANT ALL ON db.* TO user1\x00; DROP DATABASE x",
			want:   "unexpected character U+0000",
		},
		"invalid UTF-8": {
			reason: "broken encodings",
			stmt:   "GRANT ALL ON db.* TO user1\xff",
			want:   "unexpected character U+FFFD",
		},
		"too long": {
			reason: "bounded work",
			stmt:   "GRANT " + strings.Repeat("SELECT, ", 600) + "INSERT ON db.* TO user1",
			want:   "longer than 4096",
		},
		"CIDR host": {
			reason: "MariaDB and MySQL 5.7 do not know prefix lengths",
			stmt:   "GRANT ALL ON db.* TO user1@'10.0.0.0/8'",
			host:   "10.0.0.0/8",
			want:   "write the netmask in full",
		},
		"invalid spec user": {
			reason: "the user passed in is checked too",
			stmt:   "GRANT ALL ON db.* TO root",
			user:   "root",
			want:   `user "root" is reserved`,
		},
		"operator in host": {
			reason: "an unquoted % is an operator in MySQL",
			stmt:   "GRANT ALL ON db.* TO user1@%",
			want:   "unexpected character U+0025",
		},
		"semicolon inside object": {
			reason: "a statement break in the middle",
			stmt:   "GRANT ALL ON db; DROP DATABASE db; GRANT ALL ON db.* TO user1",
			want:   "as db.* or db.table",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			user, host := tc.user, tc.host
			if user == "" {
				user = "user1"
			}
			if host == "" {
				host = "%"
			}
			g, err := ParseGrant(tc.stmt, user, host)
			require.Error(t, err, tc.reason)
			assert.Zero(t, g, "a refused grant returns no privileges")
			assert.True(t, errors.Is(err, ErrInvalid), "refusals match ErrInvalid")
			var ge *GrantError
			require.ErrorAs(t, err, &ge)
			assert.Contains(t, err.Error(), tc.want, tc.reason)
			assert.True(t, strings.HasPrefix(err.Error(), "invalid grant: "), "stable prefix")

			_, err2 := ParseGrant(tc.stmt, user, host)
			assert.Equal(t, err.Error(), err2.Error(), "messages are stable")
		})
	}
}

func TestGrantStatement(t *testing.T) {
	cases := map[string]struct {
		reason string
		grant  Grant
		user   string
		host   string
		want   string
	}{
		"database ALL": {
			reason: "ALL renders as ALL PRIVILEGES, names in backticks, SHOW GRANTS style",
			grant:  Grant{Database: "db1", Privileges: []string{"all privileges"}},
			user:   "user1", host: "",
			want: "GRANT ALL PRIVILEGES ON `db1`.* TO `user1`@`%`",
		},
		"table list": {
			reason: "privileges normalized and in MySQL's order; the database is not escaped here",
			grant:  Grant{Database: "my_db", Table: "t", Privileges: []string{"insert", "select", "SELECT"}},
			user:   "u", host: "10.%",
			want: "GRANT SELECT, INSERT ON `my_db`.`t` TO `u`@`10.%`",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.grant.Statement(tc.user, tc.host), tc.reason)
		})
	}
}

// FuzzParseGrant checks that ParseGrant never panics and that whatever it accepts is valid,
// re-renders to a canonical statement that parses to the same grant, and is stable under that.
// The seeds run in every `go test`; `go test -fuzz FuzzParseGrant ./sync/dbusers` explores further.
func FuzzParseGrant(f *testing.F) {
	seeds := []struct{ stmt, user, host string }{
		{"GRANT ALL ON db1.* TO 'user1'@'%';", "user1", "%"},
		{"GRANT SELECT, INSERT ON `shop`.`orders` TO user1@'10.%'", "user1", "10.%"},
		{"grant create temporary tables, lock tables on a.* to \"u\"@\"localhost\"", "u", "localhost"},
		{"GRANT ALL PRIVILEGES ON `x-y`.`z$` TO `u.v`@`192.168.1.0/255.255.255.0`", "u.v", "192.168.1.0/255.255.255.0"},
		{"GRANT SELECT ON db.t TO u@10.0.0.1", "u", "10.0.0.1"},
		{"GRANT SELECT ON db.t TO u@'::1'", "u", "::1"},
		{"GRANT ALL ON db.* TO 'u'@'%'; DROP DATABASE x", "u", "%"},
		{"GRANT ALL ON *.* TO u", "u", "%"},
		{"GRANT ALL ON db.* TO u WITH GRANT OPTION", "u", "%"},
		{"GRANT ALL ON `db``x`.* TO u", "u", "%"},
		{"GRANT ALL ON db.* /* x */ TO u", "u", "%"},
		{"GRANT ALL ON db.* TO u -- x", "u", "%"},
		{"GRANT SELECT ON db.t TO u@a.b.c", "u", "A.B.C"},
		{"GRANT ALL ON `table`.on TO u", "u", ""},
		{"GRANT", "u", "%"},
		{"", "", ""},
		{"GRANT ALL ON db.* TO 'u'@'%", "u", "%"},
		{"GRANT ALL ON TABLE db.t TO u", "u", "%"},
		{"\x00\xff'`\"", "u", "%"},
	}
	for _, s := range seeds {
		f.Add(s.stmt, s.user, s.host)
	}
	f.Fuzz(func(t *testing.T, stmt, user, host string) {
		g, err := ParseGrant(stmt, user, host)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalid)
			require.Zero(t, g)
			return
		}
		require.NoError(t, g.validate(), "accepted grants are valid")
		require.Equal(t, g, g.normalized(), "accepted grants are normalized")
		canon := g.Statement(user, host)
		again, err := ParseGrant(canon, user, host)
		require.NoError(t, err, "canonical form %q must parse", canon)
		require.Equal(t, g, again, "canonical form %q must parse to the same grant", canon)
		require.Equal(t, canon, again.Statement(user, host), "canonical form is a fixed point")
		// The executed statement is built from the same validated names: it must not contain
		// anything that could end a name or a statement.
		for _, name := range []string{g.Database, g.Table} {
			require.NotContains(t, name, "`")
			require.NotContains(t, name, ";")
		}
	})
}
