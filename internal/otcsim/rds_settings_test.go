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

// haOpts is a MySQL primary/standby instance on CLOUDSSD storage.
func haOpts(name string) instances.CreateRdsOpts {
	o := ssdOpts(name)
	o.FlavorRef = "rds.mysql.n1.large.2.ha"
	o.AvailabilityZone = "eu-de-01,eu-de-02"
	o.Ha = &instances.Ha{Mode: "ha", ReplicationMode: "async"}
	return o
}

func TestChangeStorageType(t *testing.T) {
	e := newEnv(t, Options{})
	ha := e.createActive(t, haOpts("ha-storage"))

	jobID, err := instances.ChangeStorageType(e.rds, instances.ChangeStorageTypeOpts{InstanceId: ha, VolumeCode: "rds.mysql.volume.essd.ha"})
	require.NoError(t, err)
	assert.NotEmpty(t, *jobID)
	in := e.getInstance(t, ha)
	assert.Equal(t, StatusModifying, in.Status, "OTC shows the change while it runs")
	assert.Equal(t, "CLOUDSSD", in.Volume.Type, "the old type until it is done")
	_, err = instances.ChangeStorageType(e.rds, instances.ChangeStorageTypeOpts{InstanceId: ha, VolumeCode: "rds.mysql.volume.essd.ha"})
	status, code := rdsErrorCode(t, err)
	assert.Equal(t, http.StatusConflict, status, "busy while it runs")
	assert.Equal(t, "DBS.200019", code)
	e.clock.Advance(e.sim.Options().Durations.Enlarge)
	in = e.getInstance(t, ha)
	assert.Equal(t, StatusActive, in.Status)
	assert.Equal(t, "ESSD", in.Volume.Type)
	assert.Equal(t, 2, e.sim.Calls(OpChangeStorageType))
	assert.Zero(t, e.sim.Calls(OpInstanceAction), "the change_volume body names its operation")

	single := e.createActive(t, ssdOpts("single-storage"))
	common := e.createActive(t, createOpts("common-storage"))
	refused := map[string]struct {
		id, code string
	}{
		"a single MySQL instance does not move to ESSD": {single, "rds.mysql.volume.essd"},
		"the code of another class":                     {single, "rds.mysql.volume.cloudssd.ha"},
		"the code of another engine":                    {ha, "rds.pg.volume.cloudssd.ha"},
		"COMMON moves nowhere":                          {common, "rds.mysql.volume.cloudssd"},
		"no such code":                                  {single, "essd"},
	}
	for name, tc := range refused {
		t.Run(name, func(t *testing.T) {
			_, err := instances.ChangeStorageType(e.rds, instances.ChangeStorageTypeOpts{InstanceId: tc.id, VolumeCode: tc.code})
			status, code := rdsErrorCode(t, err)
			assert.Equal(t, http.StatusBadRequest, status)
			assert.Equal(t, "DBS.200026", code)
		})
	}
}

func TestChangeFailoverMode(t *testing.T) {
	e := newEnv(t, Options{})
	ha := e.createActive(t, haOpts("ha-mode"))

	res, err := instances.ChangeFailoverMode(e.rds, instances.ChangeFailoverModeOpts{InstanceId: ha, Mode: "semisync"})
	require.NoError(t, err)
	assert.Equal(t, ha, res.InstanceId)
	assert.Equal(t, "semisync", res.ReplicationMode)
	assert.NotEmpty(t, res.WorkflowId, "a workflow id, not a job_id")
	in := e.getInstance(t, ha)
	assert.Equal(t, StatusActive, in.Status, "the instance stays ACTIVE")
	assert.Equal(t, "async", in.Ha.ReplicationMode, "the old mode until the workflow ends")
	_, err = instances.ChangeFailoverMode(e.rds, instances.ChangeFailoverModeOpts{InstanceId: ha, Mode: "semisync"})
	status, code := rdsErrorCode(t, err)
	assert.Equal(t, http.StatusConflict, status, "busy while the workflow runs")
	assert.Equal(t, "DBS.200019", code)
	e.clock.Advance(e.sim.Options().Durations.Restart)
	assert.Equal(t, "semisync", e.getInstance(t, ha).Ha.ReplicationMode)

	single := e.createActive(t, createOpts("single-mode"))
	for name, tc := range map[string]struct{ id, mode string }{
		"a single instance": {single, "semisync"},
		"a PostgreSQL mode": {ha, "sync"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := instances.ChangeFailoverMode(e.rds, instances.ChangeFailoverModeOpts{InstanceId: tc.id, Mode: tc.mode})
			status, code := rdsErrorCode(t, err)
			assert.Equal(t, http.StatusBadRequest, status)
			assert.Equal(t, "DBS.200001", code)
		})
	}
}

