package pgusers

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcsps/rds-lambda-controller/sync/dbusers"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// TestPlan is the table of plan: the statements (and their order) for a desired state, a
// remembered state and an observation, and what is remembered before any of them runs.
func TestPlan(t *testing.T) {
	key := secret.New("key")
	pw := secret.New("App-pw-1")
	digest := dbusers.PasswordDigest(key, "app", "%", pw)
	app := func(grants ...dbusers.Grant) dbusers.UserSpec {
		return dbusers.UserSpec{Name: "app", Host: "%", Password: pw, Grants: grants}
	}
	managedApp := dbusers.ManagedUser{Name: "app", Host: "%", PasswordDigest: digest}
	role := func(grants map[scope]privSet, owns ...string) observedRole {
		if grants == nil {
			grants = map[scope]privSet{}
		}
		return observedRole{canLogin: true, grants: grants, owns: owns}
	}
	obs := func(edit func(*observed)) observed {
		o := observed{version: 150004, databases: map[string]bool{"shop": true}, roles: map[string]observedRole{},
			tables: map[dbSchema][]string{}, admin: "root", owners: map[scope]string{}, memberOf: map[string]bool{},
			openToPublic: map[string]bool{}}
		if edit != nil {
			edit(&o)
		}
		return o
	}
	type stmt struct{ db, query string }
	tests := []struct {
		reason  string
		desired dbusers.Desired
		managed dbusers.ManagedState
		obs     observed
		want    []stmt
		// wantPassword lists the steps (by index) that carry the password.
		wantPassword []int
		wantState    dbusers.ManagedState
	}{
		{
			reason:  "a new database is created and closed to PUBLIC; it is remembered once created",
			desired: dbusers.Desired{Databases: []string{"shop", "logs"}},
			obs:     obs(nil),
			want: []stmt{
				{"", `CREATE DATABASE "logs"`},
				{"", `REVOKE CONNECT, TEMPORARY ON DATABASE "logs" FROM PUBLIC`},
			},
		},
		{
			reason:  "a new role is created with its password (sent as it is sent, never in the query) and its grants, CONNECT implied",
			desired: dbusers.Desired{Users: []dbusers.UserSpec{app(dbusers.Grant{Database: "shop", Schema: "public", Privileges: []string{"USAGE"}})}},
			obs:     obs(nil),
			want: []stmt{
				{"", `CREATE ROLE "app" LOGIN PASSWORD `},
				{"", `GRANT CONNECT ON DATABASE "shop" TO "app"`},
				{"shop", `GRANT USAGE ON SCHEMA "public" TO "app"`},
			},
			wantPassword: []int{0},
		},
		{
			reason:       "an existing role we do not remember is adopted; its password is set (it cannot be read)",
			desired:      dbusers.Desired{Users: []dbusers.UserSpec{app()}},
			obs:          obs(func(o *observed) { o.roles["app"] = role(nil) }),
			want:         []stmt{{"", `ALTER ROLE "app" PASSWORD `}},
			wantPassword: []int{0},
		},
		{
			reason:    "a managed role with the remembered password and its grants: nothing to do",
			desired:   dbusers.Desired{Users: []dbusers.UserSpec{app(dbusers.Grant{Database: "shop", Privileges: []string{"CONNECT"}})}},
			managed:   dbusers.ManagedState{Users: []dbusers.ManagedUser{managedApp}},
			obs:       obs(func(o *observed) { o.roles["app"] = role(map[scope]privSet{{db: "shop"}: {"CONNECT": true}}) }),
			wantState: dbusers.ManagedState{Users: []dbusers.ManagedUser{managedApp}},
		},
		{
			reason:  "a role that may not log in is let in",
			desired: dbusers.Desired{Users: []dbusers.UserSpec{app()}},
			managed: dbusers.ManagedState{Users: []dbusers.ManagedUser{managedApp}},
			obs: obs(func(o *observed) {
				o.roles["app"] = observedRole{grants: map[scope]privSet{}}
			}),
			want:      []stmt{{"", `ALTER ROLE "app" LOGIN`}},
			wantState: dbusers.ManagedState{Users: []dbusers.ManagedUser{managedApp}},
		},
		{
			reason:  "privileges beyond the grants are revoked first, the grant option with them, then the missing ones granted",
			desired: dbusers.Desired{Users: []dbusers.UserSpec{app(dbusers.Grant{Database: "shop", Schema: "public", Table: "orders", Privileges: []string{"SELECT"}})}},
			managed: dbusers.ManagedState{Users: []dbusers.ManagedUser{managedApp}},
			obs: obs(func(o *observed) {
				o.roles["app"] = role(map[scope]privSet{
					{db: "shop"}: {"CONNECT": true, "TEMPORARY": true},
					{db: "shop", schema: "public", table: "orders"}: {"INSERT": true, "DELETE": true, grantOption: true},
				})
			}),
			want: []stmt{
				{"", `REVOKE TEMPORARY ON DATABASE "shop" FROM "app"`},
				{"shop", `REVOKE GRANT OPTION FOR ALL PRIVILEGES ON TABLE "public"."orders" FROM "app"`},
				{"shop", `REVOKE INSERT, DELETE ON TABLE "public"."orders" FROM "app"`},
				{"shop", `GRANT SELECT ON TABLE "public"."orders" TO "app"`},
			},
			wantState: dbusers.ManagedState{Users: []dbusers.ManagedUser{managedApp}},
		},
		{
			reason:  "ALL is granted as ALL PRIVILEGES while any privilege of the level is missing, and what a newer server adds to ALL is kept",
			desired: dbusers.Desired{Users: []dbusers.UserSpec{app(dbusers.Grant{Database: "shop", Schema: "public", Table: "*", Privileges: []string{"ALL"}})}},
			managed: dbusers.ManagedState{Users: []dbusers.ManagedUser{managedApp}},
			obs: obs(func(o *observed) {
				o.tables[dbSchema{"shop", "public"}] = []string{"a", "b"}
				o.roles["app"] = role(map[scope]privSet{
					{db: "shop"}: {"CONNECT": true},
					{db: "shop", schema: "public", table: "a"}: {"SELECT": true, "INSERT": true, "UPDATE": true, "DELETE": true,
						"TRUNCATE": true, "REFERENCES": true, "TRIGGER": true, "MAINTAIN": true},
				})
			}),
			want:      []stmt{{"shop", `GRANT ALL PRIVILEGES ON TABLE "public"."b" TO "app"`}},
			wantState: dbusers.ManagedState{Users: []dbusers.ManagedUser{managedApp}},
		},
		{
			reason:  "a grant on every table of a schema reaches each table there is; another role's table needs root in the owner (ours) once",
			desired: dbusers.Desired{Users: []dbusers.UserSpec{app(dbusers.Grant{Database: "shop", Schema: "public", Table: "*", Privileges: []string{"SELECT"}})}},
			managed: dbusers.ManagedState{Users: []dbusers.ManagedUser{managedApp, {Name: "owner", Host: "%"}}},
			obs: obs(func(o *observed) {
				o.tables[dbSchema{"shop", "public"}] = []string{"mine", "theirs", "root_s"}
				o.owners[scope{"shop", "public", "mine"}] = "owner"
				o.owners[scope{"shop", "public", "theirs"}] = "stranger"
				o.owners[scope{"shop", "public", "root_s"}] = "root"
				o.roles["app"] = role(map[scope]privSet{{db: "shop"}: {"CONNECT": true}})
				o.roles["owner"] = role(nil, "shop")
			}),
			want: []stmt{
				{"", `GRANT "owner" TO "root"`},
				{"shop", `GRANT SELECT ON TABLE "public"."mine" TO "app"`},
				{"shop", `GRANT SELECT ON TABLE "public"."root_s" TO "app"`},
				{"shop", `GRANT SELECT ON TABLE "public"."theirs" TO "app"`},
				{"", ""}, // owner left the spec, but owns objects: refused, not dropped
			},
			wantState: dbusers.ManagedState{Users: []dbusers.ManagedUser{managedApp, {Name: "owner", Host: "%"}}},
		},
		{
			reason:  "PostgreSQL 16 and later: the membership must inherit, or it gives root no privilege",
			desired: dbusers.Desired{Users: []dbusers.UserSpec{app(dbusers.Grant{Database: "shop", Schema: "s", Table: "t", Privileges: []string{"SELECT"}})}},
			managed: dbusers.ManagedState{Users: []dbusers.ManagedUser{managedApp, {Name: "owner", Host: "%"}}},
			obs: obs(func(o *observed) {
				o.version = 160002
				o.owners[scope{"shop", "s", "t"}] = "owner"
				o.roles["app"] = role(map[scope]privSet{{db: "shop"}: {"CONNECT": true}})
				o.roles["owner"] = role(nil, "shop")
			}),
			want: []stmt{
				{"", `GRANT "owner" TO "root" WITH INHERIT TRUE`},
				{"shop", `GRANT SELECT ON TABLE "s"."t" TO "app"`},
				{"", ""}, // owner left the spec, but owns objects: refused, not dropped
			},
			wantState: dbusers.ManagedState{Users: []dbusers.ManagedUser{managedApp, {Name: "owner", Host: "%"}}},
		},
		{
			reason: "a role's own table, schema and database: it holds every privilege as their owner, nothing is granted (again)",
			desired: dbusers.Desired{Users: []dbusers.UserSpec{app(
				dbusers.Grant{Database: "own", Privileges: []string{"ALL"}},
				dbusers.Grant{Database: "shop", Schema: "s", Privileges: []string{"USAGE"}},
				dbusers.Grant{Database: "shop", Schema: "s", Table: AllTables, Privileges: []string{"SELECT"}},
			)}},
			managed: dbusers.ManagedState{Users: []dbusers.ManagedUser{managedApp}},
			obs: obs(func(o *observed) {
				o.databases["own"] = true
				o.owners[scope{db: "own"}] = "app"
				o.owners[scope{db: "shop", schema: "s"}] = "app"
				o.owners[scope{"shop", "s", "t"}] = "app"
				o.tables[dbSchema{"shop", "s"}] = []string{"t"}
				o.roles["app"] = role(map[scope]privSet{{db: "shop"}: {"CONNECT": true}})
			}),
			wantState: dbusers.ManagedState{Users: []dbusers.ManagedUser{managedApp}},
		},
		{
			reason:  "a managed role that left the spec: what it holds is revoked, then it is dropped",
			managed: dbusers.ManagedState{Users: []dbusers.ManagedUser{managedApp}},
			obs: obs(func(o *observed) {
				o.roles["app"] = role(map[scope]privSet{{db: "shop"}: {"CONNECT": true}, {db: "shop", schema: "public"}: {"USAGE": true}})
			}),
			want: []stmt{
				{"", `REVOKE ALL ON DATABASE "shop" FROM "app"`},
				{"shop", `REVOKE ALL ON SCHEMA "public" FROM "app"`},
				{"", `DROP ROLE IF EXISTS "app"`},
			},
			wantState: dbusers.ManagedState{Users: []dbusers.ManagedUser{managedApp}},
		},
		{
			reason:    "a managed role that left the spec but owns objects is left alone, and stays remembered",
			managed:   dbusers.ManagedState{Users: []dbusers.ManagedUser{managedApp}},
			obs:       obs(func(o *observed) { o.roles["app"] = role(map[scope]privSet{{db: "shop"}: {"CONNECT": true}}, "shop") }),
			want:      []stmt{{"", ""}},
			wantState: dbusers.ManagedState{Users: []dbusers.ManagedUser{managedApp}},
		},
		{
			reason:  "a managed role gone already is forgotten; a role never managed is never dropped",
			managed: dbusers.ManagedState{Users: []dbusers.ManagedUser{managedApp}},
			obs:     obs(func(o *observed) { o.roles["other"] = role(nil) }),
		},
		{
			reason:  "a remembered database of root still with the default privileges (its closing to PUBLIC was lost) is closed, one given to another owner is not; a created one only once",
			desired: dbusers.Desired{Databases: []string{"shop", "logs", "other"}},
			managed: dbusers.ManagedState{Databases: []string{"other", "shop"}},
			obs: obs(func(o *observed) {
				o.openToPublic["shop"], o.owners[scope{db: "shop"}] = true, "root"
				o.databases["other"], o.openToPublic["other"], o.owners[scope{db: "other"}] = true, true, "app"
			}),
			want: []stmt{
				{"", `CREATE DATABASE "logs"`},
				{"", `REVOKE CONNECT, TEMPORARY ON DATABASE "logs" FROM PUBLIC`},
				{"", `REVOKE CONNECT, TEMPORARY ON DATABASE "shop" FROM PUBLIC`},
			},
			wantState: dbusers.ManagedState{Databases: []string{"other", "shop"}},
		},
		{
			reason:    "managed databases are dropped only with prune, last, and forgotten when gone",
			desired:   dbusers.Desired{PruneDatabases: true},
			managed:   dbusers.ManagedState{Databases: []string{"gone", "shop"}},
			obs:       obs(nil),
			want:      []stmt{{"", `DROP DATABASE IF EXISTS "shop"`}},
			wantState: dbusers.ManagedState{Databases: []string{"shop"}},
		},
		{
			reason:    "without prune a database left out stays remembered and in place",
			managed:   dbusers.ManagedState{Databases: []string{"shop"}},
			obs:       obs(nil),
			wantState: dbusers.ManagedState{Databases: []string{"shop"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			d := tt.desired
			d.DigestKey = key
			steps, state := plan(Normalize(d), tt.managed, tt.obs)
			var got []stmt
			var withPassword []int
			for _, st := range steps {
				if st.query == "" && st.refused == nil {
					continue // only the remembered state
				}
				got = append(got, stmt{st.db, st.query})
				if !st.password.Empty() {
					withPassword = append(withPassword, len(got)-1)
				}
			}
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.wantPassword, withPassword)
			assert.Equal(t, tt.wantState, state)
			for _, st := range steps {
				assert.NotContains(t, st.query, pw.Reveal(), "no password in a query")
				assert.NotContains(t, st.change, pw.Reveal(), "no password in a change")
			}
		})
	}
}

