package pgusers

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/sync/dbusers"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// TestIntegrationSearchPathCannotHijackAdmin: a role the controller created plants a function
// named as one of pg_catalog's, with an argument type that overload resolution prefers, in a
// schema on the admin's search_path of the database the admin reads in. Up to PostgreSQL 14
// every role may create in public of every database it connects to, the maintenance database
// postgres included, where observe asks pg_has_role($1, 'USAGE'): public.pg_has_role(text, text)
// wins over pg_catalog's (name, text) and (oid, text) and runs as the admin, which could make
// its planter CREATEROLE, or a member of root. The controller's sessions search pg_catalog only.
//
// PostgreSQL 15 and later no longer let every role create in public, so the test puts the
// session's maintenance connection on a database of the admin's, whose public the planter may
// create in, as PostgreSQL 14's postgres.
func TestIntegrationSearchPathCannotHijackAdmin(t *testing.T) {
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
	for _, s := range []string{
		"CREATE TABLE public.orders (id int)",
		`CREATE FUNCTION public.pg_has_role(text, text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE 'ALTER ROLE ` + quoteIdent(app) + ` CREATEDB CREATEROLE';
	RETURN true;
END $$`,
	} {
		_, err = ac.Exec(t.Context(), s)
		require.NoError(t, err, s)
	}
	_ = ac.Close(context.Background())

	m := dbusers.NormalizeManaged(res.Managed)
	s, err := open(t.Context(), e.conn)
	require.NoError(t, err)
	defer s.close()
	c, err := s.conn(t.Context(), shop)
	require.NoError(t, err)
	s.conns[""] = c // the maintenance session, in a database whose public every role may write
	obs, err := s.observe(t.Context(), Normalize(d), m)
	require.NoError(t, err)

	assert.Equal(t, []string{"false false"},
		e.strings(maintenanceDB, "SELECT rolcreatedb::text || ' ' || rolcreaterole::text FROM pg_roles WHERE rolname = $1", app),
		"the planted function did not run as the admin")
	assert.False(t, obs.memberOf[app], "pg_catalog's pg_has_role answered: the admin is no member of %s yet", app)
}

// TestIntegrationGrantsOnARolesOwnObjects: a role granted privileges on objects it owns (its own
// tables in a schema whose every table it is granted on, its own schema) holds them as their
// owner, which the observation does not list as grants: the second apply must not grant them
// again, nor any apply after it.
func TestIntegrationGrantsOnARolesOwnObjects(t *testing.T) {
	e := newTestEnv(t)
	shop, app := e.n("shop"), e.n("app")
	d := dbusers.Desired{
		Databases: []string{shop},
		Users: []dbusers.UserSpec{{Name: app, Password: secret.New("App-pw-1"), Grants: []dbusers.Grant{
			{Database: shop, Privileges: []string{"CONNECT", "CREATE"}},
			{Database: shop, Schema: "public", Privileges: []string{"ALL"}},
			{Database: shop, Schema: "public", Table: AllTables, Privileges: []string{"ALL"}},
			{Database: shop, Schema: "app", Privileges: []string{"USAGE"}},
		}}},
	}
	res, err := e.apply(d, dbusers.ManagedState{})
	// Schema app does not exist yet: that grant is refused, the others are made.
	require.ErrorIs(t, err, dbusers.ErrRefused)

	ac, err := e.login(app, "App-pw-1", shop)
	require.NoError(t, err)
	for _, s := range []string{"CREATE TABLE public.orders (id int)", "CREATE SCHEMA app"} {
		_, err = ac.Exec(t.Context(), s)
		require.NoError(t, err, s)
	}
	_ = ac.Close(context.Background())

	res, err = e.apply(d, res.Managed)
	require.NoError(t, err)
	for range 2 {
		again, err := e.apply(d, res.Managed)
		require.NoError(t, err)
		assert.Empty(t, again.Changes, "the owner holds every privilege on its objects: nothing to grant")
		res = again
	}
}