func TestChangeOpsWindow(t *testing.T) {
	e := newEnv(t, Options{})
	id := e.createActive(t, createOpts("ops-window"))
	assert.Equal(t, "02:00-06:00", e.getInstance(t, id).MaintenanceWindow, "OTC's default")

	require.NoError(t, instances.ChangeOpsWindow(e.rds, instances.ChangeOpsWindowOpts{InstanceId: id, StartTime: "22:00", EndTime: "02:00"}))
	assert.Equal(t, "22:00-02:00", e.getInstance(t, id).MaintenanceWindow, "at once")
	assert.Equal(t, 1, e.sim.Calls(OpChangeOpsWindow))

	err := instances.ChangeOpsWindow(e.rds, instances.ChangeOpsWindowOpts{InstanceId: id, StartTime: "22:00", EndTime: "00:00"})
	status, code := rdsErrorCode(t, err)
	assert.Equal(t, http.StatusBadRequest, status, "the window must be four hours long")
	assert.Equal(t, "DBS.200001", code)
}

func TestStopStartRules(t *testing.T) {
	e := newEnv(t, Options{})
	id := e.createActive(t, createOpts("stop-me"))
	restart := e.sim.Options().Durations.Restart

	_, err := instances.StopInstance(e.rds, id)
	require.NoError(t, err)
	assert.Equal(t, StatusActive, e.getInstance(t, id).Status, "ACTIVE while the stop runs")
	e.clock.Advance(restart)
	assert.Equal(t, StatusShutdown, e.getInstance(t, id).Status)

	t.Run("no backup of a stopped instance", func(t *testing.T) {
		_, err := backups.Create(e.rds, backups.CreateOpts{InstanceID: id, Name: "while-stopped"})
		status, _ := rdsErrorCode(t, err)
		assert.Equal(t, http.StatusConflict, status)
	})

	// Seven days later OTC starts it in its maintenance window (02:00-06:00 UTC). The stop is
	// moved back in time: a week of the clock would outlive the test's token.
	e.sim.mu.Lock()
	e.sim.instances[id].stoppedAt = e.clock.Now().Add(-stoppedFor + time.Hour)
	e.sim.mu.Unlock()
	assert.Equal(t, StatusShutdown, e.getInstance(t, id).Status, "not before seven days")
	e.clock.Advance(time.Hour)
	now := e.clock.Now().UTC()
	next := time.Date(now.Year(), now.Month(), now.Day(), 2, 0, 0, 0, time.UTC)
	for next.Before(now.Add(time.Hour)) {
		next = next.Add(24 * time.Hour)
	}
	e.clock.Advance(next.Sub(now))
	e.getInstance(t, id) // the start begins in the window
	e.clock.Advance(restart)
	assert.Equal(t, StatusActive, e.getInstance(t, id).Status, "started in the first maintenance window after seven days")

	t.Run("SQL Server cannot be stopped", func(t *testing.T) {
		o := createOpts("mssql-stop")
		o.Datastore = &instances.Datastore{Type: "SQLServer", Version: "2019_SE"}
		o.FlavorRef, o.Port = "rds.mssql.se.s3.large.4", ""
		mssql := e.createActive(t, o)
		_, err := instances.StopInstance(e.rds, mssql)
		status, code := rdsErrorCode(t, err)
		assert.Equal(t, http.StatusBadRequest, status)
		assert.Equal(t, "DBS.200001", code)
	})
}
