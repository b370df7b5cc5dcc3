package otcsim

import (
	"net/http"
	"testing"
	"time"

	golangsdk "github.com/opentelekomcloud/gophertelekomcloud"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/instances"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/security"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ssdOpts is a single MySQL instance on CLOUDSSD storage with 100 GB.
func ssdOpts(name string) instances.CreateRdsOpts {
	o := createOpts(name)
	o.FlavorRef = "rds.mysql.n1.large.2"
	o.Volume = &instances.Volume{Type: "CLOUDSSD", Size: 100}
	return o
}

// expectTransient checks the status while an operation runs and after it ended.
func (e *env) expectTransient(t *testing.T, id, during string, d time.Duration) {
	t.Helper()
	assert.Equal(t, during, e.getInstance(t, id).Status)
	e.clock.Advance(d)
	assert.Equal(t, StatusActive, e.getInstance(t, id).Status)
}

func TestResize(t *testing.T) {
	e := newEnv(t, Options{})
	id := e.createActive(t, ssdOpts("resize-me"))

	jobID, err := instances.Resize(e.rds, instances.ResizeOpts{InstanceId: id, SpecCode: "rds.mysql.n1.xlarge.4"})
	require.NoError(t, err)
	assert.NotEmpty(t, *jobID)
	in := e.getInstance(t, id)
	assert.Equal(t, StatusModifying, in.Status)
	assert.Equal(t, "rds.mysql.n1.large.2", in.FlavorRef, "the old flavor shows while the change is pending")

	_, err = instances.Resize(e.rds, instances.ResizeOpts{InstanceId: id, SpecCode: "rds.mysql.n1.xlarge.2"})
	status, code := rdsErrorCode(t, err)
	assert.Equal(t, http.StatusConflict, status)
	assert.Equal(t, "DBS.200019", code)

	e.clock.Advance(e.sim.Options().Durations.Resize)
	in = e.getInstance(t, id)
	assert.Equal(t, StatusActive, in.Status)
	assert.Equal(t, "rds.mysql.n1.xlarge.4", in.FlavorRef)
	assert.Equal(t, "4", in.Cpu)
	assert.Equal(t, "16", in.Mem)
	assert.Equal(t, 2, e.sim.Calls(OpResize))
	assert.Zero(t, e.sim.Calls(OpInstanceAction))

	cases := map[string]struct {
		spec, code string
	}{
		"same flavor":  {"rds.mysql.n1.xlarge.4", "DBS.200001"},
		"ha flavor":    {"rds.mysql.n1.large.2.ha", "DBS.200053"},
		"other engine": {"rds.pg.n1.large.2", "DBS.200053"},
		"unknown":      {"rds.mysql.n9.large.2", "DBS.200053"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := instances.Resize(e.rds, instances.ResizeOpts{InstanceId: id, SpecCode: tc.spec})
			status, code := rdsErrorCode(t, err)
			assert.Equal(t, http.StatusBadRequest, status)
			assert.Equal(t, tc.code, code)
		})
	}

	// 4xlarge is missing only in eu-de-03; 2xlarge.4 is sold out there.
	_, err = instances.Resize(e.rds, instances.ResizeOpts{InstanceId: id, SpecCode: "rds.mysql.n1.4xlarge.2"})
	require.NoError(t, err)
	e.clock.Advance(e.sim.Options().Durations.Resize)
	opts := ssdOpts("resize-in-03")
	opts.AvailabilityZone = "eu-de-03"
	in03 := e.createActive(t, opts)
	_, err = instances.Resize(e.rds, instances.ResizeOpts{InstanceId: in03, SpecCode: "rds.mysql.n1.2xlarge.4"})
	status, code = rdsErrorCode(t, err)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "DBS.280450", code)

	_, err = instances.Resize(e.rds, instances.ResizeOpts{InstanceId: "nope", SpecCode: "rds.mysql.n1.large.2"})
	status, code = rdsErrorCode(t, err)
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, "DBS.200002", code)
}

