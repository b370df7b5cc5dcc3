package otcsim

import (
	"net/http"
	"testing"

	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/backups"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/configurations"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/instances"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/security"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/upgrade"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryMutationRefusedWhileBusy checks that each mutating instance operation answers
// 409 DBS.200019 while another operation (here a restart) is in flight, and changes nothing.
func TestEveryMutationRefusedWhileBusy(t *testing.T) {
	e := newEnv(t, Options{})
	mysql := e.createActive(t, ssdOpts("busy-mysql"))
	pg := e.createActive(t, pgOpts("busy-pg", "15"))
	source := e.createActive(t, ssdOpts("busy-source"))
	srcBackups, err := backups.List(e.rds, backups.ListOpts{InstanceID: source})
	require.NoError(t, err)
	require.NotEmpty(t, srcBackups, "a new instance has an automated backup")
	for _, id := range []string{mysql, pg} {
		_, err := instances.Restart(e.rds, instances.RestartOpts{InstanceId: id})
		require.NoError(t, err)
	}
	before := e.getInstance(t, mysql)
	require.Equal(t, StatusRebooting, before.Status)

	limit := 200
	cases := map[string]struct {
		op   string
		call func() error
	}{
		"resize": {OpResize, func() error {
			_, err := instances.Resize(e.rds, instances.ResizeOpts{InstanceId: mysql, SpecCode: "rds.mysql.n1.xlarge.4"})
			return err
		}},
		"enlarge volume": {OpEnlargeVolume, func() error {
			_, err := instances.EnlargeVolume(e.rds, instances.EnlargeVolumeRdsOpts{InstanceId: mysql, Size: 200})
			return err
		}},
		"restart": {OpRestart, func() error {
			_, err := instances.Restart(e.rds, instances.RestartOpts{InstanceId: mysql})
			return err
		}},
		"single to HA": {OpSingleToHa, func() error {
			_, err := instances.SingleToHa(e.rds, instances.SingleToHaOpts{InstanceId: mysql, AzCodeNewNode: "eu-de-02"})
			return err
		}},
		"delete": {OpDeleteInstance, func() error {
			_, err := instances.Delete(e.rds, mysql)
			return err
		}},
		"minor upgrade": {OpUpgradeDbVersion, func() error {
			_, err := instances.UpgradeDbVersion(e.rds, instances.UpgradeDbVersionOpts{InstanceId: mysql})
			return err
		}},
		"major upgrade": {OpUpgradeMajorVersion, func() error {
			_, err := upgrade.UpgradeMajorVersion(e.rds, upgrade.UpgradeMajorVersionOpts{InstanceId: pg, TargetVersion: "16"})
			return err
		}},
		"stop": {OpStopInstance, func() error {
			_, err := instances.StopInstance(e.rds, mysql)
			return err
		}},
		"start": {OpStartupInstance, func() error {
			_, err := instances.StartupInstance(e.rds, mysql)
			return err
		}},
		"port": {OpUpdatePort, func() error {
			_, err := security.UpdatePort(e.rds, security.UpdatePortOpts{InstanceId: mysql, Port: 3307})
			return err
		}},
		"security group": {OpSetSecurityGroup, func() error {
			_, err := security.SetSecurityGroup(e.rds, security.SetSecurityGroupOpts{InstanceId: mysql, SecurityGroupId: SeedDefaultSecurityGroupID})
			return err
		}},
		"ssl": {OpSwitchSSL, func() error {
			return security.SwitchSsl(e.rds, security.SwitchSslOpts{InstanceId: mysql, SslOption: true})
		}},
		"autoscaling": {OpManageAutoScaling, func() error {
			return instances.ManageAutoScaling(e.rds, mysql, instances.ScalingOpts{SwitchOption: true, LimitSize: &limit})
		}},
		"backup": {OpCreateBackup, func() error {
			_, err := backups.Create(e.rds, backups.CreateOpts{InstanceID: mysql, Name: "busy-backup"})
			return err
		}},
		"restore into it": {OpRestorePITR, func() error {
			_, err := backups.RestorePITR(e.rds, backups.RestorePITROpts{
				Source: backups.Source{InstanceID: source, Type: "backup", BackupID: srcBackups[0].ID},
				Target: backups.Target{InstanceID: mysql},
			})
			return err
		}},
		"parameters": {OpUpdateInstanceCfg, func() error {
			_, err := configurations.UpdateInstanceConfiguration(e.rds, configurations.UpdateInstanceConfigurationOpts{
				InstanceId: mysql, Values: map[string]any{"max_connections": "500"},
			})
			return err
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			calls := e.sim.Calls(tc.op)
			status, code := rdsErrorCode(t, tc.call())
			assert.Equal(t, http.StatusConflict, status)
			assert.Equal(t, "DBS.200019", code)
			assert.Equal(t, calls+1, e.sim.Calls(tc.op), "the refused call is counted under its operation")
		})
	}

	after := e.getInstance(t, mysql)
	assert.Equal(t, before, after, "no refused call changed the instance")
	e.clock.Advance(e.sim.Options().Durations.Restart)
	after = e.getInstance(t, mysql)
	assert.Equal(t, StatusActive, after.Status)
	assert.Equal(t, before.FlavorRef, after.FlavorRef)
	assert.Equal(t, before.Volume.Size, after.Volume.Size)
	assert.Equal(t, before.Port, after.Port)
	assert.Equal(t, "15", e.getInstance(t, pg).DataStore.Version)
}