// TestIntegrationClosingToPublicIsNotLost: a database is created and remembered, then the
// connection is lost (or the call's time is up) before it is closed to PUBLIC. The next apply
// finds it remembered, with PostgreSQL's default privileges (every role may connect): it closes
// it then, and only then.
func TestIntegrationClosingToPublicIsNotLost(t *testing.T) {
	e := newTestEnv(t)
	shop, other := e.n("shop"), e.n("other")
	e.exec(maintenanceDB, "CREATE DATABASE "+quoteIdent(shop), "CREATE ROLE "+quoteIdent(other)+" LOGIN PASSWORD 'Other-pw-1'")
	require.True(t, e.canLogin(other, "Other-pw-1", shop), "a new database is open to PUBLIC")

	d := dbusers.Desired{Databases: []string{shop}}
	res, err := e.apply(d, dbusers.ManagedState{Databases: []string{shop}})
	require.NoError(t, err)
	assert.Equal(t, []string{"revoked CONNECT, TEMPORARY on database " + shop + " from PUBLIC"}, res.Changes)
	assert.False(t, e.canLogin(other, "Other-pw-1", shop), "the controller's database is closed to PUBLIC")

	again, err := e.apply(d, res.Managed)
	require.NoError(t, err)
	assert.Empty(t, again.Changes)

	// A database the controller did not create is left as it is.
	e.exec(maintenanceDB, "DROP DATABASE "+quoteIdent(shop), "CREATE DATABASE "+quoteIdent(shop))
	res, err = e.apply(d, dbusers.ManagedState{})
	require.NoError(t, err)
	assert.Empty(t, res.Changes)
	assert.True(t, e.canLogin(other, "Other-pw-1", shop))
}

// TestIntegrationRevokeThatRevokesNothing: REVOKE removes only what its grantor granted, and says
// nothing about the rest. A table's owner the controller does not manage lets root grant on it
// (WITH GRANT OPTION, as docs/users.md says) and grants to a managed role itself: root's REVOKE
// succeeds and revokes nothing. The apply must not report it as done (at every apply), but as
// refused, naming the grantor.
func TestIntegrationRevokeThatRevokesNothing(t *testing.T) {
	e := newTestEnv(t)
	shop, owner, reader := e.n("shop"), e.n("owner"), e.n("reader")
	d := dbusers.Desired{
		Databases: []string{shop},
		Users: []dbusers.UserSpec{{Name: reader, Password: secret.New("Reader-pw-1"), Grants: []dbusers.Grant{
			{Database: shop, Schema: "public", Privileges: []string{"USAGE"}},
		}}},
	}
	res, err := e.apply(d, dbusers.ManagedState{})
	require.NoError(t, err)

	e.exec(maintenanceDB, "CREATE ROLE "+quoteIdent(owner)+" LOGIN PASSWORD 'Owner-pw-1'")
	e.exec(shop, "GRANT CONNECT ON DATABASE "+quoteIdent(shop)+" TO "+quoteIdent(owner), "GRANT CREATE, USAGE ON SCHEMA public TO "+quoteIdent(owner))
	oc, err := e.login(owner, "Owner-pw-1", shop)
	require.NoError(t, err)
	for _, s := range []string{
		"CREATE TABLE public.orders (id int)",
		"GRANT SELECT ON public.orders TO " + quoteIdent(e.conn.User) + " WITH GRANT OPTION",
		"GRANT SELECT ON public.orders TO " + quoteIdent(reader),
	} {
		_, err = oc.Exec(t.Context(), s)
		require.NoError(t, err, s)
	}
	_ = oc.Close(context.Background())

	for range 2 {
		res, err = e.apply(d, res.Managed)
		require.ErrorIs(t, err, dbusers.ErrRefused)
		assert.NotContains(t, res.Changes, "revoked SELECT on table "+shop+".public.orders from "+reader, "nothing was revoked")
		assert.Contains(t, err.Error(), "revoke SELECT on table "+shop+".public.orders from "+reader)
		assert.Contains(t, err.Error(), owner, "the message names who granted it")
	}
	assert.Contains(t, e.acl(shop, reader), "table public.orders: SELECT")
}