func TestEnlargeVolume(t *testing.T) {
	e := newEnv(t, Options{})
	id := e.createActive(t, ssdOpts("enlarge-me"))

	for name, tc := range map[string]struct {
		size int
		code string
	}{
		"shrink":        {50, "DBS.200306"},
		"not larger":    {100, "DBS.200306"},
		"only +5":       {105, "DBS.200306"},
		"not a tenner":  {115, "DBS.200027"},
		"above maximum": {4010, "DBS.200023"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := instances.EnlargeVolume(e.rds, instances.EnlargeVolumeRdsOpts{InstanceId: id, Size: tc.size})
			status, code := rdsErrorCode(t, err)
			assert.Equal(t, http.StatusBadRequest, status)
			assert.Equal(t, tc.code, code)
		})
	}

	jobID, err := instances.EnlargeVolume(e.rds, instances.EnlargeVolumeRdsOpts{InstanceId: id, Size: 200})
	require.NoError(t, err)
	assert.Equal(t, 100, e.getInstance(t, id).Volume.Size)
	e.expectTransient(t, id, StatusModifying, e.sim.Options().Durations.Enlarge)
	assert.Equal(t, 200, e.getInstance(t, id).Volume.Size)

	var raw struct {
		Job struct {
			Status   string         `json:"status"`
			Entities map[string]any `json:"entities"`
		} `json:"job"`
	}
	_, err = e.rds.Get(e.rds.ServiceURL("jobs")+"?id="+*jobID, &raw, nil)
	require.NoError(t, err)
	assert.Equal(t, JobCompleted, raw.Job.Status)
	assert.Equal(t, map[string]any{"type": "CLOUDSSD", "original_size": "100", "target_size": "200"}, raw.Job.Entities["volume"])

	// STORAGE FULL instances may still be enlarged.
	e.sim.SetInstanceStatus(id, StatusStorageFull)
	_, err = instances.EnlargeVolume(e.rds, instances.EnlargeVolumeRdsOpts{InstanceId: id, Size: 300})
	require.NoError(t, err)
	e.expectTransient(t, id, StatusModifying, e.sim.Options().Durations.Enlarge)
	assert.Equal(t, 7, e.sim.Calls(OpEnlargeVolume), "refused requests count too")
}

func TestRestart(t *testing.T) {
	e := newEnv(t, Options{})
	id := e.createActive(t, createOpts("restart-me"))
	jobID, err := instances.Restart(e.rds, instances.RestartOpts{InstanceId: id})
	require.NoError(t, err)
	assert.NotEmpty(t, *jobID)
	e.expectTransient(t, id, StatusRebooting, e.sim.Options().Durations.Restart)
	assert.Equal(t, 1, e.sim.Calls(OpRestart))

	e.sim.SetInstanceStatus(id, StatusFailed)
	_, err = instances.Restart(e.rds, instances.RestartOpts{InstanceId: id})
	status, code := rdsErrorCode(t, err)
	assert.Equal(t, http.StatusConflict, status)
	assert.Equal(t, "DBS.200019", code)
}

func TestSingleToHA(t *testing.T) {
	e := newEnv(t, Options{})
	id := e.createActive(t, createOpts("grow-ha"))

	_, err := instances.SingleToHa(e.rds, instances.SingleToHaOpts{InstanceId: id, AzCodeNewNode: "eu-nl-01"})
	status, code := rdsErrorCode(t, err)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "DBS.200025", code)

	_, err = instances.SingleToHa(e.rds, instances.SingleToHaOpts{InstanceId: id, AzCodeNewNode: "eu-de-02"})
	require.NoError(t, err)
	e.expectTransient(t, id, StatusModifyingInstanceType, e.sim.Options().Durations.SingleToHA)

	in := e.getInstance(t, id)
	assert.Equal(t, TypeHa, in.Type)
	assert.Equal(t, "rds.mysql.c2.medium.ha", in.FlavorRef)
	assert.Equal(t, "async", in.Ha.ReplicationMode)
	require.Len(t, in.Nodes, 2)
	assert.Equal(t, "slave", in.Nodes[1].Role)
	assert.Equal(t, "eu-de-02", in.Nodes[1].AvailabilityZone)

	_, err = instances.SingleToHa(e.rds, instances.SingleToHaOpts{InstanceId: id, AzCodeNewNode: "eu-de-03"})
	status, code = rdsErrorCode(t, err)
	assert.Equal(t, http.StatusBadRequest, status, "already HA")
	assert.Equal(t, "DBS.200086", code)
}

func TestMinorUpgradeBothPaths(t *testing.T) {
	e := newEnv(t, Options{})
	sdkPath := e.createActive(t, createOpts("upgrade-sdk"))
	docPath := e.createActive(t, createOpts("upgrade-doc"))

	// The SDK's path: POST …/action/db-upgrade {"delay":…}.
	_, err := instances.UpgradeDbVersion(e.rds, instances.UpgradeDbVersionOpts{InstanceId: sdkPath, Delay: true})
	require.NoError(t, err)
	// The documented path: POST …/db-upgrade {"is_delayed":false}.
	var job instances.JobId
	_, err = e.rds.Post(e.rds.ServiceURL("instances", docPath, "db-upgrade"), map[string]any{"is_delayed": false}, &job,
		&golangsdk.RequestOpts{OkCodes: []int{202}})
	require.NoError(t, err)
	assert.NotEmpty(t, job.JobId)

	assert.Equal(t, StatusModifying, e.getInstance(t, sdkPath).Status)
	e.clock.Advance(e.sim.Options().Durations.Upgrade)
	for _, id := range []string{sdkPath, docPath} {
		in := e.getInstance(t, id)
		assert.Equal(t, StatusActive, in.Status)
		assert.Equal(t, "8.0.32", in.DataStore.CompleteVersion)
	}
	assert.Equal(t, 2, e.sim.Calls(OpUpgradeDbVersion))

	_, err = instances.UpgradeDbVersion(e.rds, instances.UpgradeDbVersionOpts{InstanceId: sdkPath})
	status, code := rdsErrorCode(t, err)
	assert.Equal(t, http.StatusBadRequest, status, "already on the latest minor version")
	assert.Equal(t, "DBS.200086", code)
}

