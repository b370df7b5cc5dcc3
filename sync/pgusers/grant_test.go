package pgusers

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcsps/rds-lambda-controller/sync/dbusers"
)

func TestNormalizeGrant(t *testing.T) {
	tests := []struct {
		reason string
		in     dbusers.Grant
		want   dbusers.Grant
	}{
		{"TEMP is TEMPORARY, privileges in PostgreSQL's order, once",
			dbusers.Grant{Database: "shop", Privileges: []string{"temp", "connect", "CONNECT"}},
			dbusers.Grant{Database: "shop", Privileges: []string{"CONNECT", "TEMPORARY"}}},
		{"a table without a schema is public's",
			dbusers.Grant{Database: "shop", Table: "orders", Privileges: []string{"select"}},
			dbusers.Grant{Database: "shop", Schema: "public", Table: "orders", Privileges: []string{"SELECT"}}},
		{"ALL PRIVILEGES is ALL",
			dbusers.Grant{Database: "shop", Schema: "s", Privileges: []string{"all  privileges"}},
			dbusers.Grant{Database: "shop", Schema: "s", Privileges: []string{"ALL"}}},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			assert.Equal(t, tt.want, normalizeGrant(tt.in))
			assert.NoError(t, validateGrant(normalizeGrant(tt.in)))
		})
	}
}

func TestValidateNames(t *testing.T) {
	for _, ok := range []string{"app", "App_1", "_x", "a23456789012345678901234567890ab"} {
		assert.NoError(t, ValidateRole(ok), ok)
	}
	for _, bad := range []string{"", "1app", "pgadmin", "PG_x", "root", "rdsAdmin", "public", "a-b", "a.b", `a"b`, "a b",
		"a234567890123456789012345678901234", "ü"} {
		assert.Error(t, ValidateRole(bad), bad)
	}
	for _, ok := range []string{"shop", "shop-1", "Shop_2"} {
		assert.NoError(t, ValidateDatabase(ok), ok)
	}
	for _, bad := range []string{"postgres", "template0", "rdsadmin", "pg_x", "-x", "1x", `x"`, "x;"} {
		assert.Error(t, ValidateDatabase(bad), bad)
	}
	assert.Error(t, ValidateSchema("information_schema"))
	assert.Error(t, ValidateSchema("pg_catalog"))
	assert.NoError(t, ValidateHost(""))
	assert.NoError(t, ValidateHost("%"))
	assert.Error(t, ValidateHost("10.%"))
}

func TestParseGrantRefusesEveryString(t *testing.T) {
	_, err := ParseGrant("GRANT CONNECT ON DATABASE shop TO app", "app", "")
	assert.ErrorIs(t, err, dbusers.ErrInvalid)
	assert.ErrorContains(t, err, "for PostgreSQL write grants")
}
