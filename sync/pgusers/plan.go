package pgusers

import (
	"cmp"
	"crypto/subtle"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/mcsps/rds-lambda-controller/sync/dbusers"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// This file decides; it does not talk to the server. plan turns the desired state, the remembered
// state and an observation into the statements to run, in order.

// scope is what privileges are on: a database (schema and table empty), a schema of it, or one
// table of a schema.
type scope struct{ db, schema, table string }

func compareScopes(a, b scope) int {
	return cmp.Or(strings.Compare(a.db, b.db), strings.Compare(a.schema, b.schema), strings.Compare(a.table, b.table))
}

func (s scope) level() level {
	switch {
	case s.table != "":
		return onTable
	case s.schema != "":
		return onSchema
	}
	return onDatabase
}

// sql renders the object of a GRANT or REVOKE: DATABASE "shop", SCHEMA "public", TABLE
// "public"."orders". Schemas and tables are those of the session's database (session).
func (s scope) sql() string {
	switch s.level() {
	case onTable:
		return "TABLE " + quoteIdent(s.schema) + "." + quoteIdent(s.table)
	case onSchema:
		return "SCHEMA " + quoteIdent(s.schema)
	}
	return "DATABASE " + quoteIdent(s.db)
}

// session is the database whose connection runs a statement on the scope: "" (the one Apply logs
// in to) for a database, the scope's database for a schema or a table.
func (s scope) session() string {
	if s.level() == onDatabase {
		return ""
	}
	return s.db
}

// display renders the scope for humans, as grantOn does.
func (s scope) display() string {
	switch s.level() {
	case onTable:
		return "table " + s.db + "." + s.schema + "." + s.table
	case onSchema:
		return "schema " + s.db + "." + s.schema
	}
	return "database " + s.db
}

// grantOption marks, in a privilege set, that the role may grant on (WITH GRANT OPTION).
const grantOption = "GRANT OPTION"

type privSet map[string]bool

// dbSchema is a schema of a database.
type dbSchema struct{ db, schema string }

// observed is what observe read from the server.
type observed struct {
	// version is server_version_num, e.g. 150004.
	version int
	// databases that exist (no templates).
	databases map[string]bool
	// roles that exist among those of the desired and the managed state.
	roles map[string]observedRole
	// tables of the schemas that grants name (on every table, or on one), sorted.
	tables map[dbSchema][]string
	// admin is the role Apply connects as; owners the owner of each database, of each schema
	// the roles own in the databases read, and of each table read (in the schemas of tables,
	// and those the roles hold privileges on); memberOf the roles whose privileges admin has
	// (pg_has_role USAGE), among the table owners that are the controller's.
	admin    string
	owners   map[scope]string
	memberOf map[string]bool
	// openToPublic names the databases with PostgreSQL's default privileges (datacl is null):
	// every role (PUBLIC) may connect and create temporary tables.
	openToPublic map[string]bool
}

type observedRole struct {
	canLogin bool
	// grants are the privileges the role holds, on databases, and on the schemas and tables of
	// every database it is granted something in or that its grants name.
	grants map[scope]privSet
	// owns names the databases in which the role owns objects; "" for objects of the whole
	// server (a database, a tablespace). A role that owns something is not dropped.
	owns []string
}

// step is one change. Steps without a query change only the remembered state.
type step struct {
	// change is the change for humans, as a command ("grant SELECT on table shop.public.t to
	// app"); never a password. Empty for steps that only update the remembered state.
	change string
	// db is the database whose session runs the query ("" the one Apply logs in to).
	db string
	// query has identifiers quoted by quote.go and $1... for values.
	query string
	args  []any
	// password, when set, is the value of the query's trailing PASSWORD, rendered when the
	// statement is sent (passwordSQL): the statement takes no parameter. role is the role whose
	// password it is (an MD5 verifier is salted with its name).
	password secret.Value
	role     string
	// group groups the steps of one role or database: if a step that opens it (creates the role
	// or the database) fails, the group's later steps are skipped (they would fail the same way).
	group string
	opens bool
	// on is what a GRANT or REVOKE is on.
	on scope
	// revokes, for a REVOKE of a desired role's privileges, are the privileges (grantOption for
	// the grant option) that grantee must no longer hold once it ran: checked after it ran,
	// since a REVOKE removes only what its grantor granted and is silent about the rest.
	revokes []string
	grantee string
	// dropsDatabase: the session to that database is closed before the query runs.
	dropsDatabase string
	// refused, when set, is reported as the step's failure; the step runs nothing.
	refused error
	// effect updates the remembered state once the step succeeded.
	effect func(*dbusers.ManagedState)
}

// plan computes the steps and the remembered state before any of them runs. d is normalized and
// valid, managed normalized and valid.
func plan(d dbusers.Desired, managed dbusers.ManagedState, obs observed) ([]step, dbusers.ManagedState) {
	state := dbusers.ManagedState{}
	var steps []step

	// Databases: create the missing ones, closed to PUBLIC; remember only those we create.
	desiredDB := map[string]bool{}
	for _, db := range d.Databases {
		desiredDB[db] = true
		if obs.databases[db] {
			continue
		}
		group := "database " + db
		steps = append(steps, step{
			change: "create database " + db,
			query:  "CREATE DATABASE " + quoteIdent(db),
			group:  group, opens: true,
			effect: func(m *dbusers.ManagedState) { m.Databases = append(m.Databases, db) },
		}, closeToPublic(db, group))
	}
	var dropDBs, closeDBs []step
	for _, db := range managed.Databases {
		switch {
		case !obs.databases[db]:
			// Gone (dropped by someone else): forget it, unless it is created again above.
		case desiredDB[db] || !d.PruneDatabases:
			state.Databases = append(state.Databases, db)
			if obs.openToPublic[db] && obs.owners[scope{db: db}] == obs.admin {
				// NOTE: created by this controller, but the apply ended (connection lost, time
				// up) before it was closed to PUBLIC: close it now. Once closed, its privileges
				// are never null again, so a grant to PUBLIC made on purpose later is kept; one
				// given to another owner is that owner's.
				closeDBs = append(closeDBs, closeToPublic(db, ""))
			}
		default:
			state.Databases = append(state.Databases, db)
			dropDBs = append(dropDBs, step{
				change:        "drop database " + db,
				query:         "DROP DATABASE IF EXISTS " + quoteIdent(db),
				dropsDatabase: db,
				effect: func(m *dbusers.ManagedState) {
					m.Databases = slices.DeleteFunc(m.Databases, func(x string) bool { return x == db })
				},
			})
		}
	}

	managedUsers := map[string]dbusers.ManagedUser{}
	ours := map[string]bool{}
	for _, u := range managed.Users {
		managedUsers[u.Name] = u
		ours[u.Name] = true
	}
	for _, u := range d.Users {
		ours[u.Name] = true
	}
	dbSteps := append(steps, closeDBs...)
	steps = nil

	// Desired roles: create or adopt, let them log in, correct the password, revoke and grant.
	desiredUsers := map[string]bool{}
	for _, u := range d.Users {
		desiredUsers[u.Name] = true
		group := "role " + u.Name
		digest := dbusers.PasswordDigest(d.DigestKey, u.Name, u.Host, u.Password)
		remember := func(m *dbusers.ManagedState) {
			setManagedUser(m, dbusers.ManagedUser{Name: u.Name, Host: u.Host, PasswordDigest: digest})
		}
		mu, isManaged := managedUsers[u.Name]
		cur, exists := obs.roles[u.Name]
		if isManaged {
			state.Users = append(state.Users, mu) // kept remembered even if a step fails
		}
		switch {
		case !exists:
			steps = append(steps, step{
				change:   "create user " + u.Name,
				query:    "CREATE ROLE " + quoteIdent(u.Name) + " LOGIN PASSWORD ",
				password: u.Password,
				role:     u.Name,
				group:    group, opens: true,
				effect: remember,
			})
		default:
			if !isManaged {
				// NOTE: the spec names a role that exists but that we do not remember: either we
				// created it and the status update was lost, or it predates the controller. The
				// spec owns it now; it is dropped when it leaves the spec.
				steps = append(steps, step{
					change: "adopt existing user " + u.Name,
					effect: func(m *dbusers.ManagedState) { setManagedUser(m, dbusers.ManagedUser{Name: u.Name, Host: u.Host}) },
				})
			}
			if !cur.canLogin {
				steps = append(steps, step{change: "allow user " + u.Name + " to log in", query: "ALTER ROLE " + quoteIdent(u.Name) + " LOGIN", group: group})
			}
			if passwordMatches(mu.PasswordDigest, digest) {
				break
			}
			steps = append(steps, step{
				change:   "change password of user " + u.Name,
				query:    "ALTER ROLE " + quoteIdent(u.Name) + " PASSWORD ",
				password: u.Password,
				role:     u.Name,
				group:    group,
				effect:   remember,
			})
		}
		steps = append(steps, grantSteps(u.Name, group, u.Grants, cur.grants, obs)...)
	}

	// Roles we manage that left the spec: revoke what they hold, then drop them, unless they
	// still own objects.
	for _, mu := range managed.Users {
		if desiredUsers[mu.Name] {
			continue
		}
		cur, exists := obs.roles[mu.Name]
		if !exists {
			continue // gone already: forget it
		}
		state.Users = append(state.Users, mu)
		if len(cur.owns) > 0 {
			steps = append(steps, step{refused: &OwnsObjectsError{Role: mu.Name, Databases: cur.owns}})
			continue
		}
		group := "role " + mu.Name
		for _, s := range slices.SortedFunc(maps.Keys(cur.grants), compareScopes) {
			steps = append(steps, step{
				change: "revoke ALL on " + s.display() + " from " + mu.Name,
				db:     s.session(), on: s,
				query: "REVOKE ALL ON " + s.sql() + " FROM " + quoteIdent(mu.Name),
				group: group,
			})
		}
		steps = append(steps, step{
			change: "drop user " + mu.Name,
			query:  "DROP ROLE IF EXISTS " + quoteIdent(mu.Name),
			group:  group,
			effect: func(m *dbusers.ManagedState) {
				m.Users = slices.DeleteFunc(m.Users, func(x dbusers.ManagedUser) bool { return x.Name == mu.Name })
			},
		})
	}
	out := append(dbSteps, memberships(steps, ours, obs)...)
	out = append(out, steps...)
	return append(out, dropDBs...), state
}

// closeToPublic is the step that closes a database the controller created to PUBLIC.
//
// NOTE: PostgreSQL lets every role (PUBLIC) connect to a new database and create temporary
// tables in it. The controller's databases admit only the roles granted something in them: a
// role's grants are its complete privileges.
func closeToPublic(db, group string) step {
	return step{
		change: "revoke CONNECT, TEMPORARY on database " + db + " from PUBLIC",
		query:  "REVOKE CONNECT, TEMPORARY ON DATABASE " + quoteIdent(db) + " FROM PUBLIC",
		group:  group,
	}
}

// memberships are the steps that let the admin grant and revoke on the tables the steps change
// whose owner is one of the controller's roles (ours) and whose privileges the admin lacks: it
// becomes a member of the owner.
//
// NOTE: only a table's owner (or a member of the owner, or a superuser, which OTC's root is not)
// may grant on it, and an application's tables are usually its own role's. With CREATEROLE the
// admin may join a role it manages (PostgreSQL 16 and later: one it created, which holds ADMIN
// on it); it already may set that role's password, so the membership gives it nothing new. The
// admin never joins a role the controller does not manage: a grant on such a role's table is
// refused by the server, and the message says so.
func memberships(steps []step, ours map[string]bool, obs observed) []step {
	need := map[string]bool{}
	for _, st := range steps {
		if st.on.level() != onTable {
			continue
		}
		if owner := obs.owners[st.on]; owner != "" && owner != obs.admin && ours[owner] && !obs.memberOf[owner] {
			need[owner] = true
		}
	}
	var out []step
	for _, owner := range slices.Sorted(maps.Keys(need)) {
		query := "GRANT " + quoteIdent(owner) + " TO " + quoteIdent(obs.admin)
		if obs.version >= 160000 {
			query += " WITH INHERIT TRUE"
		}
		out = append(out, step{change: "grant membership in " + owner + " to " + obs.admin + " (to grant on its tables)", query: query})
	}
	return out
}

// passwordMatches reports whether the password last set is the spec's.
//
// NOTE: PostgreSQL stores a salted SCRAM verifier (or an MD5 hash salted with the role name) in
// pg_authid, which only a superuser may read, and OTC's root is none; logging in as the role to
// test the password is no option either (pg_hba may not admit the controller as that role, and
// failed logins are logged as attacks). So the digest remembered when Apply last set the password
// is trusted: a password changed behind the controller's back goes unnoticed until the spec's
// password (or the root password, the digest's key) changes.
func passwordMatches(remembered, digest string) bool {
	return remembered != "" && subtle.ConstantTimeCompare([]byte(remembered), []byte(digest)) == 1
}

func setManagedUser(m *dbusers.ManagedState, u dbusers.ManagedUser) {
	for i := range m.Users {
		if m.Users[i].Name == u.Name {
			if u.PasswordDigest == "" {
				u.PasswordDigest = m.Users[i].PasswordDigest
			}
			m.Users[i] = u
			return
		}
	}
	m.Users = append(m.Users, u)
}

// wantScope is what a role is to hold on one scope: every privilege of its level (all), or those
// listed.
type wantScope struct {
	all   bool
	privs []string
}

// wanted expands a role's grants into scopes: a grant on every table of a schema into one scope
// per table the schema has now, and every grant in a database into CONNECT on it (a role granted
// something in a database may connect to it; the controller's databases are closed to PUBLIC).
func wanted(grants []dbusers.Grant, obs observed) map[scope]wantScope {
	want := map[scope]wantScope{}
	add := func(s scope, privs []string) {
		w := want[s]
		if len(privs) == 1 && privs[0] == dbusers.PrivilegeAll {
			w.all = true
		}
		for _, p := range privs {
			if p != dbusers.PrivilegeAll && !slices.Contains(w.privs, p) {
				w.privs = append(w.privs, p)
			}
		}
		want[s] = w
	}
	for _, g := range grants {
		add(scope{db: g.Database}, []string{"CONNECT"})
		switch {
		case g.Table == AllTables:
			for _, t := range obs.tables[dbSchema{g.Database, g.Schema}] {
				add(scope{g.Database, g.Schema, t}, g.Privileges)
			}
		default:
			add(scope{g.Database, g.Schema, g.Table}, g.Privileges)
		}
	}
	return want
}

// grantSteps diffs a role's wanted privileges against those it holds into revokes (first) and
// grants, each sorted by scope.
func grantSteps(role, group string, grants []dbusers.Grant, current map[scope]privSet, obs observed) []step {
	want := wanted(grants, obs)
	var revokes, adds []step
	for _, s := range slices.SortedFunc(maps.Keys(current), compareScopes) {
		have := current[s]
		w, isWanted := want[s]
		if have[grantOption] {
			revokes = append(revokes, step{
				change: "revoke GRANT OPTION on " + s.display() + " from " + role,
				db:     s.session(), on: s,
				query:   "REVOKE GRANT OPTION FOR ALL PRIVILEGES ON " + s.sql() + " FROM " + quoteIdent(role),
				revokes: []string{grantOption}, grantee: role,
				group: group,
			})
		}
		var extra []string
		for p := range have {
			switch {
			case p == grantOption:
			case !isWanted:
				extra = append(extra, p)
			case w.all:
				// Everything ALL gives at this level is wanted, also what a newer server adds to
				// it (PostgreSQL 17's MAINTAIN).
			case !slices.Contains(w.privs, p):
				extra = append(extra, p)
			}
		}
		if len(extra) == 0 {
			continue
		}
		order := levelPrivileges[s.level()]
		slices.SortFunc(extra, func(a, b string) int { return cmp.Or(rank(order, a)-rank(order, b), strings.Compare(a, b)) })
		list := strings.Join(extra, ", ")
		revokes = append(revokes, step{
			change: "revoke " + list + " on " + s.display() + " from " + role,
			db:     s.session(), on: s,
			query:   "REVOKE " + list + " ON " + s.sql() + " FROM " + quoteIdent(role),
			revokes: extra, grantee: role,
			group: group,
		})
	}
	for _, s := range slices.SortedFunc(maps.Keys(want), compareScopes) {
		if obs.owners[s] == role {
			// NOTE: an owner holds every privilege on its object without a grant, and observe
			// never reads an owner's own entry of the object's ACL: a grant would change
			// nothing, and be planned again at every apply.
			continue
		}
		w, have := want[s], current[s]
		var missing []string
		switch {
		case w.all:
			if slices.ContainsFunc(levelPrivileges[s.level()], func(p string) bool { return !have[p] }) {
				missing = []string{"ALL PRIVILEGES"}
			}
		default:
			for _, p := range w.privs {
				if !have[p] {
					missing = append(missing, p)
				}
			}
		}
		if len(missing) == 0 {
			continue
		}
		list := strings.Join(missing, ", ")
		adds = append(adds, step{
			change: "grant " + list + " on " + s.display() + " to " + role,
			db:     s.session(), on: s,
			query: "GRANT " + list + " ON " + s.sql() + " TO " + quoteIdent(role),
			group: group,
		})
	}
	return append(revokes, adds...)
}

// ErrOwnsObjects marks a role that left the spec but was not dropped because it still owns
// objects. It is also a dbusers.ErrRefused: the apply is retried.
var ErrOwnsObjects = errors.New("the user owns objects")

// OwnsObjectsError is a role that was not dropped because it owns objects.
type OwnsObjectsError struct {
	Role string
	// Databases are where it owns objects; "" for objects of the whole server (a database).
	Databases []string
}

func (e *OwnsObjectsError) Error() string {
	var where []string
	for _, db := range e.Databases {
		if db == "" {
			where = append(where, "the server (a database or tablespace)")
		} else {
			where = append(where, "database "+db)
		}
	}
	return "user " + e.Role + " is not dropped: it owns objects in " + strings.Join(where, ", ") +
		"; drop them or reassign them to another role, and the next apply drops it"
}

// Is makes errors.Is true for ErrOwnsObjects and dbusers.ErrRefused.
func (e *OwnsObjectsError) Is(target error) bool {
	return target == ErrOwnsObjects || target == dbusers.ErrRefused
}
