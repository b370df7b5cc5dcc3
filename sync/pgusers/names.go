package pgusers

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/mcsps/rds-lambda-controller/sync/dbusers"
)

// Allow-lists for names. They are narrower than what PostgreSQL accepts: every accepted name fits
// in NAMEDATALEN (63 bytes), is quoted by quoteIdent without doubling anything, is shown in
// messages as it is, and, for roles, follows OTC's rules for RDS for PostgreSQL accounts
// (letters, digits and underscores, not starting with a digit or "pg").
var (
	// Databases: OTC's console allows letters, digits, '_' and '-'.
	databaseRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,62}$`)
	// Schemas and tables.
	objectRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)
	// Roles: at most 32 characters, as the CRD allows for every engine.
	roleRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,31}$`)
)

// systemDatabases are never created, granted on or dropped.
var systemDatabases = map[string]bool{
	"postgres":  true,
	"template0": true,
	"template1": true,
	// NOTE: OTC RDS for PostgreSQL keeps a management database of its own.
	"rdsadmin": true,
}

// reservedRoles are roles of the server or of OTC itself (lower case), and role names with a
// meaning in GRANT. The controller never creates, changes or drops them.
var reservedRoles = map[string]bool{
	"root": true, "postgres": true, "public": true, "none": true,
	"current_user": true, "current_role": true, "session_user": true,
	// NOTE: OTC's system accounts of RDS for PostgreSQL (its console refuses them as names).
	"rdsadmin": true, "rdsmetric": true, "rdsbackup": true, "rdsrepl": true,
	"rdsproxy": true, "rdsddm": true, "rdsdisaster": true,
}

// ValidateDatabase checks a database name against the allow-list and refuses system databases.
func ValidateDatabase(name string) error {
	if !databaseRE.MatchString(name) {
		return fmt.Errorf("database name %s must be 1 to 63 characters of A-Z, a-z, 0-9, _ and -, not starting with a digit or -", q(name))
	}
	if systemDatabases[strings.ToLower(name)] || strings.HasPrefix(strings.ToLower(name), "pg_") {
		return fmt.Errorf("database %s is a system database and cannot be managed", q(name))
	}
	return nil
}

// ValidateSchema checks a schema name against the allow-list and refuses system schemas.
func ValidateSchema(name string) error {
	if !objectRE.MatchString(name) {
		return fmt.Errorf("schema name %s must be 1 to 63 characters of A-Z, a-z, 0-9 and _, not starting with a digit", q(name))
	}
	if l := strings.ToLower(name); strings.HasPrefix(l, "pg_") || l == "information_schema" {
		return fmt.Errorf("schema %s is a system schema and cannot be granted on", q(name))
	}
	return nil
}

// ValidateTable checks a table name against the allow-list ("*", every table of a schema, is the
// grant's business, not a name).
func ValidateTable(name string) error {
	if !objectRE.MatchString(name) {
		return fmt.Errorf("table name %s must be 1 to 63 characters of A-Z, a-z, 0-9 and _, not starting with a digit, or * for every table of the schema", q(name))
	}
	return nil
}

// ValidateRole checks a role (user) name against the allow-list and refuses reserved roles.
func ValidateRole(name string) error {
	if !roleRE.MatchString(name) {
		return fmt.Errorf("user name %s must be 1 to 32 characters of A-Z, a-z, 0-9 and _, not starting with a digit", q(name))
	}
	if l := strings.ToLower(name); reservedRoles[l] || strings.HasPrefix(l, "pg") {
		return fmt.Errorf("user %s is reserved for the server or the cloud provider (names starting with pg are too)", q(name))
	}
	return nil
}

// ValidateHost checks the host part of an account: PostgreSQL roles have none (the addresses a
// role may connect from are pg_hba.conf's, which OTC manages), so only "" or "%" is accepted.
func ValidateHost(host string) error {
	if dbusers.NormalizeHost(host) != dbusers.DefaultHost {
		return fmt.Errorf("host %s: PostgreSQL roles have no host (the addresses allowed to connect are the instance's security group's): leave host empty or %%", q(host))
	}
	return nil
}

// q renders user input for a message.
func q(s string) string { return dbusers.QuoteForMessage(s) }
