package dbusers

import (
	"cmp"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/hex"
	"maps"
	"slices"
	"strings"

	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// This file decides; it does not talk to the server. plan turns the desired state, the remembered
// state and an observation into the statements to run, in order.

// account is a user@host pair.
type account struct{ name, host string }

func (a account) display() string { return displayAccount(a.name, a.host) }
func (a account) sql() string     { return quoteAccount(a.name, a.host) }

// scope is what a grant is on, as the grant tables store it: db is a pattern (wildcards escaped)
// for a database-level grant (table empty) and a plain name for a table-level grant.
type scope struct{ db, table string }

func compareScopes(a, b scope) int {
	return cmp.Or(strings.Compare(a.db, b.db), strings.Compare(a.table, b.table))
}

// grantOption is how the privilege sets below record IS_GRANTABLE = YES.
const grantOption = "GRANT OPTION"

// observed is what observe read from the server.
type observed struct {
	// lowerCaseNames: lower_case_table_names is not 0, so database and table names compare
	// case-insensitively.
	lowerCaseNames bool
	// databases that exist, by fold(name).
	databases stringSet
	// users that exist among those the plan looks at.
	users map[account]observedUser
}

type observedUser struct {
	plugin     string
	authString string
	// grants on databases and tables; read only for desired users.
	grants map[scope]stringSet
}

func (o observed) fold(name string) string {
	if o.lowerCaseNames {
		return strings.ToLower(name)
	}
	return name
}

func (o observed) foldScope(s scope) scope { return scope{db: o.fold(s.db), table: o.fold(s.table)} }

// step is one change. Steps without a query change only the remembered state.
type step struct {
	// change is the change for humans, as a command ("grant SELECT on shop.* to 'u'@'%'"); never
	// a password. Empty for steps that only update the remembered state.
	change string
	// query has identifiers quoted by quote.go and ? for values.
	query string
	// args are the values; a secret.Value is revealed only when the statement is sent.
	args []any
	// account groups a user's steps: if a step with createsAccount fails, the account's later
	// steps are skipped (they would all fail the same way).
	account        account
	createsAccount bool
	// holdsPassword: the statement carries a password, so server messages about it are not kept.
	holdsPassword bool
	// effect updates the remembered state once the step succeeded.
	effect func(*ManagedState)
}

// plan computes the steps and the remembered state before any of them runs. d and managed are
// normalized and valid.
func plan(d Desired, managed ManagedState, obs observed) ([]step, ManagedState) {
	state := ManagedState{}
	var steps []step

	// Databases: create the missing ones; remember only those we create.
	desiredDB := stringSet{}
	for _, db := range d.Databases {
		desiredDB[obs.fold(db)] = true
		if obs.databases[obs.fold(db)] {
			continue
		}
		steps = append(steps, step{
			change: "create database " + db,
			query:  "CREATE DATABASE IF NOT EXISTS " + quoteIdent(db),
			effect: func(m *ManagedState) { m.Databases = append(m.Databases, db) },
		})
	}
	var dropDBs []step
	for _, db := range managed.Databases {
		switch {
		case !obs.databases[obs.fold(db)]:
			// Gone (dropped by someone else): forget it, so that a database of the same name
			// created later by someone else is never taken for ours.
			if desiredDB[obs.fold(db)] {
				continue // re-created above, and remembered once that succeeded
			}
		case desiredDB[obs.fold(db)] || !d.PruneDatabases:
			state.Databases = append(state.Databases, db)
		default:
			state.Databases = append(state.Databases, db)
			dropDBs = append(dropDBs, step{
				change: "drop database " + db,
				query:  "DROP DATABASE IF EXISTS " + quoteIdent(db),
				effect: func(m *ManagedState) {
					m.Databases = slices.DeleteFunc(m.Databases, func(x string) bool { return x == db })
				},
			})
		}
	}

	managedUsers := map[account]ManagedUser{}
	for _, u := range managed.Users {
		managedUsers[account{u.Name, u.Host}] = u
	}

	// Desired users: create or adopt, correct the password, then revoke and grant.
	desiredUsers := map[account]bool{}
	for _, u := range d.Users {
		acct := account{u.Name, u.Host}
		desiredUsers[acct] = true
		digest := PasswordDigest(d.DigestKey, u.Name, u.Host, u.Password)
		remember := func(m *ManagedState) {
			setManagedUser(m, ManagedUser{Name: u.Name, Host: u.Host, PasswordDigest: digest})
		}
		mu, isManaged := managedUsers[acct]
		cur, exists := obs.users[acct]
		switch {
		case !exists:
			if isManaged {
				state.Users = append(state.Users, mu) // keep it remembered even if the create fails
			}
			steps = append(steps, step{
				change:         "create user " + acct.display(),
				query:          "CREATE USER " + acct.sql() + " IDENTIFIED BY ?",
				args:           []any{u.Password},
				account:        acct,
				createsAccount: true,
				holdsPassword:  true,
				effect:         remember,
			})
		default:
			if isManaged {
				state.Users = append(state.Users, mu)
			} else {
				// NOTE: the spec names an account that exists but that we do not remember: either
				// we created it and the status update was lost, or it predates the controller.
				// Either way the spec now owns it; it is dropped when it leaves the spec.
				steps = append(steps, step{
					change: "adopt existing user " + acct.display(),
					effect: func(m *ManagedState) { setManagedUser(m, ManagedUser{Name: u.Name, Host: u.Host}) },
				})
			}
			if passwordMatches(cur, u.Password, mu.PasswordDigest, digest) {
				if mu.PasswordDigest != digest {
					steps = append(steps, step{effect: remember})
				}
			} else {
				steps = append(steps, step{
					change:        "change password of user " + acct.display(),
					query:         "ALTER USER " + acct.sql() + " IDENTIFIED BY ?",
					args:          []any{u.Password},
					account:       acct,
					holdsPassword: true,
					effect:        remember,
				})
			}
		}
		steps = append(steps, grantSteps(acct, u.Grants, cur.grants, obs)...)
	}

	// Users we manage that left the spec: drop them.
	for _, mu := range managed.Users {
		acct := account{mu.Name, mu.Host}
		if desiredUsers[acct] {
			continue
		}
		if _, exists := obs.users[acct]; !exists {
			continue // gone already: forget it
		}
		state.Users = append(state.Users, mu)
		steps = append(steps, step{
			change:  "drop user " + acct.display(),
			query:   "DROP USER IF EXISTS " + acct.sql(),
			account: acct,
			effect: func(m *ManagedState) {
				m.Users = slices.DeleteFunc(m.Users, func(x ManagedUser) bool { return x.Name == mu.Name && x.Host == mu.Host })
			},
		})
	}

	return append(steps, dropDBs...), state
}

func setManagedUser(m *ManagedState, u ManagedUser) {
	for i := range m.Users {
		if m.Users[i].Name == u.Name && m.Users[i].Host == u.Host {
			if u.PasswordDigest == "" {
				u.PasswordDigest = m.Users[i].PasswordDigest
			}
			m.Users[i] = u
			return
		}
	}
	m.Users = append(m.Users, u)
}

// passwordMatches reports whether an existing account already has the password.
//
// NOTE: a password cannot be read back, and logging in as the user to test it is no option: the
// account's host may not match the controller's address, and failed logins count towards
// max_connect_errors (blocking the controller's host) and trip connection-control plugins.
// Instead, where the server's stored hash is unsalted, we compute the same hash here:
// mysql_native_password (MySQL 5.7, MariaDB; MySQL 8 where it is the default plugin) stores
// '*' + upper(hex(SHA1(SHA1(password)))), which is what PASSWORD() returned. Salted plugins
// (MySQL 8's caching_sha2_password, sha256_password) cannot be checked this way; for those we
// trust the digest remembered when Apply last set the password, so a change made behind the
// controller's back goes unnoticed there until the spec's password changes.
func passwordMatches(u observedUser, password secret.Value, rememberedDigest, digest string) bool {
	switch strings.ToLower(u.plugin) {
	case "mysql_native_password", "":
		want := nativePasswordHash(password.Reveal())
		return subtle.ConstantTimeCompare([]byte(strings.ToUpper(u.authString)), []byte(want)) == 1
	default:
		return rememberedDigest != "" && subtle.ConstantTimeCompare([]byte(rememberedDigest), []byte(digest)) == 1
	}
}

// nativePasswordHash is mysql_native_password's stored form of a password.
func nativePasswordHash(password string) string {
	if password == "" {
		return ""
	}
	h1 := sha1.Sum([]byte(password))
	h2 := sha1.Sum(h1[:])
	return "*" + strings.ToUpper(hex.EncodeToString(h2[:]))
}

// wantScope is one desired grant keyed by its stored scope.
type wantScope struct {
	scope scope
	grant Grant
}

// grantSteps diffs an account's desired grants against its current ones into revokes (first) and
// grants, each sorted by scope.
func grantSteps(acct account, desired []Grant, current map[scope]stringSet, obs observed) []step {
	want := map[scope]wantScope{}
	for _, g := range desired {
		s := scope{db: dbPattern(g.Database)}
		if g.Table != "" {
			s = scope{db: g.Database, table: g.Table}
		}
		want[obs.foldScope(s)] = wantScope{scope: s, grant: g}
	}

	var revokes, grants []step
	for _, s := range slices.SortedFunc(maps.Keys(current), compareScopes) {
		have := current[s]
		w, wanted := want[obs.foldScope(s)]
		var extra []string
		for p := range have {
			switch {
			case !wanted, p == grantOption:
				extra = append(extra, p)
			case w.grant.Privileges[0] == PrivilegeAll:
				// Everything ALL gives at this level is wanted, including what the server adds
				// to ALL beyond our list (MariaDB's DELETE HISTORY).
			case !slices.Contains(w.grant.Privileges, p):
				extra = append(extra, p)
			}
		}
		if len(extra) == 0 {
			continue
		}
		slices.SortFunc(extra, comparePrivileges)
		list := strings.Join(extra, ", ")
		revokes = append(revokes, step{
			change:  "revoke " + list + " on " + scopeDisplay(s) + " from " + acct.display(),
			query:   "REVOKE " + list + " ON " + scopeSQL(s) + " FROM " + acct.sql(),
			account: acct,
		})
	}

	for _, k := range slices.SortedFunc(maps.Keys(want), compareScopes) {
		w := want[k]
		have := current[findScope(current, k, obs)]
		var missing []string
		if w.grant.Privileges[0] == PrivilegeAll {
			level := databasePrivileges
			if w.scope.table != "" {
				level = tablePrivileges
			}
			for p := range level {
				if !have[p] {
					missing = []string{"ALL PRIVILEGES"}
					break
				}
			}
		} else {
			for _, p := range w.grant.Privileges {
				if !have[p] {
					missing = append(missing, p)
				}
			}
		}
		if len(missing) == 0 {
			continue
		}
		list := strings.Join(missing, ", ")
		grants = append(grants, step{
			change:  "grant " + list + " on " + w.grant.On() + " to " + acct.display(),
			query:   "GRANT " + list + " ON " + scopeSQL(w.scope) + " TO " + acct.sql(),
			account: acct,
		})
	}
	return append(revokes, grants...)
}

// findScope returns the key of current that folds to k (k itself if none does).
func findScope(current map[scope]stringSet, k scope, obs observed) scope {
	if _, ok := current[k]; ok || !obs.lowerCaseNames {
		return k
	}
	for s := range current {
		if obs.foldScope(s) == k {
			return s
		}
	}
	return k
}
