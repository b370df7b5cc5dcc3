package pgusers

import (
	"fmt"
	"slices"

	"github.com/mcsps/rds-lambda-controller/sync/dbusers"
)

// Normalize returns a copy of d in canonical form (dbusers.Normalize, with PostgreSQL's spelling
// of each grant: normalizeGrant).
func Normalize(d dbusers.Desired) dbusers.Desired {
	users := slices.Clone(d.Users)
	for i, u := range users {
		gs := make([]dbusers.Grant, len(u.Grants))
		for j, g := range u.Grants {
			gs[j] = normalizeGrant(g)
		}
		users[i].Grants = gs
	}
	d.Users = users
	d = dbusers.Normalize(d)
	for i, u := range d.Users {
		for j, g := range u.Grants {
			d.Users[i].Grants[j] = normalizeGrant(g) // dbusers.Normalize sorts privileges in MySQL's order
		}
	}
	return d
}

// Validate reports every problem of d at once, in a stable order, as a *dbusers.ValidationError
// (errors.Is(err, dbusers.ErrInvalid)): names pass the allow-lists (names.go), every user has a
// password and no host, users are unique, grants are valid (grant.go).
func Validate(d dbusers.Desired) error {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	for i, db := range d.Databases {
		if err := ValidateDatabase(db); err != nil {
			add("databases[%d]: %v", i, err)
		}
	}
	seen := map[string]int{}
	for i, u := range d.Users {
		prefix := fmt.Sprintf("users[%d]", i)
		userOK := true
		if err := ValidateRole(u.Name); err != nil {
			add("%s: %v", prefix, err)
			userOK = false
		}
		if err := ValidateHost(u.Host); err != nil {
			add("%s: %v", prefix, err)
			userOK = false
		}
		if userOK {
			prefix = fmt.Sprintf("users[%d] %s", i, u.Name)
			if j, dup := seen[u.Name]; dup {
				add("%s: the same role as users[%d]", prefix, j)
			}
			seen[u.Name] = i
		}
		if err := dbusers.ValidatePassword(u.Password); err != nil {
			add("%s: %v", prefix, err)
		}
		for j, g := range u.Grants {
			g = normalizeGrant(g)
			if err := validateGrant(g); err != nil {
				add("%s: grants[%d] (%s): %v", prefix, j, q(grantOn(g)), err)
			}
		}
	}
	if len(problems) > 0 {
		return &dbusers.ValidationError{Problems: problems}
	}
	return nil
}

// validateManaged checks a remembered state: it comes from the object's status, which anyone with
// write access to the status could edit, so it passes the same allow-lists as the spec before
// anything in it is dropped.
func validateManaged(m dbusers.ManagedState, admin string) error {
	var problems []string
	for i, db := range m.Databases {
		if err := ValidateDatabase(db); err != nil {
			problems = append(problems, fmt.Sprintf("managed databases[%d]: %v", i, err))
		}
	}
	for i, u := range m.Users {
		switch err := ValidateRole(u.Name); {
		case err != nil:
			problems = append(problems, fmt.Sprintf("managed users[%d]: %v", i, err))
		case u.Name == admin:
			problems = append(problems, fmt.Sprintf("managed users[%d]: %s is the role the controller connects with", i, q(u.Name)))
		}
		if err := ValidateHost(u.Host); err != nil {
			problems = append(problems, fmt.Sprintf("managed users[%d]: %v", i, err))
		}
	}
	if len(problems) > 0 {
		return &dbusers.ValidationError{Problems: problems}
	}
	return nil
}
