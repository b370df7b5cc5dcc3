package dbusers

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

func TestValidate(t *testing.T) {
	pw := secret.New("s3cret-Pa55")
	cases := map[string]struct {
		reason string
		d      Desired
		want   []string // the problems, in order; nil: valid
	}{
		"valid": {
			reason: "a typical spec",
			d: Desired{
				Databases: []string{"shop", "app_1"},
				Users: []UserSpec{
					{Name: "app", Password: pw, Grants: []Grant{{Database: "shop", Privileges: []string{"all privileges"}}}},
					{Name: "app", Host: "10.%", Password: pw, Grants: []Grant{{Database: "shop", Table: "orders", Privileges: []string{"select"}}}},
				},
			},
		},
		"empty": {reason: "nothing to do is fine", d: Desired{}},
		"all problems at once": {
			reason: "every problem is reported, in spec order, with its position",
			d: Desired{
				Databases: []string{"mysql", "ok", "bad`name", "App", "app"},
				Users: []UserSpec{
					{Name: "root", Password: pw},
					{Name: "app", Host: "10.0.0.0/8"},
					{Name: "app", Password: pw, Grants: []Grant{
						{Database: "shop", Privileges: []string{"SUPER"}},
						{Database: "shop", Table: "t", Privileges: []string{"EXECUTE"}},
						{Database: "*", Privileges: []string{"SELECT"}},
						{Database: "shop", Privileges: nil},
						{Database: "shop", Privileges: []string{"ALL", "SELECT"}},
					}},
					{Name: "app", Host: "%", Password: pw},
				},
			},
			want: []string{
				`databases[0]: database "mysql" is a system schema and cannot be managed`,
				`databases[2]: database name "bad` + "`" + `name" must be 1 to 64 characters of A-Z, a-z, 0-9, _, $ and -`,
				`databases[4]: "app" and databases[3] differ only in case`,
				`users[0]: user "root" is reserved for the server or the cloud provider`,
				`users[1]: host "10.0.0.0/8": write the netmask in full (e.g. 10.0.0.0/255.0.0.0), not as a prefix length`,
				`users[1]: password must not be empty`,
				`users[2] 'app'@'%': grants[0] ("shop.*"): privilege "SUPER" is a global or administrative privilege and is not allowed`,
				`users[2] 'app'@'%': grants[1] ("shop.t"): privilege EXECUTE cannot be granted on a table`,
				`users[2] 'app'@'%': grants[2] ("*.*"): database name "*" must be 1 to 64 characters of A-Z, a-z, 0-9, _, $ and -`,
				`users[2] 'app'@'%': grants[3] ("shop.*"): no privileges given`,
				`users[2] 'app'@'%': grants[4] (shop.*): ALL cannot be combined with other privileges`,
				`users[3] 'app'@'%': the same account as users[2]`,
			},
		},
		"schema": {
			reason: "a grant's schema is PostgreSQL's: MySQL refuses it, rather than ignore it",
			d:      Desired{Users: []UserSpec{{Name: "a", Password: pw, Grants: []Grant{{Database: "shop", Schema: "public", Privileges: []string{"SELECT"}}}}}},
			want:   []string{`users[0] 'a'@'%': grants[0] ("shop.*"): schema "public": MySQL has no schemas within a database (a database is a schema): name the database and a table`},
		},
		"password NUL": {
			reason: "a NUL would be cut off by C code on the server",
			d:      Desired{Users: []UserSpec{{Name: "a", Password: secret.New("a\x00b")}}},
			want:   []string{`users[0] 'a'@'%': password contains a NUL character`},
		},
		"password too long": {
			reason: "bounded",
			d:      Desired{Users: []UserSpec{{Name: "a", Password: secret.New(strings.Repeat("p", 257))}}},
			want:   []string{`users[0] 'a'@'%': password is longer than 256 bytes`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := Validate(tc.d)
			if tc.want == nil {
				assert.NoError(t, err, tc.reason)
				return
			}
			require.Error(t, err, tc.reason)
			assert.True(t, errors.Is(err, ErrInvalid))
			var ve *ValidationError
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, tc.want, ve.Problems, tc.reason)
			assert.NotContains(t, err.Error(), pw.Reveal(), "no passwords in messages")
		})
	}
}

