package dbusers

import (
	"cmp"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// Desired is the databases and users an Rds object asks for.
type Desired struct {
	// Databases to create if missing.
	Databases []string
	// Users to create, keep at their password and grants, and drop when they leave the list.
	Users []UserSpec
	// PruneDatabases drops databases that this controller created and that left Databases.
	// Off by default: dropping a database deletes its data.
	PruneDatabases bool
	// DigestKey keys the password digests remembered in ManagedState and in Fingerprint. It must be
	// a secret that readers of those records do not have (the hooks use the root password).
	DigestKey secret.Value
}

// UserSpec is one account and everything it may do.
type UserSpec struct {
	Name string
	// Host is the host part of the account; empty means "%".
	Host     string
	Password secret.Value
	// Grants are the account's complete privileges: whatever else it holds on a database or table
	// is revoked. Use ParseGrant to turn the original operator's GRANT statements into Grants.
	Grants []Grant
}

// ManagedState is what Apply remembers between calls (the caller keeps it, e.g. in the Rds
// status): the databases it created and the accounts it manages. Apply never drops anything that
// is not listed here.
type ManagedState struct {
	// Databases this controller created (sorted).
	Databases []string `json:"databases,omitempty"`
	// Users this controller created or adopted (sorted by name, host).
	Users []ManagedUser `json:"users,omitempty"`
}

// ManagedUser is an account this controller manages.
type ManagedUser struct {
	Name string `json:"name"`
	Host string `json:"host"`
	// PasswordDigest is PasswordDigest(key, name, host, password) of the password Apply last set or
	// verified. It is consulted only where the server's stored hash cannot be checked (salted
	// plugins such as MySQL 8's caching_sha2_password).
	PasswordDigest string `json:"passwordDigest,omitempty"`
}

// maxPasswordLen bounds passwords; MySQL has no documented limit, but nothing needs more.
const maxPasswordLen = 256

// Normalize returns a copy of d in canonical form: hosts defaulted and lower case, databases
// de-duplicated and sorted, users sorted by name and host, each user's grants merged per database
// or table, privileges normalized and sorted. It does not validate; Validate does.
func Normalize(d Desired) Desired {
	out := Desired{PruneDatabases: d.PruneDatabases, DigestKey: d.DigestKey}
	out.Databases = slices.Clone(d.Databases)
	slices.Sort(out.Databases)
	out.Databases = slices.Compact(out.Databases)
	for _, u := range d.Users {
		out.Users = append(out.Users, UserSpec{
			Name:     u.Name,
			Host:     NormalizeHost(u.Host),
			Password: u.Password,
			Grants:   mergeGrants(u.Grants),
		})
	}
	slices.SortStableFunc(out.Users, func(a, b UserSpec) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(a.Host, b.Host))
	})
	return out
}

// mergeGrants merges grants on the same database or table and sorts them.
func mergeGrants(gs []Grant) []Grant {
	var out []Grant
	for _, g := range gs {
		i := slices.IndexFunc(out, func(o Grant) bool { return o.Database == g.Database && o.Schema == g.Schema && o.Table == g.Table })
		if i < 0 {
			out = append(out, Grant{Database: g.Database, Schema: g.Schema, Table: g.Table, Privileges: slices.Clone(g.Privileges)})
			continue
		}
		out[i].Privileges = append(out[i].Privileges, g.Privileges...)
	}
	for i := range out {
		out[i] = out[i].normalized()
	}
	slices.SortFunc(out, compareGrants)
	return out
}

func compareGrants(a, b Grant) int {
	return cmp.Or(strings.Compare(a.Database, b.Database), strings.Compare(a.Schema, b.Schema), strings.Compare(a.Table, b.Table))
}

// Validate reports every problem of d at once, in a stable order, as a *ValidationError
// (errors.Is(err, ErrInvalid)). Names and hosts must pass the allow-lists (ValidateDatabase,
// ValidateUser, ValidateHost); every user needs a password; accounts must be unique; grants must
// be valid (see ParseGrant).
func Validate(d Desired) error {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	seenDB := map[string]int{}
	for i, db := range d.Databases {
		if err := ValidateDatabase(db); err != nil {
			add("databases[%d]: %v", i, err)
			continue
		}
		// NOTE: database names are case-insensitive on servers with lower_case_table_names=1
		// (the OTC RDS default), so "App" and "app" would be one database there.
		key := strings.ToLower(db)
		if j, dup := seenDB[key]; dup && d.Databases[j] != db {
			add("databases[%d]: %s and databases[%d] differ only in case", i, QuoteForMessage(db), j)
		}
		seenDB[key] = i
	}

	seenUser := map[string]int{}
	for i, u := range d.Users {
		host := NormalizeHost(u.Host)
		prefix := fmt.Sprintf("users[%d]", i)
		userOK := true
		if err := ValidateUser(u.Name); err != nil {
			add("%s: %v", prefix, err)
			userOK = false
		}
		if err := ValidateHost(host); err != nil {
			add("%s: %v", prefix, err)
			userOK = false
		}
		if userOK {
			prefix = fmt.Sprintf("users[%d] %s", i, displayAccount(u.Name, host))
			key := u.Name + "@" + host
			if j, dup := seenUser[key]; dup {
				add("%s: the same account as users[%d]", prefix, j)
			}
			seenUser[key] = i
		}
		if err := ValidatePassword(u.Password); err != nil {
			add("%s: %v", prefix, err)
		}
		for j, g := range u.Grants {
			if len(g.Privileges) > 1 && slices.ContainsFunc(g.Privileges, func(p string) bool { return normalizePrivilege(p) == PrivilegeAll }) {
				add("%s: grants[%d] (%s): ALL cannot be combined with other privileges", prefix, j, g.On())
				continue
			}
			if err := g.normalized().validate(); err != nil {
				add("%s: grants[%d] (%s): %v", prefix, j, QuoteForMessage(g.On()), err)
			}
		}
	}
	if len(problems) > 0 {
		return &ValidationError{Problems: problems}
	}
	return nil
}

