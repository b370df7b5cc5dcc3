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

func TestBackupLifecycle(t *testing.T) {
	e := newEnv(t, Options{})
	id := e.createActive(t, createOpts("backed-up-01"))

	// OTC takes an automated backup right after creation.
	list, err := backups.List(e.rds, backups.ListOpts{InstanceID: id})
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "auto", list[0].Type)
	assert.Equal(t, backups.StatusCompleted, list[0].Status)

	b, err := backups.Create(e.rds, backups.CreateOpts{InstanceID: id, Name: "manual-1", Description: "before upgrade"})
	require.NoError(t, err)
	assert.Equal(t, backups.StatusBuilding, b.Status)
	assert.Equal(t, "manual", b.Type)
	assert.Regexp(t, `^[0-9a-f]{32}br01$`, b.ID)
	assert.Equal(t, StatusBackingUp, e.getInstance(t, id).Status)

	_, err = backups.Create(e.rds, backups.CreateOpts{InstanceID: id, Name: "manual-2"})
	status, code := rdsErrorCode(t, err)
	assert.Equal(t, http.StatusConflict, status)
	assert.Equal(t, "DBS.201205", code)

	_, err = instances.Delete(e.rds, id)
	status, code = rdsErrorCode(t, err)
	assert.Equal(t, http.StatusConflict, status, "no delete while backing up")
	assert.Equal(t, "DBS.200019", code)

	e.clock.Advance(e.sim.Options().Durations.Backup)
	got, err := backups.List(e.rds, backups.ListOpts{InstanceID: id, BackupID: b.ID})
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, backups.StatusCompleted, got[0].Status)
	assert.Positive(t, got[0].Size)
	assert.Equal(t, "MySQL", got[0].Datastore.Type)
	assert.Equal(t, "2026-05-01T10:00:20+0000", got[0].BeginTime)
	assert.Equal(t, "2026-05-01T10:00:25+0000", got[0].EndTime)
	assert.Equal(t, StatusActive, e.getInstance(t, id).Status)

	_, err = backups.Create(e.rds, backups.CreateOpts{InstanceID: id, Name: "manual-1"})
	status, code = rdsErrorCode(t, err)
	assert.Equal(t, http.StatusConflict, status, "backup names are unique")
	assert.Equal(t, "DBS.201204", code)

	all, err := backups.List(e.rds, backups.ListOpts{InstanceID: id})
	require.NoError(t, err)
	assert.Len(t, all, 2)
	manual, err := backups.List(e.rds, backups.ListOpts{InstanceID: id, BackupType: "manual"})
	require.NoError(t, err)
	assert.Len(t, manual, 1)
	assert.Equal(t, 3, e.sim.Calls(OpCreateBackup), "refused calls count too")
}

func TestFailNextBackup(t *testing.T) {
	e := newEnv(t, Options{})
	id := e.createActive(t, createOpts("flaky-backup"))
	e.sim.FailNextBackup(id)

	b, err := backups.Create(e.rds, backups.CreateOpts{InstanceID: id, Name: "will-fail"})
	require.NoError(t, err)
	e.clock.Advance(e.sim.Options().Durations.Backup)
	got, err := backups.List(e.rds, backups.ListOpts{BackupID: b.ID})
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, backups.StatusFailed, got[0].Status)
	assert.Equal(t, StatusActive, e.getInstance(t, id).Status)

	// Only the next one fails.
	b, err = backups.Create(e.rds, backups.CreateOpts{InstanceID: id, Name: "will-work"})
	require.NoError(t, err)
	e.clock.Advance(e.sim.Options().Durations.Backup)
	got, err = backups.List(e.rds, backups.ListOpts{BackupID: b.ID})
	require.NoError(t, err)
	assert.Equal(t, backups.StatusCompleted, got[0].Status)
}

func TestBackupErrors(t *testing.T) {
	e := newEnv(t, Options{})
	id, _ := e.create(t, createOpts("building-01"))

	cases := map[string]struct {
		opts   backups.CreateOpts
		status int
		code   string
	}{
		"unknown instance": {backups.CreateOpts{InstanceID: "nope", Name: "bk-1"}, 404, "DBS.200002"},
		"building":         {backups.CreateOpts{InstanceID: id, Name: "bk-1"}, 409, "DBS.200019"},
		"bad name":         {backups.CreateOpts{InstanceID: id, Name: "x"}, 400, "DBS.200001"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := backups.Create(e.rds, tc.opts)
			status, code := rdsErrorCode(t, err)
			assert.Equal(t, tc.status, status)
			assert.Equal(t, tc.code, code)
		})
	}
}

func TestBackupsSurviveInstanceDeletion(t *testing.T) {
	e := newEnv(t, Options{})
	id := e.createActive(t, createOpts("short-lived"))
	b, err := backups.Create(e.rds, backups.CreateOpts{InstanceID: id, Name: "keep-me"})
	require.NoError(t, err)
	e.clock.Advance(e.sim.Options().Durations.Backup)
	_, err = instances.Delete(e.rds, id)
	require.NoError(t, err)
	e.clock.Advance(e.sim.Options().Durations.Delete + time.Second)

	got, err := backups.List(e.rds, backups.ListOpts{InstanceID: id})
	require.NoError(t, err)
	require.Len(t, got, 1, "manual backups outlive their instance, automated ones do not")
	assert.Equal(t, b.ID, got[0].ID)
}