// TestApplyRefusesBeforeConnecting: a spec or a remembered state the allow-lists refuse, or the
// admin role named as a user, fails with ErrInvalid and no connection (the address is closed).
func TestApplyRefusesBeforeConnecting(t *testing.T) {
	conn := dbusers.Conn{Host: "127.0.0.1", Port: 1, User: "root", Password: secret.New("x")}
	pw := secret.New("pw-123456")
	tests := []struct {
		reason  string
		d       dbusers.Desired
		managed dbusers.ManagedState
		want    string
	}{
		{"a system database", dbusers.Desired{Databases: []string{"template1"}}, dbusers.ManagedState{}, `database "template1" is a system database`},
		{"the admin as a user", dbusers.Desired{Users: []dbusers.UserSpec{{Name: "root", Password: pw}}}, dbusers.ManagedState{}, `user "root" is reserved`},
		{"a pg_ role", dbusers.Desired{Users: []dbusers.UserSpec{{Name: "pg_read_all_data", Password: pw}}}, dbusers.ManagedState{}, `reserved`},
		{"a host", dbusers.Desired{Users: []dbusers.UserSpec{{Name: "app", Host: "10.%", Password: pw}}}, dbusers.ManagedState{}, `PostgreSQL roles have no host`},
		{"no password", dbusers.Desired{Users: []dbusers.UserSpec{{Name: "app"}}}, dbusers.ManagedState{}, `password must not be empty`},
		{"a forged remembered role", dbusers.Desired{}, dbusers.ManagedState{Users: []dbusers.ManagedUser{{Name: `x" CASCADE`}}}, `managed users[0]`},
		{"a forged remembered database", dbusers.Desired{PruneDatabases: true}, dbusers.ManagedState{Databases: []string{"postgres"}}, `managed databases[0]`},
		{"a schema privilege on a database", dbusers.Desired{Users: []dbusers.UserSpec{{Name: "app", Password: pw, Grants: []dbusers.Grant{{Database: "shop", Privileges: []string{"USAGE"}}}}}},
			dbusers.ManagedState{}, `privilege USAGE cannot be granted on a database here`},
		{"ALL with others", dbusers.Desired{Users: []dbusers.UserSpec{{Name: "app", Password: pw, Grants: []dbusers.Grant{{Database: "shop", Privileges: []string{"ALL", "CONNECT"}}}}}},
			dbusers.ManagedState{}, `ALL cannot be combined`},
		{"a system schema", dbusers.Desired{Users: []dbusers.UserSpec{{Name: "app", Password: pw, Grants: []dbusers.Grant{{Database: "shop", Schema: "pg_catalog", Privileges: []string{"USAGE"}}}}}},
			dbusers.ManagedState{}, `system schema`},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			_, err := Apply(t.Context(), conn, tt.d, tt.managed)
			assert.ErrorIs(t, err, dbusers.ErrInvalid)
			assert.NotErrorIs(t, err, dbusers.ErrUnreachable, "refused before connecting")
			assert.ErrorContains(t, err, tt.want)
		})
	}
}
