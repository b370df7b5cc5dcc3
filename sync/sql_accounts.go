package sync

import (
	"context"
	"slices"
	"strings"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/dbusers"
)

// SQLAccounts is the SQL layer of one engine: all that the databases step and the spec's check of
// spec.databases and spec.users ask of an engine's databases, users and grants. The step decides
// from the spec and status (planDatabases) and writes no SQL itself.
//
// NOTE: dbusers fills it for MySQL (mysqlAccounts). A PostgreSQL implementation fills it too and
// is added to sqlLayers; the step, its plan and the check then serve PostgreSQL with nothing else
// changed. The desired state, the connection and the result are dbusers' types for now: they name
// databases, accounts and privileges, no MySQL syntax, and may move to a package of their own with
// a second engine.
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
// Any other engine gets DatabasesReady False, EngineNotSupported.
var sqlLayers = map[string]SQLAccounts{
	v1alpha1.EngineMySQL: mysqlAccounts{},
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
