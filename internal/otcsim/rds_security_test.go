package otcsim

import (
	"net/http"
	"testing"

	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/configurations"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/instances"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/security"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSetSecurityGroup: the SDK's SetSecurityGroup gets a workflow id; the instance stays ACTIVE
// but takes no other change until the listing shows the new group.
func TestSetSecurityGroup(t *testing.T) {
	e := newEnv(t, Options{})
	id := e.createActive(t, createOpts("move-me"))
	group := e.sim.AddSecurityGroup("web")

	workflow, err := security.SetSecurityGroup(e.rds, security.SetSecurityGroupOpts{InstanceId: id, SecurityGroupId: group})
	require.NoError(t, err)
	require.NotEmpty(t, *workflow)
	in := e.getInstance(t, id)
	assert.Equal(t, StatusActive, in.Status, "OTC keeps the instance ACTIVE")
	assert.Equal(t, SeedSecurityGroupID, in.SecurityGroupId, "the old group until the job completes")
	assert.Equal(t, 1, e.sim.Calls(OpSetSecurityGroup))

	_, err = security.UpdatePort(e.rds, security.UpdatePortOpts{InstanceId: id, Port: 3307})
	status, code := rdsErrorCode(t, err)
	assert.Equal(t, http.StatusConflict, status, "busy while the group changes")
	assert.Equal(t, "DBS.200019", code)

	job, err := e.getJob(t, *workflow)
	if err == nil { // NOTE: OTC knows a job only a moment after it started it
		assert.Equal(t, JobRunning, job.Job.Status)
	}
	e.clock.Advance(e.sim.Options().Durations.Restart)
	assert.Equal(t, group, e.getInstance(t, id).SecurityGroupId)
	job, err = e.getJob(t, *workflow)
	require.NoError(t, err)
	assert.Equal(t, JobCompleted, job.Job.Status)

	_, err = security.SetSecurityGroup(e.rds, security.SetSecurityGroupOpts{InstanceId: id, SecurityGroupId: "no-such-group"})
	status, code = rdsErrorCode(t, err)
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, "DBS.200050", code)
}

// TestSwitchSSL: MySQL only; the instance restarts (REBOOTING) and then reports enable_ssl.
func TestSwitchSSL(t *testing.T) {
	e := newEnv(t, Options{})
	id := e.createActive(t, createOpts("ssl-me"))
	require.NotNil(t, e.getInstance(t, id).EnableSSL)
	assert.False(t, *e.getInstance(t, id).EnableSSL)

	require.NoError(t, security.SwitchSsl(e.rds, security.SwitchSslOpts{InstanceId: id, SslOption: true}))
	assert.Equal(t, 1, e.sim.Calls(OpSwitchSSL))
	err := security.SwitchSsl(e.rds, security.SwitchSslOpts{InstanceId: id, SslOption: false})
	status, code := rdsErrorCode(t, err)
	assert.Equal(t, http.StatusConflict, status, "busy while it switches")
	assert.Equal(t, "DBS.200019", code)
	e.expectTransient(t, id, StatusRebooting, e.sim.Options().Durations.Restart)
	assert.True(t, *e.getInstance(t, id).EnableSSL)

	pg := createOpts("ssl-pg")
	pg.Datastore = &instances.Datastore{Type: "PostgreSQL", Version: "16"}
	pg.FlavorRef, pg.Port = "rds.pg.c2.medium", "5432"
	pgID := e.createActive(t, pg)
	err = security.SwitchSsl(e.rds, security.SwitchSslOpts{InstanceId: pgID, SslOption: true})
	status, code = rdsErrorCode(t, err)
	assert.Equal(t, http.StatusBadRequest, status, "MySQL only")
	assert.Equal(t, "DBS.200080", code)
}

// TestCreateOnlyOptions: time_zone, unchangeable_param and disk_encryption_id are taken at create
// and reported by the listing and the instance's parameters; malformed ones are refused.
func TestCreateOnlyOptions(t *testing.T) {
	e := newEnv(t, Options{})
	const key = "2b5a4c3e-8f0a-4d7e-9c1b-0e6f5a4b3c2d"
	opts := createOpts("tz-me")
	opts.TimeZone, opts.DiskEncryptionId = "UTC+08:00", key
	opts.UnchangeableParam = &instances.Param{LowerCaseTableNames: "0"}
	id := e.createActive(t, opts)
	in := e.getInstance(t, id)
	assert.Equal(t, "UTC+08:00", in.TimeZone)
	assert.Equal(t, key, in.DiskEncryptionId)
	cfg, err := configurations.GetForInstance(e.rds, id)
	require.NoError(t, err)
	values := map[string]string{}
	for _, p := range cfg.Parameters {
		values[p.Name] = p.Value
	}
	assert.Equal(t, "0", values["lower_case_table_names"])

	for name, edit := range map[string]func(*instances.CreateRdsOpts){
		"zone name":     func(o *instances.CreateRdsOpts) { o.TimeZone = "Europe/Berlin" },
		"lower case 2":  func(o *instances.CreateRdsOpts) { o.UnchangeableParam = &instances.Param{LowerCaseTableNames: "2"} },
		"not a KMS key": func(o *instances.CreateRdsOpts) { o.DiskEncryptionId = "my-key" },
	} {
		o := createOpts("bad-" + name[:3])
		edit(&o)
		_, err := instances.Create(e.rds, o)
		status, _ := rdsErrorCode(t, err)
		assert.Equal(t, http.StatusBadRequest, status, name)
	}
}
