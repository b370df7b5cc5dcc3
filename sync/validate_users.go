package reconcile

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/dbusers"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// validateUsers returns the problems of spec.databases and spec.users, by the rules of the engine's
// SQL layer. GRANT strings are parsed (never executed) and accepted only for MySQL's database- or
// table-level privileges of exactly the user's own account; PostgreSQL takes none. Engines
// without a SQL layer are not checked here: the databases step reports them as not supported,
// whatever the lists hold.
func validateUsers(spec *v1alpha1.RdsSpec) []string {
	layer := sqlLayers[spec.Datastoretype]
	if layer == nil {
		return nil
	}
	// Passwords that come from a Secret or are generated are not known here: a placeholder
	// lets dbusers.Validate check everything else.
	placeholder := secret.New("placeholder")
	d, problems := desiredDatabases(layer, spec, func(int) secret.Value { return placeholder })
	// The GRANT strings were checked by ParseGrant above; validating only the structured grants
	// keeps the index in dbusers' messages ("grants[1]") that of spec.users[].grants.
	for i := range d.Users {
		d.Users[i].Grants = structuredGrants(spec.Users[i])
	}
	var ve *dbusers.ValidationError
	if err := layer.Validate(d); errors.As(err, &ve) {
		for _, p := range ve.Problems {
			problems = append(problems, "spec."+p+".")
		}
	}
	for i, u := range spec.Users {
		if ref := u.Passwordsecretref; ref != nil {
			if u.Password != "" {
				problems = append(problems, fmt.Sprintf("spec.users[%d]: password and passwordsecretref are both set: use one.", i))
			}
			if !resourcePattern.MatchString(ref.Name) {
				problems = append(problems, fmt.Sprintf("spec.users[%d].passwordsecretref.name %q is not a Secret name.", i, ref.Name))
			}
		}
	}
	return problems
}

// desiredDatabases converts the spec into dbusers' desired state, with password(i) as user i's
// password. It returns the problems of the GRANT strings of users whose account is valid (an
// invalid account is reported once, by dbusers.Validate).
func desiredDatabases(layer SQLAccounts, spec *v1alpha1.RdsSpec, password func(i int) secret.Value) (dbusers.Desired, []string) {
	d := dbusers.Desired{Databases: spec.Databases, PruneDatabases: spec.Prunedatabases}
	var problems []string
	for i, u := range spec.Users {
		us := dbusers.UserSpec{Name: u.Name, Host: u.Host, Password: password(i)}
		accountOK := layer.ValidateAccount(u.Name, u.Host) == nil
		for j, stmt := range u.Privileges {
			if !accountOK {
				break
			}
			g, err := layer.ParseGrant(stmt, u.Name, u.Host)
			if err != nil {
				problems = append(problems, fmt.Sprintf("spec.users[%d].privileges[%d]: %s.", i, j, strings.TrimSuffix(err.Error(), ".")))
				continue
			}
			us.Grants = append(us.Grants, g)
		}
		us.Grants = append(us.Grants, structuredGrants(u)...)
		d.Users = append(d.Users, us)
	}
	return d, problems
}

// structuredGrants converts a user's grants (the structured form) to dbusers'.
func structuredGrants(u v1alpha1.User) []dbusers.Grant {
	var out []dbusers.Grant
	for _, g := range u.Grants {
		out = append(out, dbusers.Grant{Database: g.Database, Schema: g.Schema, Table: g.Table, Privileges: g.Privileges})
	}
	return out
}
