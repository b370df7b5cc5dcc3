package otcsim

import (
	"testing"
	"time"

	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/backups"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/instances"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/security"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/upgrade"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTransientStatusesFollowConfiguredDurations runs every operation with its own, distinct
// duration and checks that the instance shows the documented transient status until one second
// before the end and its settled status at the end.
func TestTransientStatusesFollowConfiguredDurations(t *testing.T) {
	durations := Durations{
		Create: 7 * time.Second, Delete: 11 * time.Second, Backup: 9 * time.Second, Resize: 3 * time.Second,
		Enlarge: 4 * time.Second, Restart: 2 * time.Second, SingleToHA: 6 * time.Second,
		Upgrade: 5 * time.Second, Restore: 8 * time.Second,
	}
	cases := map[string]struct {
		reason  string
		setup   func(t *testing.T, e *env) string // an ACTIVE instance (nil when start creates one)
		start   func(t *testing.T, e *env, id string) string
		during  string // "" = the instance is not listed with a special status (unchanged)
		d       time.Duration
		settled string // "" = gone from the list
	}{
		"create": {"BUILD → ACTIVE", nil, func(t *testing.T, e *env, _ string) string {
			id, _ := e.create(t, createOpts("dur-create"))
			return id
		}, StatusBuild, durations.Create, StatusActive},
		"restore to new": {"BUILD → ACTIVE, as long as a restore", func(t *testing.T, e *env) string { return e.createActive(t, createOpts("dur-src")) },
			func(t *testing.T, e *env, src string) string {
				bks, err := backups.List(e.rds, backups.ListOpts{InstanceID: src})
				require.NoError(t, err)
				opts := createOpts("dur-restored")
				res, err := backups.RestoreToNew(e.rds, backups.RestoreToNewOpts{
					Name: opts.Name, FlavorRef: opts.FlavorRef, Volume: opts.Volume, AvailabilityZone: opts.AvailabilityZone,
					VpcId: opts.VpcId, SubnetId: opts.SubnetId, SecurityGroupId: opts.SecurityGroupId, Password: opts.Password,
					RestorePoint: backups.RestorePoint{InstanceID: src, Type: "backup", BackupID: bks[0].ID},
				})
				require.NoError(t, err)
				return res.Instance.Id
			}, StatusBuild, durations.Restore, StatusActive},
		"resize": {"MODIFYING → ACTIVE", func(t *testing.T, e *env) string { return e.createActive(t, createOpts("dur-resize")) },
			func(t *testing.T, e *env, id string) string {
				_, err := instances.Resize(e.rds, instances.ResizeOpts{InstanceId: id, SpecCode: "rds.mysql.c2.large"})
				require.NoError(t, err)
				return id
			}, StatusModifying, durations.Resize, StatusActive},
		"enlarge": {"MODIFYING → ACTIVE", func(t *testing.T, e *env) string { return e.createActive(t, createOpts("dur-enlarge")) },
			func(t *testing.T, e *env, id string) string {
				_, err := instances.EnlargeVolume(e.rds, instances.EnlargeVolumeRdsOpts{InstanceId: id, Size: 50})
				require.NoError(t, err)
				return id
			}, StatusModifying, durations.Enlarge, StatusActive},
		"restart": {"REBOOTING → ACTIVE", func(t *testing.T, e *env) string { return e.createActive(t, createOpts("dur-restart")) },
			func(t *testing.T, e *env, id string) string {
				_, err := instances.Restart(e.rds, instances.RestartOpts{InstanceId: id})
				require.NoError(t, err)
				return id
			}, StatusRebooting, durations.Restart, StatusActive},
		"single to HA": {"MODIFYING INSTANCE TYPE → ACTIVE", func(t *testing.T, e *env) string { return e.createActive(t, createOpts("dur-ha")) },
			func(t *testing.T, e *env, id string) string {
				_, err := instances.SingleToHa(e.rds, instances.SingleToHaOpts{InstanceId: id, AzCodeNewNode: "eu-de-02"})
				require.NoError(t, err)
				return id
			}, StatusModifyingInstanceType, durations.SingleToHA, StatusActive},
		"minor upgrade": {"MODIFYING → ACTIVE", func(t *testing.T, e *env) string { return e.createActive(t, createOpts("dur-minor")) },
			func(t *testing.T, e *env, id string) string {
				_, err := instances.UpgradeDbVersion(e.rds, instances.UpgradeDbVersionOpts{InstanceId: id})
				require.NoError(t, err)
				return id
			}, StatusModifying, durations.Upgrade, StatusActive},
		"major upgrade": {"MODIFYING → ACTIVE", func(t *testing.T, e *env) string { return e.createActive(t, pgOpts("dur-major", "16")) },
			func(t *testing.T, e *env, id string) string {
				_, err := upgrade.UpgradeMajorVersion(e.rds, upgrade.UpgradeMajorVersionOpts{InstanceId: id, TargetVersion: "17"})
				require.NoError(t, err)
				return id
			}, StatusModifying, durations.Upgrade, StatusActive},
		"backup": {"BACKING UP → ACTIVE", func(t *testing.T, e *env) string { return e.createActive(t, createOpts("dur-backup")) },
			func(t *testing.T, e *env, id string) string {
				_, err := backups.Create(e.rds, backups.CreateOpts{InstanceID: id, Name: "dur-backup-1"})
				require.NoError(t, err)
				return id
			}, StatusBackingUp, durations.Backup, StatusActive},
		"restore in place": {"RESTORING → ACTIVE", func(t *testing.T, e *env) string { return e.createActive(t, createOpts("dur-pitr")) },
			func(t *testing.T, e *env, id string) string {
				bks, err := backups.List(e.rds, backups.ListOpts{InstanceID: id})
				require.NoError(t, err)
				_, err = backups.RestorePITR(e.rds, backups.RestorePITROpts{
					Source: backups.Source{InstanceID: id, Type: "backup", BackupID: bks[0].ID},
					Target: backups.Target{InstanceID: id},
				})
				require.NoError(t, err)
				return id
			}, StatusRestoring, durations.Restore, StatusActive},
		"port": {"MODIFYING DATABASE PORT → ACTIVE, as long as a restart", func(t *testing.T, e *env) string { return e.createActive(t, createOpts("dur-port")) },
			func(t *testing.T, e *env, id string) string {
				_, err := security.UpdatePort(e.rds, security.UpdatePortOpts{InstanceId: id, Port: 3310})
				require.NoError(t, err)
				return id
			}, StatusModifyingPort, durations.Restart, StatusActive},
		"stop": {"ACTIVE stays until SHUTDOWN, as long as a restart", func(t *testing.T, e *env) string { return e.createActive(t, createOpts("dur-stop")) },
			func(t *testing.T, e *env, id string) string {
				_, err := instances.StopInstance(e.rds, id)
				require.NoError(t, err)
				return id
			}, StatusActive, durations.Restart, StatusShutdown},
		"delete": {"listed unchanged until it vanishes", func(t *testing.T, e *env) string { return e.createActive(t, createOpts("dur-delete")) },
			func(t *testing.T, e *env, id string) string {
				_, err := instances.Delete(e.rds, id)
				require.NoError(t, err)
				return id
			}, StatusActive, durations.Delete, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, Options{Durations: durations})
			require.Equal(t, durations, e.sim.Options().Durations)
			var setupID string
			if tc.setup != nil {
				setupID = tc.setup(t, e)
			}
			id := tc.start(t, e, setupID)
			assert.Equal(t, tc.during, e.getInstance(t, id).Status, tc.reason)
			e.clock.Advance(tc.d - time.Second)
			assert.Equal(t, tc.during, e.getInstance(t, id).Status, "%s: still running one second before the end", tc.reason)
			e.clock.Advance(time.Second)
			res, err := instances.List(e.rds, instances.ListOpts{Id: id})
			require.NoError(t, err)
			if tc.settled == "" {
				assert.Empty(t, res.Instances, tc.reason)
				return
			}
			require.Len(t, res.Instances, 1)
			assert.Equal(t, tc.settled, res.Instances[0].Status, tc.reason)
		})
	}
}
