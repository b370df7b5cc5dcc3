package otcsim

import (
	"net/http"
	"testing"
	"time"

	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/backups"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/instances"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBackupPolicy(t *testing.T) {
	e := newEnv(t, Options{})
	id := e.createActive(t, createOpts("policy-01"))

	p, err := backups.ShowBackupPolicy(e.rds, id)
	require.NoError(t, err)
	assert.Equal(t, backups.BackupPolicy{KeepDays: 7, StartTime: "02:00-03:00", Period: "1,2,3,4,5,6,7"}, *p)

	keep := 14
	require.NoError(t, backups.Update(e.rds, backups.UpdateOpts{InstanceId: id, KeepDays: &keep, StartTime: "23:45-00:45", Period: "1,3,5"}))
	p, err = backups.ShowBackupPolicy(e.rds, id)
	require.NoError(t, err)
	assert.Equal(t, backups.BackupPolicy{KeepDays: 14, StartTime: "23:45-00:45", Period: "1,3,5"}, *p)
	in := e.getInstance(t, id)
	assert.Equal(t, 14, in.BackupStrategy.KeepDays)
	assert.Equal(t, "23:45-00:45", in.BackupStrategy.StartTime)

	off := 0
	require.NoError(t, backups.Update(e.rds, backups.UpdateOpts{InstanceId: id, KeepDays: &off}))
	p, err = backups.ShowBackupPolicy(e.rds, id)
	require.NoError(t, err)
	assert.Equal(t, backups.BackupPolicy{KeepDays: 0}, *p)

	for name, tc := range map[string]struct {
		opts backups.UpdateOpts
		code string
	}{
		"keep days":   {backups.UpdateOpts{KeepDays: ptr(733), StartTime: "01:00-02:00", Period: "1"}, "DBS.201106"},
		"window":      {backups.UpdateOpts{KeepDays: ptr(7), StartTime: "01:00-03:00", Period: "1"}, "DBS.201103"},
		"period":      {backups.UpdateOpts{KeepDays: ptr(7), StartTime: "01:00-02:00", Period: "1,8"}, "DBS.201101"},
		"no window":   {backups.UpdateOpts{KeepDays: ptr(7), Period: "1"}, "DBS.201103"},
		"dup weekday": {backups.UpdateOpts{KeepDays: ptr(7), StartTime: "01:00-02:00", Period: "1,1"}, "DBS.201101"},
	} {
		t.Run(name, func(t *testing.T) {
			tc.opts.InstanceId = id
			status, code := rdsErrorCode(t, backups.Update(e.rds, tc.opts))
			assert.Equal(t, http.StatusBadRequest, status)
			assert.Equal(t, tc.code, code)
		})
	}
	assert.Equal(t, 7, e.sim.Calls(OpUpdateBackupPolicy))
	assert.Equal(t, 7+1, e.sim.MutatingCalls(), "policy updates and the create are mutations")
}

func ptr[T any](v T) *T { return &v }

func TestDeleteBackup(t *testing.T) {
	e := newEnv(t, Options{})
	id := e.createActive(t, createOpts("del-backup"))
	b, err := backups.Create(e.rds, backups.CreateOpts{InstanceID: id, Name: "to-delete"})
	require.NoError(t, err)

	status, code := rdsErrorCode(t, backups.Delete(e.rds, b.ID))
	assert.Equal(t, http.StatusConflict, status, "no delete while BUILDING")
	assert.Equal(t, "DBS.201205", code)

	e.clock.Advance(e.sim.Options().Durations.Backup)
	require.NoError(t, backups.Delete(e.rds, b.ID))
	got, err := backups.List(e.rds, backups.ListOpts{BackupID: b.ID})
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, backups.StatusDeleting, got[0].Status)

	e.clock.Advance(e.sim.Options().Durations.Delete)
	got, err = backups.List(e.rds, backups.ListOpts{BackupID: b.ID})
	require.NoError(t, err)
	assert.Empty(t, got)

	status, code = rdsErrorCode(t, backups.Delete(e.rds, b.ID))
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, "DBS.201010", code)

	auto, err := backups.List(e.rds, backups.ListOpts{InstanceID: id, BackupType: "auto"})
	require.NoError(t, err)
	require.Len(t, auto, 1)
	status, _ = rdsErrorCode(t, backups.Delete(e.rds, auto[0].ID))
	assert.Equal(t, http.StatusBadRequest, status, "automated backups cannot be deleted")
}

