package otc_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/otc"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// addActive puts an ACTIVE single MySQL 8.0 instance in place, without counted calls.
func (e *simEnv) addActive(t *testing.T, change func(*otcsim.InstanceSpec)) string {
	t.Helper()
	spec := otcsim.InstanceSpec{
		Name: "rds-day2", Engine: "MySQL", Version: "8.0", Flavor: "rds.mysql.n1.large.2",
		VolumeType: "CLOUDSSD", VolumeSize: 40, AZs: []string{"eu-de-01"},
		VpcID: otcsim.SeedVPCID, SubnetID: otcsim.SeedSubnetID, SecurityGroupID: otcsim.SeedSecurityGroupID,
	}
	if change != nil {
		change(&spec)
	}
	id, err := e.sim.AddInstance(spec)
	require.NoError(t, err)
	return id
}

// TestSimDay2Operations drives each long day-2 operation through the SDK: it is accepted with a
// job, shows its transient status, ends with the new state, and a second one during the first is
// refused as busy.
func TestSimDay2Operations(t *testing.T) {
	d := otcsim.DefaultDurations()
	cases := map[string]struct {
		reason   string
		instance func(*otcsim.InstanceSpec)
		issue    func(c *otc.Client, id string) (string, error)
		simOp    string
		during   string
		wait     time.Duration
		check    func(t *testing.T, in *cloud.Instance)
	}{
		"resize": {
			reason: "the flavor changes after MODIFYING",
			issue: func(c *otc.Client, id string) (string, error) {
				return c.ResizeFlavor(ctxT(t), id, "rds.mysql.n1.xlarge.2")
			},
			simOp: otcsim.OpResize, during: cloud.StatusModifying, wait: d.Resize,
			check: func(t *testing.T, in *cloud.Instance) { assert.Equal(t, "rds.mysql.n1.xlarge.2", in.Flavor) },
		},
		"enlarge volume": {
			reason: "the size is the new total",
			issue: func(c *otc.Client, id string) (string, error) {
				return c.EnlargeVolume(ctxT(t), id, 60)
			},
			simOp: otcsim.OpEnlargeVolume, during: cloud.StatusModifying, wait: d.Enlarge,
			check: func(t *testing.T, in *cloud.Instance) { assert.Equal(t, 60, in.Volume.Size) },
		},
		"restart": {
			reason: "REBOOTING, then ACTIVE",
			issue: func(c *otc.Client, id string) (string, error) {
				return c.RestartInstance(ctxT(t), id)
			},
			simOp: otcsim.OpRestart, during: cloud.StatusRebooting, wait: d.Restart,
		},
		"minor upgrade": {
			reason: "the newest minor version of the major",
			issue: func(c *otc.Client, id string) (string, error) {
				return c.UpgradeMinorVersion(ctxT(t), id)
			},
			simOp: otcsim.OpUpgradeDbVersion, during: cloud.StatusModifying, wait: d.Upgrade,
			check: func(t *testing.T, in *cloud.Instance) { assert.Equal(t, "8.0.32", in.CompleteVersion) },
		},
		"single to HA": {
			reason: "a standby in the named AZ and the .ha flavor",
			issue: func(c *otc.Client, id string) (string, error) {
				return c.SingleToHA(ctxT(t), id, "eu-de-02", secret.Value{})
			},
			simOp: otcsim.OpSingleToHa, during: cloud.StatusModifyingInstanceType, wait: d.SingleToHA,
			check: func(t *testing.T, in *cloud.Instance) {
				assert.Equal(t, "Ha", in.Type)
				assert.Equal(t, "rds.mysql.n1.large.2.ha", in.Flavor)
				require.Len(t, in.Nodes, 2)
				assert.Equal(t, "eu-de-02", in.Nodes[1].AvailabilityZone)
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := newSimEnv(t)
			id := e.addActive(t, tc.instance)
			jobID, err := tc.issue(e.c, id)
			require.NoError(t, err, tc.reason)
			assert.NotEmpty(t, jobID)
			assert.Equal(t, 1, e.sim.Calls(tc.simOp))

			in, err := e.c.GetInstance(ctxT(t), id)
			require.NoError(t, err)
			assert.Equal(t, tc.during, in.Status)

			_, err = tc.issue(e.c, id)
			ce := requireKind(t, cloud.KindBusy, err)
			assert.Equal(t, "DBS.200019", ce.Code)

			e.clock.Advance(tc.wait + time.Second)
			in, err = e.c.GetInstance(ctxT(t), id)
			require.NoError(t, err)
			assert.Equal(t, cloud.StatusActive, in.Status)
			if tc.check != nil {
				tc.check(t, in)
			}
			job, err := e.c.GetJob(ctxT(t), jobID)
			require.NoError(t, err)
			assert.Equal(t, cloud.JobCompleted, job.Status)
		})
	}
}

func TestSimDay2Refusals(t *testing.T) {
	e := newSimEnv(t)
	ctx := ctxT(t)
	id := e.addActive(t, nil)

	_, err := e.c.ResizeFlavor(ctx, id, "rds.mysql.n1.2xlarge.4.ha")
	ce := requireKind(t, cloud.KindInvalid, err)
	assert.Equal(t, "DBS.200053", ce.Code, "an HA flavor for a single instance")

	_, err = e.c.EnlargeVolume(ctx, id, 45)
	ce = requireKind(t, cloud.KindInvalid, err)
	assert.Equal(t, "DBS.200306", ce.Code, "less than 10 GB more")

	_, err = e.c.ResizeFlavor(ctx, "", "rds.mysql.n1.xlarge.2")
	requireKind(t, cloud.KindInvalid, err)
}

func TestSimBackupPolicy(t *testing.T) {
	e := newSimEnv(t)
	ctx := ctxT(t)
	id := e.addActive(t, nil)
	before, err := e.c.GetInstance(ctx, id)
	require.NoError(t, err)

	want := cloud.BackupStrategy{StartTime: "03:15-04:15", KeepDays: 30}
	require.NoError(t, e.c.UpdateBackupPolicy(ctx, id, want))
	in, err := e.c.GetInstance(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, want, in.BackupStrategy)
	assert.NotEqual(t, before.BackupStrategy, in.BackupStrategy)
	assert.Equal(t, 1, e.sim.Calls(otcsim.OpShowBackupPolicy), "the weekly cycle is read first")
	assert.Equal(t, 1, e.sim.Calls(otcsim.OpUpdateBackupPolicy))
}

func TestSimTags(t *testing.T) {
	e := newSimEnv(t)
	ctx := ctxT(t)
	id := e.addActive(t, func(s *otcsim.InstanceSpec) { s.Tags = map[string]string{"owner": "someone"} })

	require.NoError(t, e.c.SetTags(ctx, id, map[string]string{"team": "a", "env": "prod"}))
	in, err := e.c.GetInstance(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"owner": "someone", "team": "a", "env": "prod"}, in.Tags)

	require.NoError(t, e.c.SetTags(ctx, id, map[string]string{"env": "test"}))
	require.NoError(t, e.c.DeleteTags(ctx, id, []string{"team"}))
	in, err = e.c.GetInstance(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"owner": "someone", "env": "test"}, in.Tags)
	assert.Equal(t, 3, e.sim.Calls(otcsim.OpTagsAction))

	require.NoError(t, e.c.SetTags(ctx, id, nil), "nothing to set is no call")
	assert.Equal(t, 3, e.sim.Calls(otcsim.OpTagsAction))
}
