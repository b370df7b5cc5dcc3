package manifests

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
)

const adoptID = "0123456789abcdef0123456789abcdefin01"

// TestRestoreAndAdoptionValidation: restorefrom and instanceid on create and on update.
func TestRestoreAndAdoptionValidation(t *testing.T) {
	fromBackup := map[string]any{"instance": "rds-team-a-db-1a2b3c4d", "backupid": "43e4feaab48f11e89039fa163ebaa7e4br01"}
	fromTime := map[string]any{"instance": "rds-team-a-db-1a2b3c4d", "restoretime": "2026-11-22T10:00:00Z"}
	create := map[string]struct {
		reason string
		change func(spec map[string]any)
		want   string
	}{
		"FromBackup":      {reason: "a backup of another instance", change: set("restorefrom", fromBackup)},
		"FromTime":        {reason: "a point in time of another instance", change: set("restorefrom", fromTime)},
		"Adopt":           {reason: "an OTC instance id", change: set("instanceid", adoptID, "deletionpolicy", "Retain")},
		"AdoptEmpty":      {reason: `"" means unset`, change: set("instanceid", "")},
		"FromBoth":        {reason: "a backup or a time, not both", change: set("restorefrom", map[string]any{"instance": "src-1", "backupid": "b1", "restoretime": "2026-11-22T10:00:00Z"}), want: "restorefrom needs exactly one of backupid and restoretime"},
		"FromNeither":     {reason: "a restore point is needed", change: set("restorefrom", map[string]any{"instance": "src-1"}), want: "restorefrom needs exactly one of backupid and restoretime"},
		"FromNoInstance":  {reason: "the source is required", change: set("restorefrom", map[string]any{"backupid": "b1"}), want: "spec.restorefrom.instance: Required value"},
		"FromBadTime":     {reason: "RFC3339 only", change: set("restorefrom", map[string]any{"instance": "src-1", "restoretime": "yesterday"}), want: "restoretime must be an RFC3339 time"},
		"FromWildcard":    {reason: "no wildcard names", change: set("restorefrom", map[string]any{"instance": "*src", "backupid": "b1"}), want: "spec.restorefrom.instance in body should match"},
		"AdoptName":       {reason: "adoption takes an id, not a name", change: set("instanceid", "my-instance"), want: "spec.instanceid in body should match"},
		"AdoptAndRestore": {reason: "adopt or restore, not both", change: set("instanceid", adoptID, "restorefrom", fromTime), want: "set restorefrom (a new instance from a backup) or instanceid"},
	}
	v := newCRDValidator(t, loadCRD(t), v1alpha1.Version)
	for name, tc := range create {
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

	update := map[string]struct {
		reason   string
		old, new func(spec map[string]any)
		want     string
	}{
		"RestoreFromChanges": {reason: "the source of an instance's data cannot change", old: set("restorefrom", fromTime), new: set("restorefrom", fromBackup), want: "restorefrom is immutable"},
		"InstanceIDChanges":  {reason: "an adopted instance cannot be swapped", old: set("instanceid", adoptID), new: set("instanceid", "fedcba9876543210fedcba9876543210in01"), want: "instanceid is immutable"},
		"RestoreTimeChanges": {reason: "each new backuprestoretime asks for a restore", old: set("backuprestoretime", "2026-11-22T10:00:00Z"), new: set("backuprestoretime", "2026-11-22T11:00:00Z")},
	}
	for name, tc := range update {
		t.Run(name, func(t *testing.T) {
			old := rds(t, tc.old)
			require.Empty(t, errorText(v.create(old)), "the old object is valid")
			obj := rds(t, both(tc.old, tc.new))
			got := errorText(v.update(obj, old))
			if tc.want == "" {
				assert.Empty(t, got, tc.reason)
				return
			}
			assert.Contains(t, got, tc.want, tc.reason)
		})
	}
}