func TestStopAndStart(t *testing.T) {
	e := newEnv(t, Options{})
	id := e.createActive(t, createOpts("stop-start"))

	_, err := instances.StartupInstance(e.rds, id)
	status, _ := rdsErrorCode(t, err)
	assert.Equal(t, http.StatusBadRequest, status, "an active instance cannot be started")

	_, err = instances.StopInstance(e.rds, id)
	require.NoError(t, err)
	e.clock.Advance(e.sim.Options().Durations.Restart)
	assert.Equal(t, StatusShutdown, e.getInstance(t, id).Status)

	_, err = instances.StartupInstance(e.rds, id)
	require.NoError(t, err)
	e.clock.Advance(e.sim.Options().Durations.Restart)
	assert.Equal(t, StatusActive, e.getInstance(t, id).Status)
}

func TestUpdatePort(t *testing.T) {
	e := newEnv(t, Options{})
	id := e.createActive(t, createOpts("port-me"))
	workflow, err := security.UpdatePort(e.rds, security.UpdatePortOpts{InstanceId: id, Port: 3307})
	require.NoError(t, err)
	assert.NotEmpty(t, *workflow)
	e.expectTransient(t, id, StatusModifyingPort, e.sim.Options().Durations.Restart)
	assert.Equal(t, 3307, e.getInstance(t, id).Port)

	_, err = security.UpdatePort(e.rds, security.UpdatePortOpts{InstanceId: id, Port: 33071})
	status, code := rdsErrorCode(t, err)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "DBS.200001", code)
}

func TestAutoScaling(t *testing.T) {
	e := newEnv(t, Options{})
	id := e.createActive(t, ssdOpts("autoscale-me"))

	policy, err := instances.GetAutoScaling(e.rds, id)
	require.NoError(t, err)
	assert.False(t, policy.SwitchOption)

	limit, threshold := 130, 15
	require.NoError(t, instances.ManageAutoScaling(e.rds, id, instances.ScalingOpts{
		SwitchOption: true, LimitSize: &limit, TriggerThreshold: &threshold,
	}))
	policy, err = instances.GetAutoScaling(e.rds, id)
	require.NoError(t, err)
	assert.True(t, policy.SwitchOption)
	assert.Equal(t, 130, *policy.LimitSize)
	assert.Equal(t, 15, *policy.TriggerThreshold)

	bad := 12
	err = instances.ManageAutoScaling(e.rds, id, instances.ScalingOpts{SwitchOption: true, TriggerThreshold: &bad})
	status, _ := rdsErrorCode(t, err)
	assert.Equal(t, http.StatusBadRequest, status)

	// Less free space than the threshold: grow by 15% (rounded up to 10 GB), then up to the limit.
	e.sim.SetMetric(id, "rds039_disk_util", 90)
	assert.Equal(t, StatusModifying, e.getInstance(t, id).Status)
	e.clock.Advance(e.sim.Options().Durations.Enlarge)
	assert.Equal(t, 120, e.getInstance(t, id).Volume.Size)
	e.sim.SetMetric(id, "rds039_disk_util", 95)
	e.clock.Advance(e.sim.Options().Durations.Enlarge)
	in := e.getInstance(t, id)
	assert.Equal(t, 130, in.Volume.Size, "capped at limit_size")
	assert.Equal(t, StatusActive, in.Status)
	assert.Zero(t, e.sim.Calls(OpEnlargeVolume), "autoscaling is not a client call")

	// COMMON storage cannot autoscale.
	common := e.createActive(t, createOpts("common-disk"))
	err = instances.ManageAutoScaling(e.rds, common, instances.ScalingOpts{SwitchOption: true})
	status, code := rdsErrorCode(t, err)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "DBS.200026", code)
}

func TestActionMalformedBodies(t *testing.T) {
	e := newEnv(t, Options{})
	id := e.createActive(t, createOpts("actions-01"))
	for name, body := range map[string]any{
		"two actions": map[string]any{"restart": map[string]any{}, "enlarge_volume": map[string]any{"size": 50}},
		"no action":   map[string]any{"reboot": map[string]any{}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := e.rds.Post(e.rds.ServiceURL("instances", id, "action"), body, nil, &golangsdk.RequestOpts{OkCodes: []int{202}})
			status, code := rdsErrorCode(t, err)
			assert.Equal(t, http.StatusBadRequest, status)
			assert.Equal(t, "DBS.200001", code)
		})
	}
	assert.Equal(t, 2, e.sim.Calls(OpInstanceAction))
}