// ValidatePassword checks a password as every engine needs it: not empty, at most 256 bytes of
// UTF-8, no NUL.
func ValidatePassword(pw secret.Value) error {
	s := pw.Reveal()
	switch {
	case s == "":
		return fmt.Errorf("password must not be empty")
	case len(s) > maxPasswordLen:
		return fmt.Errorf("password is longer than %d bytes", maxPasswordLen)
	case !utf8.ValidString(s):
		return fmt.Errorf("password is not valid UTF-8")
	case strings.ContainsRune(s, 0):
		return fmt.Errorf("password contains a NUL character")
	}
	return nil
}

// NormalizeManaged returns a sorted, de-duplicated copy with normalized hosts. For an account
// listed twice, the entry with a digest wins.
func NormalizeManaged(m ManagedState) ManagedState {
	out := ManagedState{Databases: slices.Clone(m.Databases)}
	slices.Sort(out.Databases)
	out.Databases = slices.Compact(out.Databases)
	for _, u := range m.Users {
		u.Host = NormalizeHost(u.Host)
		out.Users = append(out.Users, u)
	}
	slices.SortStableFunc(out.Users, func(a, b ManagedUser) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(a.Host, b.Host),
			-strings.Compare(a.PasswordDigest, b.PasswordDigest))
	})
	out.Users = slices.CompactFunc(out.Users, func(a, b ManagedUser) bool { return a.Name == b.Name && a.Host == b.Host })
	// Empty lists are nil, so that states compare (and marshal) the same however they were built.
	if len(out.Databases) == 0 {
		out.Databases = nil
	}
	if len(out.Users) == 0 {
		out.Users = nil
	}
	return out
}

// validateManaged checks a remembered state: it comes from the object's status, which anyone with
// write access to the status could edit, so it passes the same allow-lists as the spec before
// anything in it is dropped.
func validateManaged(m ManagedState, adminUser string) error {
	var problems []string
	for i, db := range m.Databases {
		if err := ValidateDatabase(db); err != nil {
			problems = append(problems, fmt.Sprintf("managed databases[%d]: %v", i, err))
		}
	}
	for i, u := range m.Users {
		if err := ValidateUser(u.Name); err != nil {
			problems = append(problems, fmt.Sprintf("managed users[%d]: %v", i, err))
		} else if u.Name == adminUser {
			problems = append(problems, fmt.Sprintf("managed users[%d]: %s is the account the controller connects with", i, QuoteForMessage(u.Name)))
		}
		if err := ValidateHost(NormalizeHost(u.Host)); err != nil {
			problems = append(problems, fmt.Sprintf("managed users[%d]: %v", i, err))
		}
	}
	if len(problems) > 0 {
		return &ValidationError{Problems: problems}
	}
	return nil
}

// NOTE: digests of passwords end up in the object's status (ManagedState) and in the fingerprint,
// which anyone allowed to read the Rds object sees. They are HMAC-SHA256 keyed with the caller's
// DigestKey (the hooks use the instance's root password, which lives only in the connection
// Secret): without the key a digest cannot be checked against guesses, and whoever holds the key
// holds the server anyway. The account is part of the message, so equal passwords of different
// accounts differ. A new key (the root password changed) changes every digest: the next apply then
// sets each password once more, which is harmless.
const digestDomain = "rds-lambda-controller/dbusers/v2\x00"

// PasswordDigest returns the hex digest of an account's password as remembered in ManagedState
// and used in Fingerprint. Empty for an empty password.
func PasswordDigest(key secret.Value, user, host string, password secret.Value) string {
	if password.Empty() {
		return ""
	}
	mac := hmac.New(sha256.New, []byte(key.Reveal()))
	mac.Write([]byte(digestDomain + user + "\x00" + NormalizeHost(host) + "\x00" + password.Reveal()))
	return hex.EncodeToString(mac.Sum(nil))
}

// Fingerprint is a stable SHA-256 (hex) of the normalized Desired state, passwords included only as
// PasswordDigest. Equal specs give equal fingerprints whatever their order or spelling (ALL
// PRIVILEGES vs ALL, host "" vs "%"), so the hook can remember in status what it last applied.
func Fingerprint(d Desired) string {
	d = Normalize(d)
	type fpUser struct {
		Name           string  `json:"name"`
		Host           string  `json:"host"`
		PasswordDigest string  `json:"passwordDigest"`
		Grants         []Grant `json:"grants"`
	}
	doc := struct {
		Version        string   `json:"version"`
		Databases      []string `json:"databases"`
		Users          []fpUser `json:"users"`
		PruneDatabases bool     `json:"pruneDatabases"`
	}{Version: "dbusers/v1", Databases: d.Databases, PruneDatabases: d.PruneDatabases}
	for _, u := range d.Users {
		doc.Users = append(doc.Users, fpUser{
			Name:           u.Name,
			Host:           u.Host,
			PasswordDigest: PasswordDigest(d.DigestKey, u.Name, u.Host, u.Password),
			Grants:         u.Grants,
		})
	}
	b, err := json.Marshal(doc)
	if err != nil {
		// Unreachable: the document holds only strings, bools and slices of them.
		panic("dbusers: marshal fingerprint: " + err.Error())
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
