package reconcile

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/dbusers"
	"github.com/mcsps/rds-lambda-controller/sync/pgusers"
)

// SQLAccounts is the SQL layer of one engine: all that the databases step and the spec's check of
// spec.databases and spec.users ask of an engine's databases, users and grants. The step decides
// from the spec and status (planDatabases) and writes no SQL itself.
//
// NOTE: dbusers fills it for MySQL (mysqlAccounts), pgusers for PostgreSQL (pgAccounts); the
// step, its plan and the check serve both alike. The desired state, the connection, the result
// and the error kinds are dbusers' types: they name databases, accounts and privileges (a grant's
// schema is PostgreSQL's), no engine's syntax.
type SQLAccounts interface {
	// NormalizeHost is the engine's canonical form of an account's host ("" for any).
	NormalizeHost(host string) string
	// ValidateAccount checks an account's name and host (normalized) against the engine's rules.
	ValidateAccount(name, host string) error
	// ParseGrant parses a GRANT string of the account name@host (never executes it).
	ParseGrant(stmt, name, host string) (dbusers.Grant, error)
	// Validate checks a whole desired state; a *dbusers.ValidationError lists its problems.
	Validate(d dbusers.Desired) error
	// Apply makes the server match d over conn, dropping only what managed lists.
	Apply(ctx context.Context, conn dbusers.Conn, d dbusers.Desired, managed dbusers.ManagedState) (dbusers.Result, error)
}

// sqlLayers are the engines whose databases and users the hooks manage, each with its SQL layer.
// Any other engine (SQL Server) gets DatabasesReady False, EngineNotSupported (notSupported).
var sqlLayers = map[string]SQLAccounts{
	v1alpha1.EngineMySQL:      mysqlAccounts{},
	v1alpha1.EnginePostgreSQL: pgAccounts{},
}

// notSupported is EngineNotSupported's sentence for an engine without a SQL layer.
//
// NOTE: OTC has no account API for RDS (its database team declined one), so accounts are made in
// SQL as the instance's administrator. SQL Server's are not: its logins live in master and are
// mapped to a user in each database, which users and grants (one account, privileges on
// databases) do not express, and the hooks carry no SQL Server driver.
func notSupported(engine string) string {
	why := ""
	if engine == v1alpha1.EngineSQLServer {
		why = " SQL Server's accounts are logins mapped to a user in each database, which users and grants do not express yet."
	}
	return fmt.Sprintf("Databases and users are not supported for %s, only for %s; nothing was applied.%s", engine, sqlEngines(), why)
}

// sqlEngines names the engines of sqlLayers, for a message: "MySQL", "MySQL and PostgreSQL".
func sqlEngines() string {
	names := slices.Sorted(func(yield func(string) bool) {
		for e := range sqlLayers {
			if !yield(e) {
				return
			}
		}
	})
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// mysqlAccounts is MySQL's SQL layer: dbusers, over go-sql-driver/mysql.
type mysqlAccounts struct{}

func (mysqlAccounts) NormalizeHost(host string) string { return dbusers.NormalizeHost(host) }

func (mysqlAccounts) ValidateAccount(name, host string) error {
	if err := dbusers.ValidateUser(name); err != nil {
		return err
	}
	return dbusers.ValidateHost(dbusers.NormalizeHost(host))
}

func (mysqlAccounts) ParseGrant(stmt, name, host string) (dbusers.Grant, error) {
	return dbusers.ParseGrant(stmt, name, host)
}

func (mysqlAccounts) Validate(d dbusers.Desired) error { return dbusers.Validate(d) }

func (mysqlAccounts) Apply(ctx context.Context, conn dbusers.Conn, d dbusers.Desired, managed dbusers.ManagedState) (dbusers.Result, error) {
	return dbusers.Apply(ctx, conn, d, managed)
}

// pgAccounts is PostgreSQL's SQL layer: pgusers, over jackc/pgx. Roles have no host: the host
// is normalized as MySQL's is (so "" and "%" are one account, in Secret names too) and must be
// "%".
type pgAccounts struct{}

func (pgAccounts) NormalizeHost(host string) string { return dbusers.NormalizeHost(host) }

func (pgAccounts) ValidateAccount(name, host string) error {
	if err := pgusers.ValidateRole(name); err != nil {
		return err
	}
	return pgusers.ValidateHost(host)
}

func (pgAccounts) ParseGrant(stmt, name, host string) (dbusers.Grant, error) {
	return pgusers.ParseGrant(stmt, name, host)
}

func (pgAccounts) Validate(d dbusers.Desired) error { return pgusers.Validate(d) }

func (pgAccounts) Apply(ctx context.Context, conn dbusers.Conn, d dbusers.Desired, managed dbusers.ManagedState) (dbusers.Result, error) {
	return pgusers.Apply(ctx, conn, d, managed)
}
