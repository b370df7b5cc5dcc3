package manifests

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
)

// TestSettingsValidation: the settings changed in place (maintenancewindow, backupperiod,
// stopped) as the API server's own code checks them, with the CRD's schema and CEL rules.
func TestSettingsValidation(t *testing.T) {
	cases := map[string]struct {
		reason string
		change func(spec map[string]any)
		want   string // a substring of the error; "" for a valid object
	}{
		"MaintenanceWindow":      {reason: "four hours, OTC's default", change: set("maintenancewindow", "02:00-06:00")},
		"MaintenanceWindowWraps": {reason: "22:00-02:00 is four hours", change: set("maintenancewindow", "22:00-02:00")},
		"MaintenanceWindowEmpty": {reason: `"" leaves OTC's window`, change: set("maintenancewindow", "")},
		"MaintenanceWindowShort": {reason: "OTC wants four hours", change: set("maintenancewindow", "22:00-00:00"), want: "maintenancewindow must be a four-hour window"},
		"MaintenanceWindowMinutesDiffer": {reason: "the same minutes on both sides",
			change: set("maintenancewindow", "02:15-06:00"), want: "maintenancewindow must be a four-hour window"},
		"MaintenanceWindowGarbage": {reason: "not a window", change: set("maintenancewindow", "2-6"), want: "spec.maintenancewindow in body should match"},
		"BackupPeriod":             {reason: "days 1 to 7", change: set("backupperiod", "1,3,5")},
		"BackupPeriodAnyOrder":     {reason: "the order does not matter", change: set("backupperiod", "7,1")},
		"BackupPeriodAllDays":      {reason: "every day, OTC's default", change: set("backupperiod", "1,2,3,4,5,6,7")},
		"BackupPeriodDay8":         {reason: "a week has seven days", change: set("backupperiod", "1,8"), want: "spec.backupperiod in body should match"},
		"BackupPeriodNames":        {reason: "OTC's digits, not names", change: set("backupperiod", "Mon"), want: "spec.backupperiod in body should match"},
		"BackupPeriodTwice":        {reason: "each day once", change: set("backupperiod", "1,1"), want: "backupperiod names each day at most once"},
		"Stopped":                  {reason: "a stopped MySQL instance", change: set("stopped", true)},
		"StoppedPostgreSQL":        {reason: "a stopped PostgreSQL instance", change: both(postgres, set("stopped", true))},
		"StoppedSQLServer": {reason: "OTC stops no SQL Server instance", change: both(sqlserver, set("stopped", true)),
			want: "stopped is for MySQL and PostgreSQL instances"},
		"StoppedNotBool": {reason: "stopped is a boolean", change: set("stopped", "yes"), want: "spec.stopped in body must be of type boolean"},
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
