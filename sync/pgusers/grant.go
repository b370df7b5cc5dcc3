package pgusers

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcsps/rds-lambda-controller/sync/dbusers"
)

// A PostgreSQL grant in dbusers.Grant's shape names what it is on by the fields it sets:
//
//	database                   the database itself: CONNECT, CREATE, TEMPORARY (TEMP), ALL
//	database, schema           a schema of it: USAGE, CREATE, ALL
//	database, schema, table    one table (or view) of the schema: SELECT, INSERT, UPDATE, DELETE,
//	                           TRUNCATE, REFERENCES, TRIGGER, ALL
//	database, schema, table *  every table of the schema, as above
//
// A table without a schema is in "public". ALL is every privilege of the level, alone.

// AllTables is the table of a grant on every table of its schema.
const AllTables = "*"

// DefaultSchema is the schema of a table grant that names none.
const DefaultSchema = "public"

// level is what a grant is on.
type level int

const (
	onDatabase level = iota
	onSchema
	onTable
)

func (l level) String() string { return [...]string{"database", "schema", "table"}[l] }

// levelPrivileges are the privileges of each level, in the order PostgreSQL's GRANT documents
// them; ALL stands for all of them.
var levelPrivileges = map[level][]string{
	onDatabase: {"CREATE", "CONNECT", "TEMPORARY"},
	onSchema:   {"USAGE", "CREATE"},
	onTable:    {"SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER"},
}

// knownPrivileges are every privilege name GRANT takes in PostgreSQL; those of no level above are
// refused as not grantable through the spec.
var knownPrivileges = []string{
	"SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER", "CREATE",
	"CONNECT", "TEMPORARY", "EXECUTE", "USAGE", "SET", "ALTER SYSTEM", "MAINTAIN",
}

func grantLevel(g dbusers.Grant) level {
	switch {
	case g.Table != "":
		return onTable
	case g.Schema != "":
		return onSchema
	}
	return onDatabase
}

// normalizeGrant spells a grant canonically: privileges upper case with single spaces, ALL
// PRIVILEGES as ALL, TEMP as TEMPORARY, each once, in levelPrivileges' order (ALL absorbs the
// others); a table without a schema in DefaultSchema.
func normalizeGrant(g dbusers.Grant) dbusers.Grant {
	if g.Table != "" && g.Schema == "" {
		g.Schema = DefaultSchema
	}
	var ps []string
	for _, p := range g.Privileges {
		p = strings.Join(strings.Fields(strings.ToUpper(p)), " ")
		switch p {
		case "ALL PRIVILEGES":
			p = dbusers.PrivilegeAll
		case "TEMP":
			p = "TEMPORARY"
		}
		if !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	if slices.Contains(ps, dbusers.PrivilegeAll) && len(ps) > 1 {
		// Kept as it is: validateGrant refuses ALL with others, rather than taking it for ALL.
		g.Privileges = ps
		return g
	}
	order := levelPrivileges[grantLevel(g)]
	slices.SortStableFunc(ps, func(a, b string) int { return rank(order, a) - rank(order, b) })
	g.Privileges = ps
	return g
}

func rank(order []string, p string) int {
	if i := slices.Index(order, p); i >= 0 {
		return i
	}
	return len(order)
}

// validateGrant checks a normalized grant.
func validateGrant(g dbusers.Grant) error {
	if err := ValidateDatabase(g.Database); err != nil {
		return err
	}
	if g.Schema != "" {
		if err := ValidateSchema(g.Schema); err != nil {
			return err
		}
	}
	if g.Table != "" && g.Table != AllTables {
		if err := ValidateTable(g.Table); err != nil {
			return err
		}
	}
	if len(g.Privileges) == 0 {
		return errors.New("no privileges given")
	}
	lv := grantLevel(g)
	for _, p := range g.Privileges {
		switch {
		case p == dbusers.PrivilegeAll:
			if len(g.Privileges) > 1 {
				return errors.New("ALL cannot be combined with other privileges")
			}
		case slices.Contains(levelPrivileges[lv], p):
		case slices.Contains(knownPrivileges, p):
			return fmt.Errorf("privilege %s cannot be granted on a %s here: a %s takes %s or ALL", p, lv, lv, strings.Join(levelPrivileges[lv], ", "))
		default:
			return fmt.Errorf("unknown privilege %s: a %s takes %s or ALL", q(p), lv, strings.Join(levelPrivileges[lv], ", "))
		}
	}
	return nil
}

// grantOn renders what a grant is on, for humans: database shop, schema shop.public, table
// shop.public.orders, every table of shop.public.
func grantOn(g dbusers.Grant) string {
	switch {
	case g.Table == AllTables:
		return "every table of " + g.Database + "." + g.Schema
	case g.Table != "":
		return "table " + g.Database + "." + g.Schema + "." + g.Table
	case g.Schema != "":
		return "schema " + g.Database + "." + g.Schema
	}
	return "database " + g.Database
}

// ParseGrant refuses every GRANT string: spec.users[].privileges is MySQL's format. PostgreSQL
// grants are written in the structured form (grants), whose shape is checked field by field.
func ParseGrant(string, string, string) (dbusers.Grant, error) {
	return dbusers.Grant{}, &dbusers.GrantError{Detail: "GRANT strings are MySQL's format; for PostgreSQL write grants (database, schema, table, privileges)"}
}
