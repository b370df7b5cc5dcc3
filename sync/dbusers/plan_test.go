package dbusers

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// simulate runs a plan as if every statement succeeded.
func simulate(steps []step, state ManagedState) (queries []string, changes []string, final ManagedState) {
	for _, st := range steps {
		if st.query != "" {
			queries = append(queries, st.query)
		}
		if st.change != "" {
			changes = append(changes, Done(st.change))
		}
		if st.effect != nil {
			st.effect(&state)
		}
	}
	return queries, changes, NormalizeManaged(state)
}

func allDatabasePrivileges(extra ...string) stringSet {
	s := setOf(privilegeOrder...)
	for _, e := range extra {
		s[e] = true
	}
	return s
}

func TestPlan(t *testing.T) {
	pw := secret.New("app-pw")
	pwHash := nativePasswordHash("app-pw")
	digest := PasswordDigest(secret.Value{}, "app", "%", pw)
	app := account{"app", "%"}
	appSpec := func(grants ...Grant) UserSpec { return UserSpec{Name: "app", Host: "%", Password: pw, Grants: grants} }
	shopAll := Grant{Database: "shop", Privileges: []string{"ALL"}}

	cases := map[string]struct {
		reason      string
		d           Desired
		managed     ManagedState
		obs         observed
		wantQueries []string
		wantChanges []string
		wantState   ManagedState
	}{
		"fresh server": {
			reason: "everything is created; only what was created is remembered",
			d:      Desired{Databases: []string{"shop", "my_db"}, Users: []UserSpec{appSpec(shopAll, Grant{Database: "my_db", Privileges: []string{"SELECT", "INSERT"}})}},
			obs:    observed{databases: setOf("mysql")},
			wantQueries: []string{
				"CREATE DATABASE IF NOT EXISTS `my_db`",
				"CREATE DATABASE IF NOT EXISTS `shop`",
				"CREATE USER `app`@`%` IDENTIFIED BY ?",
				"GRANT SELECT, INSERT ON `my\\_db`.* TO `app`@`%`",
				"GRANT ALL PRIVILEGES ON `shop`.* TO `app`@`%`",
			},
			wantChanges: []string{
				"created database my_db",
				"created database shop",
				"created user 'app'@'%'",
				"granted SELECT, INSERT on my_db.* to 'app'@'%'",
				"granted ALL PRIVILEGES on shop.* to 'app'@'%'",
			},
			wantState: ManagedState{Databases: []string{"my_db", "shop"}, Users: []ManagedUser{{Name: "app", Host: "%", PasswordDigest: digest}}},
		},
		"converged": {
			reason:  "nothing to do when the server matches; MariaDB's extra ALL privilege is accepted",
			d:       Desired{Databases: []string{"shop"}, Users: []UserSpec{appSpec(shopAll)}},
			managed: ManagedState{Databases: []string{"shop"}, Users: []ManagedUser{{Name: "app", Host: "%", PasswordDigest: digest}}},
			obs: observed{databases: setOf("shop"), users: map[account]observedUser{
				app: {plugin: "mysql_native_password", authString: pwHash, grants: map[scope]stringSet{{db: "shop"}: allDatabasePrivileges("DELETE HISTORY")}},
			}},
			wantState: ManagedState{Databases: []string{"shop"}, Users: []ManagedUser{{Name: "app", Host: "%", PasswordDigest: digest}}},
		},
		"password changed": {
			reason:  "the stored native hash differs",
			d:       Desired{Users: []UserSpec{appSpec()}},
			managed: ManagedState{Users: []ManagedUser{{Name: "app", Host: "%", PasswordDigest: "old"}}},
			obs: observed{databases: stringSet{}, users: map[account]observedUser{
				app: {plugin: "mysql_native_password", authString: nativePasswordHash("old-pw")},
			}},
			wantQueries: []string{"ALTER USER `app`@`%` IDENTIFIED BY ?"},
			wantChanges: []string{"changed password of user 'app'@'%'"},
			wantState:   ManagedState{Users: []ManagedUser{{Name: "app", Host: "%", PasswordDigest: digest}}},
		},
		"password changed behind our back": {
			reason:  "the native hash is checked even if the remembered digest matches",
			d:       Desired{Users: []UserSpec{appSpec()}},
			managed: ManagedState{Users: []ManagedUser{{Name: "app", Host: "%", PasswordDigest: digest}}},
			obs: observed{databases: stringSet{}, users: map[account]observedUser{
				app: {plugin: "mysql_native_password", authString: nativePasswordHash("changed")},
			}},
			wantQueries: []string{"ALTER USER `app`@`%` IDENTIFIED BY ?"},
			wantChanges: []string{"changed password of user 'app'@'%'"},
			wantState:   ManagedState{Users: []ManagedUser{{Name: "app", Host: "%", PasswordDigest: digest}}},
		},
		"salted plugin, remembered": {
			reason:  "caching_sha2_password cannot be checked: the remembered digest decides",
			d:       Desired{Users: []UserSpec{appSpec()}},
			managed: ManagedState{Users: []ManagedUser{{Name: "app", Host: "%", PasswordDigest: digest}}},
			obs: observed{databases: stringSet{}, users: map[account]observedUser{
				app: {plugin: "caching_sha2_password", authString: "$A$005$saltsaltsalthashhash"},
			}},
			wantState: ManagedState{Users: []ManagedUser{{Name: "app", Host: "%", PasswordDigest: digest}}},
		},
		"salted plugin, not remembered": {
			reason:  "without a digest the password is set once, then remembered",
			d:       Desired{Users: []UserSpec{appSpec()}},
			managed: ManagedState{Users: []ManagedUser{{Name: "app", Host: "%"}}},
			obs: observed{databases: stringSet{}, users: map[account]observedUser{
				app: {plugin: "caching_sha2_password", authString: "$A$005$x"},
			}},
			wantQueries: []string{"ALTER USER `app`@`%` IDENTIFIED BY ?"},
			wantChanges: []string{"changed password of user 'app'@'%'"},
			wantState:   ManagedState{Users: []ManagedUser{{Name: "app", Host: "%", PasswordDigest: digest}}},
		},
		"digest refreshed silently": {
			reason:  "a verified password is remembered without reporting a change",
			d:       Desired{Users: []UserSpec{appSpec()}},
			managed: ManagedState{Users: []ManagedUser{{Name: "app", Host: "%"}}},
			obs: observed{databases: stringSet{}, users: map[account]observedUser{
				app: {plugin: "mysql_native_password", authString: pwHash},
			}},
			wantState: ManagedState{Users: []ManagedUser{{Name: "app", Host: "%", PasswordDigest: digest}}},
		},
		"adopt": {
			reason: "an existing account named in the spec becomes managed (e.g. a lost status update)",
			d:      Desired{Users: []UserSpec{appSpec()}},
			obs: observed{databases: stringSet{}, users: map[account]observedUser{
				app: {plugin: "mysql_native_password", authString: pwHash},
			}},
			wantChanges: []string{"adopted existing user 'app'@'%'"},
			wantState:   ManagedState{Users: []ManagedUser{{Name: "app", Host: "%", PasswordDigest: digest}}},
		},
		"grant diff": {
			reason: "extra privileges, grant option and unknown grants are revoked first, then the missing ones granted",
			d: Desired{Users: []UserSpec{appSpec(
				Grant{Database: "shop", Privileges: []string{"SELECT", "INSERT"}},
				Grant{Database: "shop", Table: "orders", Privileges: []string{"ALL"}},
				Grant{Database: "app_1", Privileges: []string{"SELECT"}},
			)}},
			managed: ManagedState{Users: []ManagedUser{{Name: "app", Host: "%", PasswordDigest: digest}}},
			obs: observed{databases: stringSet{}, users: map[account]observedUser{
				app: {plugin: "mysql_native_password", authString: pwHash, grants: map[scope]stringSet{
					{db: "shop"}:                   setOf("SELECT", "DELETE", grantOption),
					{db: "other"}:                  setOf("SELECT"),
					{db: "app_1"}:                  setOf("SELECT"),
					{db: "shop", table: "orders"}:  setOf("SELECT"),
					{db: "shop", table: "history"}: setOf("SELECT", "DELETE HISTORY"),
				}},
			}},
			wantQueries: []string{
				"REVOKE SELECT ON `app_1`.* FROM `app`@`%`",
				"REVOKE SELECT ON `other`.* FROM `app`@`%`",
				"REVOKE DELETE, GRANT OPTION ON `shop`.* FROM `app`@`%`",
				"REVOKE SELECT, DELETE HISTORY ON `shop`.`history` FROM `app`@`%`",
				"GRANT SELECT ON `app\\_1`.* TO `app`@`%`",
				"GRANT INSERT ON `shop`.* TO `app`@`%`",
				"GRANT ALL PRIVILEGES ON `shop`.`orders` TO `app`@`%`",
			},
			wantChanges: []string{
				"revoked SELECT on pattern app_1.* from 'app'@'%'",
				"revoked SELECT on other.* from 'app'@'%'",
				"revoked DELETE, GRANT OPTION on shop.* from 'app'@'%'",
				"revoked SELECT, DELETE HISTORY on shop.history from 'app'@'%'",
				"granted SELECT on app_1.* to 'app'@'%'",
				"granted INSERT on shop.* to 'app'@'%'",
				"granted ALL PRIVILEGES on shop.orders to 'app'@'%'",
			},
			wantState: ManagedState{Users: []ManagedUser{{Name: "app", Host: "%", PasswordDigest: digest}}},
		},
		"drop managed users": {
			reason:  "a managed user that left the spec is dropped; a gone one is forgotten; unmanaged ones are not looked at",
			managed: ManagedState{Users: []ManagedUser{{Name: "old", Host: "%"}, {Name: "gone", Host: "10.%"}}},
			obs: observed{databases: stringSet{}, users: map[account]observedUser{
				{"old", "%"}:   {},
				{"other", "%"}: {},
			}},
			wantQueries: []string{"DROP USER IF EXISTS `old`@`%`"},
			wantChanges: []string{"dropped user 'old'@'%'"},
			wantState:   ManagedState{},
		},
		"prune off": {
			reason:    "without PruneDatabases a created database stays, and stays remembered",
			managed:   ManagedState{Databases: []string{"old", "gone"}},
			obs:       observed{databases: setOf("old", "foreign")},
			wantState: ManagedState{Databases: []string{"old"}},
		},
		"prune on": {
			reason:      "with PruneDatabases only databases we created are dropped",
			d:           Desired{Databases: []string{"keep"}, PruneDatabases: true},
			managed:     ManagedState{Databases: []string{"old", "keep"}},
			obs:         observed{databases: setOf("old", "keep", "foreign")},
			wantQueries: []string{"DROP DATABASE IF EXISTS `old`"},
			wantChanges: []string{"dropped database old"},
			wantState:   ManagedState{Databases: []string{"keep"}},
		},
		"recreate a managed database": {
			reason:      "a remembered database that vanished but is still wanted is created again",
			d:           Desired{Databases: []string{"shop"}},
			managed:     ManagedState{Databases: []string{"shop"}},
			obs:         observed{databases: stringSet{}},
			wantQueries: []string{"CREATE DATABASE IF NOT EXISTS `shop`"},
			wantChanges: []string{"created database shop"},
			wantState:   ManagedState{Databases: []string{"shop"}},
		},
		"existing database not ours": {
			reason:    "a database that exists already is not remembered, so never pruned",
			d:         Desired{Databases: []string{"shop"}, PruneDatabases: true},
			obs:       observed{databases: setOf("shop")},
			wantState: ManagedState{},
		},
		"lower case names": {
			reason:  "with lower_case_table_names=1 App and app are one database and one grant",
			d:       Desired{Databases: []string{"App"}, Users: []UserSpec{appSpec(Grant{Database: "App", Table: "T1", Privileges: []string{"SELECT"}})}},
			managed: ManagedState{Users: []ManagedUser{{Name: "app", Host: "%", PasswordDigest: digest}}},
			obs: observed{lowerCaseNames: true, databases: setOf("app"), users: map[account]observedUser{
				app: {plugin: "mysql_native_password", authString: pwHash, grants: map[scope]stringSet{{db: "app", table: "t1"}: setOf("SELECT")}},
			}},
			wantState: ManagedState{Users: []ManagedUser{{Name: "app", Host: "%", PasswordDigest: digest}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := Normalize(tc.d)
			require.NoError(t, Validate(d))
			managed := NormalizeManaged(tc.managed)
			steps, state := plan(d, managed, tc.obs)
			queries, changes, final := simulate(steps, state)
			assert.Equal(t, tc.wantQueries, queries, tc.reason)
			assert.Equal(t, tc.wantChanges, changes, tc.reason)
			assert.Equal(t, NormalizeManaged(tc.wantState), final, tc.reason)
			for _, st := range steps {
				assert.NotContains(t, st.query+st.change+fmt.Sprint(st.args), pw.Reveal(), "no password in SQL text or descriptions")
			}
		})
	}
}

func TestNativePasswordHash(t *testing.T) {
	// Values from MariaDB's PASSWORD() (checked on 10.11) and MySQL 5.7's documentation.
	assert.Equal(t, "*2B602296A79E0A8784ACC5C88D92E46588CCA3C3", nativePasswordHash("pw1"))
	assert.Equal(t, "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19", nativePasswordHash("password"))
	assert.Empty(t, nativePasswordHash(""))
}