func TestNormalize(t *testing.T) {
	pw := secret.New("pw")
	in := Desired{
		Databases: []string{"b", "a", "b"},
		Users: []UserSpec{
			{Name: "z", Host: "DB.Example.COM", Password: pw},
			{Name: "a", Password: pw, Grants: []Grant{
				{Database: "shop", Table: "t", Privileges: []string{"insert"}},
				{Database: "shop", Privileges: []string{"select", "insert"}},
				{Database: "shop", Table: "t", Privileges: []string{"Select"}},
				{Database: "app", Privileges: []string{"select", "ALL  privileges"}},
			}},
		},
	}
	want := Desired{
		Databases: []string{"a", "b"},
		Users: []UserSpec{
			{Name: "a", Host: "%", Password: pw, Grants: []Grant{
				{Database: "app", Privileges: []string{"ALL"}},
				{Database: "shop", Privileges: []string{"SELECT", "INSERT"}},
				{Database: "shop", Table: "t", Privileges: []string{"SELECT", "INSERT"}},
			}},
			{Name: "z", Host: "db.example.com", Password: pw},
		},
	}
	got := Normalize(in)
	assert.Equal(t, want, got)
	assert.Equal(t, got, Normalize(got), "Normalize is idempotent")
	assert.Equal(t, []string{"b", "a", "b"}, in.Databases, "the input is not modified")
}

func TestFingerprint(t *testing.T) {
	base := Desired{
		Databases: []string{"shop", "app"},
		Users: []UserSpec{
			{Name: "app", Password: secret.New("pw-1"), Grants: []Grant{{Database: "shop", Privileges: []string{"SELECT", "INSERT"}}}},
			{Name: "ro", Host: "10.%", Password: secret.New("pw-2")},
		},
	}
	fp := Fingerprint(base)
	require.Regexp(t, regexp.MustCompile(`^[0-9a-f]{64}$`), fp)

	cases := map[string]struct {
		reason string
		d      Desired
		same   bool
	}{
		"reordered": {
			reason: "order and spelling do not matter",
			d: Desired{
				Databases: []string{"app", "shop", "app"},
				Users: []UserSpec{
					{Name: "ro", Host: "10.%", Password: secret.New("pw-2")},
					{Name: "app", Host: "", Password: secret.New("pw-1"), Grants: []Grant{{Database: "shop", Privileges: []string{"insert", "select"}}}},
				},
			},
			same: true,
		},
		"password": {
			reason: "a new password must be applied",
			d: Desired{
				Databases: base.Databases,
				Users:     []UserSpec{{Name: "app", Password: secret.New("pw-X"), Grants: base.Users[0].Grants}, base.Users[1]},
			},
		},
		"grant": {
			reason: "a new privilege must be applied",
			d: Desired{
				Databases: base.Databases,
				Users:     []UserSpec{{Name: "app", Password: secret.New("pw-1"), Grants: []Grant{{Database: "shop", Privileges: []string{"SELECT"}}}}, base.Users[1]},
			},
		},
		"prune": {
			reason: "turning pruning on must be applied",
			d:      Desired{Databases: base.Databases, Users: base.Users, PruneDatabases: true},
		},
		"database": {
			reason: "a new database must be applied",
			d:      Desired{Databases: []string{"shop"}, Users: base.Users},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Fingerprint(tc.d)
			if tc.same {
				assert.Equal(t, fp, got, tc.reason)
			} else {
				assert.NotEqual(t, fp, got, tc.reason)
			}
		})
	}
	assert.Equal(t, fp, Fingerprint(base), "stable across calls")
	assert.NotContains(t, fp, "pw-1")
}

func TestPasswordDigest(t *testing.T) {
	pw := secret.New("same password")
	a := PasswordDigest(secret.Value{}, "app", "%", pw)
	assert.Regexp(t, `^[0-9a-f]{64}$`, a)
	assert.Equal(t, a, PasswordDigest(secret.Value{}, "app", "", pw), "the host is normalized")
	assert.NotEqual(t, a, PasswordDigest(secret.Value{}, "app2", "%", pw), "salted per account")
	assert.NotEqual(t, a, PasswordDigest(secret.Value{}, "app", "10.%", pw), "salted per account")
	assert.NotEqual(t, a, PasswordDigest(secret.Value{}, "app", "%", secret.New("other")))
	assert.Empty(t, PasswordDigest(secret.Value{}, "app", "%", secret.Value{}))

	root := secret.New("Root-Passw0rd")
	keyed := PasswordDigest(root, "app", "%", pw)
	assert.NotEqual(t, a, keyed, "keyed: whoever reads the digest without the key cannot test guesses")
	assert.Equal(t, keyed, PasswordDigest(root, "app", "%", pw), "stable for the same key")
	assert.NotEqual(t, keyed, PasswordDigest(secret.New("another root"), "app", "%", pw))
	assert.NotEqual(t, Fingerprint(Desired{Users: []UserSpec{{Name: "app", Password: pw}}, DigestKey: root}),
		Fingerprint(Desired{Users: []UserSpec{{Name: "app", Password: pw}}}), "the fingerprint's digests are keyed too")
	assert.NotContains(t, fmt.Sprintf("%v %+v", UserSpec{Password: pw}, Desired{Users: []UserSpec{{Password: pw}}}), "same password",
		"specs print without passwords")
}
