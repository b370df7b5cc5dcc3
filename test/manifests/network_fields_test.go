package manifests

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
)

// TestCreateValidationNetworkFields: ssl and the create-only fields (issue #19 part A) at create.
func TestCreateValidationNetworkFields(t *testing.T) {
	const key = "2b5a4c3e-8f0a-4d7e-9c1b-0e6f5a4b3c2d"
	cases := map[string]struct {
		reason string
		change func(spec map[string]any)
		want   string // a substring of the error; "" for a valid object
	}{
		"SSLOn":            {reason: "ssl for MySQL", change: set("ssl", true)},
		"SSLOff":           {reason: "ssl false is a choice too", change: set("ssl", false)},
		"TimeZone":         {reason: "a UTC offset", change: set("timezone", "UTC+08:00")},
		"TimeZoneUTC":      {reason: "UTC itself", change: set("timezone", "UTC")},
		"TimeZoneEmpty":    {reason: `"" is unset`, change: set("timezone", "")},
		"TimeZoneNegative": {reason: "west of Greenwich", change: set("timezone", "UTC-05:30")},
		"LowerCase":        {reason: "lower_case_table_names 0", change: set("lowercasetablenames", 0)},
		"Encrypted":        {reason: "a KMS key id", change: set("diskencryptionid", key)},
		"PostgresTimeZone": {reason: "PostgreSQL takes a time zone too", change: both(postgres, set("timezone", "UTC+01:00"))},

		"SSLPostgres":       {reason: "OTC switches SSL for MySQL alone", change: both(postgres, set("ssl", true)), want: "spec.ssl: Invalid value: ssl is for MySQL only"},
		"TimeZoneName":      {reason: "OTC takes offsets, not zone names", change: set("timezone", "Europe/Berlin"), want: "spec.timezone in body should match"},
		"TimeZoneSQLServer": {reason: "SQL Server takes Windows zone names", change: both(sqlserver, set("timezone", "UTC+01:00")), want: "timezone is for MySQL and PostgreSQL"},
		"LowerCaseTwo":      {reason: "OTC takes 0 or 1", change: set("lowercasetablenames", 2), want: "spec.lowercasetablenames: Unsupported value: 2"},
		"LowerCasePostgres": {reason: "a MySQL parameter", change: both(postgres, set("lowercasetablenames", 1)), want: "lowercasetablenames is for MySQL only"},
		"TimeZoneRestore":   {reason: "a restore keeps the source's zone", change: set("timezone", "UTC+01:00", "restorefrom", map[string]any{"instance": "src", "backupid": "b1"}), want: "timezone cannot be set with restorefrom"},
		"EncryptionNotUUID": {reason: "a KMS key id is a UUID", change: set("diskencryptionid", "my-key"), want: "spec.diskencryptionid in body should match"},
	}
	v := newCRDValidator(t, loadCRD(t), v1alpha1.Version)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj := rds(t, tc.change)
			assert.Empty(t, v.admit(obj), "pruned fields")
			got := errorText(v.create(obj))
			if tc.want == "" {
				assert.Empty(t, got, tc.reason)
				return
			}
			assert.Contains(t, got, tc.want, tc.reason)
		})
	}
}

// TestUpdateValidationNetworkFields: vpc, subnet and the create-only fields cannot change;
// securitygroup, port and ssl can (the hooks apply them in place).
func TestUpdateValidationNetworkFields(t *testing.T) {
	const key = "2b5a4c3e-8f0a-4d7e-9c1b-0e6f5a4b3c2d"
	cases := map[string]struct {
		reason   string
		old, new func(spec map[string]any)
		want     string // a substring of the error; "" for an allowed change
	}{
		"SecurityGroup": {reason: "applied in place", new: set("securitygroup", "web")},
		"Port":          {reason: "applied in place", new: set("port", 3307)},
		"SSL":           {reason: "applied in place", new: set("ssl", true)},
		"SSLOff":        {reason: "applied in place", old: set("ssl", true), new: set("ssl", false)},
		"SameTimeZone":  {reason: "unchanged", old: set("timezone", "UTC+08:00"), new: set("flavorref", "rds.mysql.c2.large")},
		"EmptyIsUnset":  {reason: `"" and unset are the same`, old: set("timezone", ""), new: set("timezone", nil)},

		"VPC":              {reason: "OTC cannot move an instance to another VPC", new: set("vpc", "other"), want: "spec.vpc: Invalid value: \"other\": vpc is immutable: OTC cannot move an instance to another VPC"},
		"Subnet":           {reason: "OTC cannot move an instance to another subnet", new: set("subnet", "other"), want: "subnet is immutable"},
		"TimeZoneChanged":  {reason: "set at create only", old: set("timezone", "UTC+08:00"), new: set("timezone", "UTC+01:00"), want: "timezone is set at create only"},
		"TimeZoneAdded":    {reason: "an existing instance's zone cannot be set", new: set("timezone", "UTC+01:00"), want: "timezone is set at create only"},
		"TimeZoneRemoved":  {reason: "removing it would not change the instance", old: set("timezone", "UTC+01:00"), new: set("timezone", nil), want: "timezone is set at create only"},
		"LowerCaseChanged": {reason: "set at create only", old: set("lowercasetablenames", 1), new: set("lowercasetablenames", 0), want: "lowercasetablenames is set at create only"},
		"LowerCaseAdded":   {reason: "set at create only", new: set("lowercasetablenames", 0), want: "lowercasetablenames is set at create only"},
		"KeyAdded":         {reason: "OTC encrypts at create only", new: set("diskencryptionid", key), want: "diskencryptionid is set at create only"},
		"KeyRemoved":       {reason: "OTC cannot decrypt a disk", old: set("diskencryptionid", key), new: set("diskencryptionid", nil), want: "diskencryptionid is set at create only"},
	}
	v := newCRDValidator(t, loadCRD(t), v1alpha1.Version)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			old := rds(t, tc.old)
			require.Empty(t, v.admit(old))
			require.Empty(t, errorText(v.create(old)), "the old object is valid")
			obj := rds(t, both(func(spec map[string]any) {
				if tc.old != nil {
					tc.old(spec)
				}
			}, func(spec map[string]any) {
				if tc.new != nil {
					tc.new(spec)
				}
			}))
			require.Empty(t, v.admit(obj))
			got := errorText(v.update(obj, old))
			if tc.want == "" {
				assert.Empty(t, got, tc.reason)
				return
			}
			assert.Contains(t, got, tc.want, tc.reason)
		})
	}
}