func TestRestoreTimesAndPITR(t *testing.T) {
	e := newEnv(t, Options{})
	src := e.createActive(t, ssdOpts("pitr-source"))
	target := e.createActive(t, ssdOpts("pitr-target"))
	e.clock.Advance(time.Hour)

	ranges, err := backups.ListRestoreTimes(e.rds, backups.ListRestoreTimesOpts{InstanceId: src, Date: "2026-05-01"})
	require.NoError(t, err)
	require.Len(t, ranges, 1)
	assert.Equal(t, t0.Add(20*time.Second).UnixMilli(), ranges[0].StartTime)
	assert.Equal(t, e.clock.Now().UnixMilli(), ranges[0].EndTime)

	// To the same instance by timestamp (MySQL allows it).
	jobID, err := backups.RestorePITR(e.rds, backups.RestorePITROpts{
		Source: backups.Source{InstanceID: src, Type: "timestamp", RestoreTime: ranges[0].StartTime + 1000},
		Target: backups.Target{InstanceID: src},
	})
	require.NoError(t, err)
	assert.NotEmpty(t, jobID)
	e.expectTransient(t, src, StatusRestoring, e.sim.Options().Durations.Restore)

	// To another instance from a backup.
	b, err := backups.Create(e.rds, backups.CreateOpts{InstanceID: src, Name: "pitr-backup"})
	require.NoError(t, err)
	e.clock.Advance(e.sim.Options().Durations.Backup)
	_, err = backups.RestorePITR(e.rds, backups.RestorePITROpts{
		Source: backups.Source{InstanceID: src, Type: "backup", BackupID: b.ID},
		Target: backups.Target{InstanceID: target},
	})
	require.NoError(t, err)
	e.expectTransient(t, target, StatusRestoring, e.sim.Options().Durations.Restore)

	for name, tc := range map[string]struct {
		opts   backups.RestorePITROpts
		status int
		code   string
	}{
		"outside ranges": {backups.RestorePITROpts{Source: backups.Source{InstanceID: src, Type: "timestamp", RestoreTime: t0.UnixMilli()}, Target: backups.Target{InstanceID: src}}, 400, "DBS.200001"},
		"unknown backup": {backups.RestorePITROpts{Source: backups.Source{InstanceID: src, Type: "backup", BackupID: "nope"}, Target: backups.Target{InstanceID: src}}, 404, "DBS.201010"},
		"unknown target": {backups.RestorePITROpts{Source: backups.Source{InstanceID: src, Type: "backup", BackupID: b.ID}, Target: backups.Target{InstanceID: "nope"}}, 404, "DBS.200002"},
		"bad type":       {backups.RestorePITROpts{Source: backups.Source{InstanceID: src, Type: "snapshot"}, Target: backups.Target{InstanceID: src}}, 400, "DBS.200001"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := backups.RestorePITR(e.rds, tc.opts)
			status, code := rdsErrorCode(t, err)
			assert.Equal(t, tc.status, status)
			assert.Equal(t, tc.code, code)
		})
	}
	assert.Equal(t, 6, e.sim.Calls(OpRestorePITR))
}

func TestPITRPostgresOnlyToAnotherInstance(t *testing.T) {
	e := newEnv(t, Options{})
	opts := createOpts("pg-pitr")
	opts.Datastore = &instances.Datastore{Type: "PostgreSQL", Version: "15"}
	opts.FlavorRef = "rds.pg.n1.large.2"
	opts.Port = ""
	src := e.createActive(t, opts)
	e.clock.Advance(time.Minute)

	_, err := backups.RestorePITR(e.rds, backups.RestorePITROpts{
		Source: backups.Source{InstanceID: src, Type: "timestamp", RestoreTime: e.clock.Now().Add(-time.Second).UnixMilli()},
		Target: backups.Target{InstanceID: src},
	})
	status, code := rdsErrorCode(t, err)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "DBS.200086", code)

	mysql := e.createActive(t, createOpts("mysql-target"))
	_, err = backups.RestorePITR(e.rds, backups.RestorePITROpts{
		Source: backups.Source{InstanceID: src, Type: "timestamp", RestoreTime: e.clock.Now().Add(-time.Second).UnixMilli()},
		Target: backups.Target{InstanceID: mysql},
	})
	status, _ = rdsErrorCode(t, err)
	assert.Equal(t, http.StatusBadRequest, status, "engines must match")
}

func TestRestoreToNew(t *testing.T) {
	e := newEnv(t, Options{})
	src := e.createActive(t, ssdOpts("restore-src"))
	b, err := backups.Create(e.rds, backups.CreateOpts{InstanceID: src, Name: "for-new"})
	require.NoError(t, err)
	e.clock.Advance(e.sim.Options().Durations.Backup)

	opts := backups.RestoreToNewOpts{
		Name: "restored-01", Password: "Sim-Passw0rd!", FlavorRef: "rds.mysql.n1.large.2",
		Volume: &instances.Volume{Type: "CLOUDSSD", Size: 100}, AvailabilityZone: "eu-de-02",
		VpcId: SeedVPCID, SubnetId: SeedSubnetID, SecurityGroupId: SeedSecurityGroupID,
		RestorePoint: backups.RestorePoint{InstanceID: src, Type: backups.TypeBackup, BackupID: b.ID},
	}
	res, err := backups.RestoreToNew(e.rds, opts)
	require.NoError(t, err)
	assert.Equal(t, StatusBuild, res.Instance.Status)
	assert.Equal(t, "MySQL", res.Instance.Datastore.Type)
	assert.Equal(t, "8.0", res.Instance.Datastore.Version)
	assert.NotEmpty(t, res.JobId)
	assert.Equal(t, 1, e.sim.Calls(OpRestoreToNew))
	assert.Equal(t, 1, e.sim.Calls(OpCreateInstance), "only the source's create")

	e.clock.Advance(e.sim.Options().Durations.Restore)
	assert.Equal(t, StatusActive, e.getInstance(t, res.Instance.Id).Status)

	opts.Name, opts.Volume = "restored-02", &instances.Volume{Type: "CLOUDSSD", Size: 50}
	_, err = backups.RestoreToNew(e.rds, opts)
	status, code := rdsErrorCode(t, err)
	assert.Equal(t, http.StatusBadRequest, status, "the new volume must be at least the source's")
	assert.Equal(t, "DBS.200001", code)
}
