package otc_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/otc"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

var t0 = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)

// simEnv is a simulator on a manual clock and the adapter logged in to it.
type simEnv struct {
	srv   *otcsim.Server
	sim   *otcsim.Sim
	clock *otcsim.ManualClock
	c     *otc.Client

	mu       sync.Mutex
	observed []string // "op=result", in order
}

func newSimEnv(t *testing.T) *simEnv { return newSimEnvWith(t, otcsim.Options{}) }

func newSimEnvWith(t *testing.T, opts otcsim.Options) *simEnv {
	t.Helper()
	clock := otcsim.NewManualClock(t0)
	opts.Clock = clock
	srv := otcsim.NewServer(opts)
	t.Cleanup(srv.Close)
	e := &simEnv{srv: srv, sim: srv.Sim, clock: clock}

	env := srv.Env()
	cfg, err := otc.ConfigFromEnv(func(k string) string { return env[k] })
	require.NoError(t, err)
	cfg.RequestTimeout = 5 * time.Second
	cfg.Observe = func(op, result string, _ time.Duration) {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.observed = append(e.observed, op+"="+result)
	}
	e.c, err = otc.New(context.Background(), cfg)
	require.NoError(t, err)
	return e
}

func (e *simEnv) observations() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.observed...)
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// mysqlOpts is a valid single MySQL 8.0 instance in the seed network.
func mysqlOpts(name string) cloud.CreateInstanceOpts {
	return cloud.CreateInstanceOpts{
		Name: name, Engine: "MySQL", Version: "8.0", Flavor: "rds.mysql.n1.large.2",
		VolumeType: "CLOUDSSD", VolumeSize: 40, AvailabilityZones: []string{"eu-de-01"},
		VpcID: otcsim.SeedVPCID, SubnetID: otcsim.SeedSubnetID, SecurityGroupID: otcsim.SeedSecurityGroupID,
		Password:       secret.New("Sim-Passw0rd!"),
		BackupStrategy: &cloud.BackupStrategy{StartTime: "08:15-09:15", KeepDays: 7},
	}
}

func requireKind(t *testing.T, want cloud.Kind, err error) *cloud.Error {
	t.Helper()
	require.Error(t, err)
	var ce *cloud.Error
	require.ErrorAs(t, err, &ce)
	require.Equal(t, want, ce.Kind, "%v", err)
	assert.NotContains(t, ce.Error(), "http://", "no URL in the error")
	assert.NotContains(t, ce.Error(), "\n", "one line")
	return ce
}

// TestSimDuplicateNames: OTC lets instances share a name, so a second create makes a second
// instance and a look-up by name no longer names one; the simulator's strict mode answers
// DBS.200022, which the adapter maps to a conflict.
func TestSimDuplicateNames(t *testing.T) {
	for _, unique := range []bool{false, true} {
		t.Run(fmt.Sprintf("unique=%v", unique), func(t *testing.T) {
			e := newSimEnvWith(t, otcsim.Options{UniqueNames: unique})
			ctx := ctxT(t)
			net, err := e.c.ResolveNetwork(ctx, otcsim.SeedVPCName, otcsim.SeedSubnetName, otcsim.SeedSecurityGroupName)
			require.NoError(t, err)
			opts := mysqlOpts("rds-demo-01")
			opts.VpcID, opts.SubnetID, opts.SecurityGroupID = net.VpcID, net.SubnetID, net.SecurityGroupID
			id, _, err := e.c.CreateInstance(ctx, opts)
			require.NoError(t, err)

			second, _, err := e.c.CreateInstance(ctx, opts)
			if unique {
				ce := requireKind(t, cloud.KindConflict, err)
				assert.Equal(t, "DBS.200022", ce.Code)
				found, err := e.c.FindInstancesByName(ctx, "rds-demo-01")
				require.NoError(t, err)
				require.Len(t, found, 1)
				assert.Equal(t, id, found[0].ID)
				return
			}
			require.NoError(t, err)
			assert.NotEqual(t, id, second)
			found, err := e.c.FindInstancesByName(ctx, "rds-demo-01")
			require.NoError(t, err)
			assert.Len(t, found, 2, "as in OTC, two instances share the name")
		})
	}
}

func TestSimLifecycle(t *testing.T) {
	e := newSimEnv(t)
	ctx := ctxT(t)
	assert.Equal(t, "eu-de", e.c.Region())

	net, err := e.c.ResolveNetwork(ctx, otcsim.SeedVPCName, otcsim.SeedSubnetName, otcsim.SeedSecurityGroupName)
	require.NoError(t, err)
	opts := mysqlOpts("rds-demo-01")
	opts.VpcID, opts.SubnetID, opts.SecurityGroupID = net.VpcID, net.SubnetID, net.SecurityGroupID
	opts.Port = 3307

	none, err := e.c.FindInstancesByName(ctx, "rds-demo-01")
	require.NoError(t, err)
	assert.Empty(t, none)

	id, jobID, err := e.c.CreateInstance(ctx, opts)
	require.NoError(t, err)
	require.NotEmpty(t, id)
	require.NotEmpty(t, jobID)

	// NOTE: OTC does not know a job during its first second.
	_, err = e.c.GetJob(ctx, jobID)
	ce := requireKind(t, cloud.KindNotFound, err)
	assert.Equal(t, "DBS.200543", ce.Code)
	e.clock.Advance(2 * time.Second)
	job, err := e.c.GetJob(ctx, jobID)
	require.NoError(t, err)
	assert.Equal(t, cloud.JobRunning, job.Status)
	assert.Equal(t, id, job.InstanceID)

	in, err := e.c.GetInstance(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, cloud.StatusBuild, in.Status)
	byName, err := e.c.FindInstancesByName(ctx, "rds-demo-01")
	require.NoError(t, err)
	require.Len(t, byName, 1)
	assert.Equal(t, id, byName[0].ID)
	assert.True(t, byName[0].Created.IsZero(), "OTC shows no creation time while it builds")

	e.clock.Advance(otcsim.DefaultDurations().Create)
	job, err = e.c.GetJob(ctx, jobID)
	require.NoError(t, err)
	assert.Equal(t, cloud.JobCompleted, job.Status)
	in, err = e.c.GetInstance(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, cloud.StatusActive, in.Status)
	assert.Equal(t, "Single", in.Type)
	assert.Equal(t, "MySQL", in.Engine)
	assert.Equal(t, "8.0", in.Version)
	assert.NotEmpty(t, in.CompleteVersion)
	assert.Equal(t, "rds.mysql.n1.large.2", in.Flavor)
	assert.Equal(t, cloud.Volume{Type: "CLOUDSSD", Size: 40}, in.Volume)
	assert.Equal(t, 3307, in.Port, "sent as a string, listed as a number")
	assert.Equal(t, net, cloud.Network{VpcID: in.VpcID, SubnetID: in.SubnetID, SecurityGroupID: in.SecurityGroupID})
	assert.Equal(t, cloud.BackupStrategy{StartTime: "08:15-09:15", KeepDays: 7}, in.BackupStrategy)
	require.Len(t, in.Nodes, 1)
	assert.Equal(t, "master", in.Nodes[0].Role)
	assert.Equal(t, "eu-de-01", in.Nodes[0].AvailabilityZone)
	assert.NotEmpty(t, in.PrivateIPs)

	// Backups: the automated one after create, then a manual one.
	list, err := e.c.ListBackups(ctx, id)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, "auto", list[0].Type)
	b, err := e.c.CreateBackup(ctx, id, "manual-1", "before upgrade")
	require.NoError(t, err)
	assert.Equal(t, cloud.BackupBuilding, b.Status)
	assert.Equal(t, id, b.InstanceID)
	assert.False(t, b.Begin.IsZero())
	_, err = e.c.CreateBackup(ctx, id, "manual-2", "")
	ce = requireKind(t, cloud.KindBusy, err)
	assert.Equal(t, "DBS.201205", ce.Code)
	e.clock.Advance(otcsim.DefaultDurations().Backup)
	list, err = e.c.ListBackups(ctx, id)
	require.NoError(t, err)
	require.Len(t, list, 2)
	for _, b := range list {
		assert.Equal(t, cloud.BackupCompleted, b.Status, b.Name)
	}

	delJob, err := e.c.DeleteInstance(ctx, id)
	require.NoError(t, err)
	require.NotEmpty(t, delJob)
	e.clock.Advance(otcsim.DefaultDurations().Delete + 2*time.Second)
	job, err = e.c.GetJob(ctx, delJob)
	require.NoError(t, err)
	assert.Equal(t, cloud.JobCompleted, job.Status)
	_, err = e.c.GetInstance(ctx, id)
	requireKind(t, cloud.KindNotFound, err)
	_, err = e.c.DeleteInstance(ctx, id)
	requireKind(t, cloud.KindNotFound, err) // the caller decides that "gone" is fine

	assert.Equal(t, 1, e.sim.Calls(otcsim.OpCreateToken), "one login for the whole test")
}

func TestSimHA(t *testing.T) {
	e := newSimEnv(t)
	ctx := ctxT(t)
	opts := mysqlOpts("rds-ha-01")
	opts.Flavor = "rds.mysql.n1.large.2.ha"
	opts.AvailabilityZones = []string{"eu-de-01", "eu-de-02"}
	opts.HAMode, opts.ReplicationMode = "ha", "semisync"
	id, _, err := e.c.CreateInstance(ctx, opts)
	require.NoError(t, err)
	e.clock.Advance(otcsim.DefaultDurations().Create)
	in, err := e.c.GetInstance(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, "Ha", in.Type)
	assert.Equal(t, "semisync", in.ReplicationMode)
	require.Len(t, in.Nodes, 2)
	assert.ElementsMatch(t, []string{"eu-de-01", "eu-de-02"}, []string{in.Nodes[0].AvailabilityZone, in.Nodes[1].AvailabilityZone})
}

func TestSimCreateInvalid(t *testing.T) {
	e := newSimEnv(t)
	cases := map[string]struct {
		reason string
		mod    func(*cloud.CreateInstanceOpts)
		code   string
	}{
		"unknown flavor": {mod: func(o *cloud.CreateInstanceOpts) { o.Flavor = "rds.mysql.x9.huge.1" }, code: "DBS.200053"},
		"sold out": {mod: func(o *cloud.CreateInstanceOpts) {
			o.Flavor = "rds.mysql.n1.2xlarge.4"
			o.AvailabilityZones = []string{"eu-de-03"}
		}, code: "DBS.280450"},
		"unknown VPC": {
			reason: "RDS answers 404 for a missing VPC; it is the spec's fault, not a missing instance",
			mod:    func(o *cloud.CreateInstanceOpts) { o.VpcID = "00000000-0000-0000-0000-000000000000" }, code: "DBS.200503",
		},
		"neutron subnet id": {
			reason: "RDS refuses the Neutron subnet id",
			mod:    func(o *cloud.CreateInstanceOpts) { o.SubnetID = otcsim.SeedNeutronSubnetID }, code: "DBS.200501",
		},
		"bad volume": {mod: func(o *cloud.CreateInstanceOpts) { o.VolumeSize = 45 }, code: "DBS.200027"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := mysqlOpts("rds-bad-01")
			tc.mod(&o)
			_, _, err := e.c.CreateInstance(ctxT(t), o)
			ce := requireKind(t, cloud.KindInvalid, err)
			assert.Equal(t, tc.code, ce.Code, tc.reason)
			assert.NotEmpty(t, ce.Message)
		})
	}
	t.Run("no password", func(t *testing.T) {
		o := mysqlOpts("rds-bad-01")
		o.Password = secret.Value{}
		_, _, err := e.c.CreateInstance(ctxT(t), o)
		requireKind(t, cloud.KindInvalid, err)
	})
	assert.Empty(t, e.sim.Instances(), "nothing was created")
}

func TestSimPasswordNeverInErrors(t *testing.T) {
	e := newSimEnv(t)
	o := mysqlOpts("rds-pw-01")
	o.Password = secret.New("weak")
	_, _, err := e.c.CreateInstance(ctxT(t), o)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "weak")
}

func TestSimResolveNetwork(t *testing.T) {
	e := newSimEnv(t)
	ctx := ctxT(t)
	seed := cloud.Network{VpcID: otcsim.SeedVPCID, SubnetID: otcsim.SeedSubnetID, SecurityGroupID: otcsim.SeedSecurityGroupID}

	dupVPC := e.sim.AddVPC("twin", "10.1.0.0/16")
	e.sim.AddVPC("twin", "10.2.0.0/16")
	_, err := e.sim.AddSubnet(otcsim.SeedVPCID, "twin-subnet", "192.168.10.0/24")
	require.NoError(t, err)
	_, err = e.sim.AddSubnet(otcsim.SeedVPCID, "twin-subnet", "192.168.11.0/24")
	require.NoError(t, err)
	otherSubnet, err := e.sim.AddSubnet(dupVPC, "elsewhere", "10.1.1.0/24")
	require.NoError(t, err)
	e.sim.AddSecurityGroup("twin-sg")
	e.sim.AddSecurityGroup("twin-sg")

	ok := map[string]struct {
		vpc, subnet, sg string
	}{
		"names":             {otcsim.SeedVPCName, otcsim.SeedSubnetName, otcsim.SeedSecurityGroupName},
		"ids":               {otcsim.SeedVPCID, otcsim.SeedSubnetID, otcsim.SeedSecurityGroupID},
		"neutron subnet id": {otcsim.SeedVPCName, otcsim.SeedNeutronSubnetID, otcsim.SeedSecurityGroupName},
	}
	for name, tc := range ok {
		t.Run(name, func(t *testing.T) {
			got, err := e.c.ResolveNetwork(ctx, tc.vpc, tc.subnet, tc.sg)
			require.NoError(t, err)
			assert.Equal(t, seed, got)
		})
	}

	bad := map[string]struct {
		vpc, subnet, sg string
		msg             string
	}{
		"missing VPC":            {"nope", otcsim.SeedSubnetName, otcsim.SeedSecurityGroupName, `VPC "nope" not found`},
		"ambiguous VPC":          {"twin", "x", otcsim.SeedSecurityGroupName, `VPC name "twin" is ambiguous`},
		"missing subnet":         {otcsim.SeedVPCName, "nope", otcsim.SeedSecurityGroupName, `subnet "nope" not found in VPC "frank-test"`},
		"subnet of another VPC":  {otcsim.SeedVPCName, otherSubnet, otcsim.SeedSecurityGroupName, "not found in VPC"},
		"ambiguous subnet":       {otcsim.SeedVPCName, "twin-subnet", otcsim.SeedSecurityGroupName, `subnet name "twin-subnet" is ambiguous`},
		"missing security group": {otcsim.SeedVPCName, otcsim.SeedSubnetName, "nope", `security group "nope" not found`},
		"unknown group id":       {otcsim.SeedVPCName, otcsim.SeedSubnetName, "00000000-0000-0000-0000-000000000000", "not found"},
		"ambiguous group":        {otcsim.SeedVPCName, otcsim.SeedSubnetName, "twin-sg", `security group name "twin-sg" is ambiguous`},
		"empty":                  {"", otcsim.SeedSubnetName, otcsim.SeedSecurityGroupName, "no VPC given"},
	}
	for name, tc := range bad {
		t.Run(name, func(t *testing.T) {
			_, err := e.c.ResolveNetwork(ctx, tc.vpc, tc.subnet, tc.sg)
			ce := requireKind(t, cloud.KindInvalid, err)
			assert.Contains(t, ce.Message, tc.msg)
		})
	}
}

func TestSimResolveNetworkSlowAPI(t *testing.T) {
	seed := cloud.Network{VpcID: otcsim.SeedVPCID, SubnetID: otcsim.SeedSubnetID, SecurityGroupID: otcsim.SeedSecurityGroupID}
	for name, sg := range map[string]string{
		"security group by name": otcsim.SeedSecurityGroupName,
		"security group by id":   otcsim.SeedSecurityGroupID,
	} {
		t.Run(name, func(t *testing.T) {
			e := newSimEnv(t)
			for _, op := range []string{otcsim.OpListVpcs, otcsim.OpListSubnets, otcsim.OpListSecurityGroups} {
				e.sim.AddFault(otcsim.Fault{Op: op, Kind: otcsim.FaultLatency, Delay: 2 * time.Second})
			}
			e.sim.ResetCounters()
			// One cloud call's deadline in the reconciler, at 2 s an OTC call: each list must be
			// fetched once, and all of them at once.
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
			defer cancel()
			got, err := e.c.ResolveNetwork(ctx, otcsim.SeedVPCName, otcsim.SeedSubnetName, sg)
			require.NoError(t, err, "the lookups run at once and fetch each page once: the slowest one must fit, not their sum")
			assert.Equal(t, seed, got)
			assert.Equal(t, 1, e.sim.Calls(otcsim.OpListVpcs), "the VPC list is fetched once")
			assert.Equal(t, 1, e.sim.Calls(otcsim.OpListSubnets), "the subnet list is fetched once")
		})
	}
}

func TestSimResolveNetworkCache(t *testing.T) {
	e := newSimEnv(t)
	ctx := ctxT(t)
	now := t0
	otc.SetNow(e.c, func() time.Time { return now })
	seed := cloud.Network{VpcID: otcsim.SeedVPCID, SubnetID: otcsim.SeedSubnetID, SecurityGroupID: otcsim.SeedSecurityGroupID}
	resolve := func(sg string) (cloud.Network, error) {
		return e.c.ResolveNetwork(ctx, otcsim.SeedVPCName, otcsim.SeedSubnetName, sg)
	}

	got, err := resolve(otcsim.SeedSecurityGroupName)
	require.NoError(t, err)
	assert.Equal(t, seed, got)

	e.sim.ResetCounters()
	now = now.Add(4 * time.Minute)
	got, err = resolve(otcsim.SeedSecurityGroupName)
	require.NoError(t, err)
	assert.Equal(t, seed, got)
	assert.Empty(t, e.sim.CallCounts(), "a resolved network is remembered: no call to OTC")

	now = now.Add(time.Minute)
	got, err = resolve(otcsim.SeedSecurityGroupName)
	require.NoError(t, err)
	assert.Equal(t, seed, got)
	assert.Positive(t, e.sim.Calls(otcsim.OpListVpcs), "looked up again after 5 minutes")

	_, err = resolve("made-later")
	requireKind(t, cloud.KindInvalid, err)
	e.sim.AddSecurityGroup("made-later")
	got, err = resolve("made-later")
	require.NoError(t, err, "a reference that matched nothing is not remembered")
	assert.NotEmpty(t, got.SecurityGroupID)
}

func TestSimFindByNameExact(t *testing.T) {
	e := newSimEnv(t)
	ctx := ctxT(t)
	for _, name := range []string{"rds-app", "rds-app-2", "rds-application"} {
		_, err := e.sim.AddInstance(otcsim.InstanceSpec{
			Name: name, Engine: "MySQL", Version: "8.0", Flavor: "rds.mysql.n1.large.2", VolumeType: "CLOUDSSD", VolumeSize: 40,
			AZs: []string{"eu-de-01"}, VpcID: otcsim.SeedVPCID, SubnetID: otcsim.SeedSubnetID, SecurityGroupID: otcsim.SeedSecurityGroupID,
		})
		require.NoError(t, err)
	}
	in, err := e.c.FindInstancesByName(ctx, "rds-app")
	require.NoError(t, err)
	require.Len(t, in, 1)
	assert.Equal(t, "rds-app", in[0].Name)
	assert.False(t, in[0].Created.IsZero(), "an ACTIVE instance has its creation time")
	none, err := e.c.FindInstancesByName(ctx, "rds-ap")
	require.NoError(t, err)
	assert.Empty(t, none)
	_, err = e.c.FindInstancesByName(ctx, "*rds")
	requireKind(t, cloud.KindInvalid, err)
	assert.Equal(t, 2, e.sim.Calls(otcsim.OpListInstances), "the fuzzy name never reached OTC")
}

func TestSimFlavors(t *testing.T) {
	e := newSimEnv(t)
	fl, err := e.c.ListFlavors(ctxT(t), "MySQL", "8.0")
	require.NoError(t, err)
	require.NotEmpty(t, fl)
	var found *cloud.Flavor
	for i := range fl {
		if fl[i].SpecCode == "rds.mysql.n1.2xlarge.4" {
			found = &fl[i]
		}
	}
	require.NotNil(t, found)
	assert.Equal(t, "single", found.Mode)
	assert.Equal(t, "8", found.VCPUs)
	assert.Equal(t, 32, found.RAMGB)
	assert.Contains(t, found.Versions, "8.0")
	assert.Equal(t, "sellout", found.AZStatus["eu-de-03"])
}

func TestSimFaults(t *testing.T) {
	e := newSimEnv(t)

	t.Run("throttled without sleeping", func(t *testing.T) {
		e.sim.AddFault(otcsim.Fault{Op: otcsim.OpListInstances, Kind: otcsim.FaultThrottle, RetryAfter: 9 * time.Second, Count: 1})
		start := time.Now()
		_, err := e.c.GetInstance(ctxT(t), "0123456789abcdef0123456789abcdefin01")
		ce := requireKind(t, cloud.KindThrottled, err)
		assert.Equal(t, "APIGW.0308", ce.Code)
		assert.Equal(t, 9*time.Second, ce.RetryAfter)
		assert.Less(t, time.Since(start), 2*time.Second)
	})

	t.Run("503", func(t *testing.T) {
		e.sim.AddFault(otcsim.Fault{Op: otcsim.OpListFlavors, Kind: otcsim.FaultStatus, Status: 503, Count: 1})
		_, err := e.c.ListFlavors(ctxT(t), "MySQL", "8.0")
		ce := requireKind(t, cloud.KindUnavailable, err)
		assert.Equal(t, "DBS.108000", ce.Code)
	})

	t.Run("500 in the network lookup", func(t *testing.T) {
		e.sim.AddFault(otcsim.Fault{Op: otcsim.OpListSecurityGroups, Kind: otcsim.FaultStatus, Status: 500, Count: 1})
		_, err := e.c.ResolveNetwork(ctxT(t), otcsim.SeedVPCName, otcsim.SeedSubnetName, otcsim.SeedSecurityGroupName)
		requireKind(t, cloud.KindUnavailable, err)
	})

	t.Run("hang honours the deadline", func(t *testing.T) {
		e.sim.AddFault(otcsim.Fault{Op: otcsim.OpGetJob, Kind: otcsim.FaultHang, Count: 1})
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := e.c.GetJob(ctx, "31b8ae23-c687-4d80-b7b4-42a66c9bb886")
		requireKind(t, cloud.KindUnavailable, err)
		assert.Less(t, time.Since(start), time.Second)
	})

	t.Run("expired context sends nothing", func(t *testing.T) {
		e.sim.ResetCounters()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, _, err := e.c.CreateInstance(ctx, mysqlOpts("rds-never-01"))
		requireKind(t, cloud.KindUnavailable, err)
		assert.Zero(t, e.sim.MutatingCalls())
	})

	t.Run("commit then drop", func(t *testing.T) {
		e.sim.AddFault(otcsim.Fault{Op: otcsim.OpCreateInstance, Kind: otcsim.FaultCommitThenDrop, Count: 1})
		_, _, err := e.c.CreateInstance(ctxT(t), mysqlOpts("rds-dropped-01"))
		requireKind(t, cloud.KindUnavailable, err)
		// The create happened: the deterministic name finds it, so the caller does not create twice.
		in, err := e.c.FindInstancesByName(ctxT(t), "rds-dropped-01")
		require.NoError(t, err)
		require.Len(t, in, 1)
		assert.Equal(t, cloud.StatusBuild, in[0].Status)
	})
}

func TestSimNoChangeAfterTheCallEnded(t *testing.T) {
	e := newSimEnv(t)
	// The create gets a 502; the SDK retries it after 500 ms, long after the call's deadline.
	e.sim.AddFault(otcsim.Fault{Op: otcsim.OpCreateInstance, Kind: otcsim.FaultStatus, Status: 502, Count: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, _, err := e.c.CreateInstance(ctx, mysqlOpts("rds-late-01"))
	requireKind(t, cloud.KindUnavailable, err)

	require.Eventually(t, func() bool { return otc.DroppedRequests(e.c) >= 1 }, 5*time.Second, 10*time.Millisecond,
		"the abandoned SDK goroutine tried to send the retry")
	assert.Equal(t, 1, e.sim.Calls(otcsim.OpCreateInstance), "the retry never reached OTC")
	assert.Empty(t, e.sim.Instances(), "nothing was created after the hook had answered Unavailable")
}

func TestSimTokenExpiry(t *testing.T) {
	e := newSimEnv(t)
	ctx := ctxT(t)
	for i := 0; i < 5; i++ {
		_, err := e.c.ListFlavors(ctx, "PostgreSQL", "15")
		require.NoError(t, err)
	}
	require.Equal(t, 1, e.sim.Calls(otcsim.OpCreateToken))

	e.clock.Advance(25 * time.Hour) // the token lived 24 h
	for i := 0; i < 5; i++ {
		_, err := e.c.ListFlavors(ctx, "PostgreSQL", "15")
		require.NoError(t, err)
	}
	assert.Equal(t, 2, e.sim.Calls(otcsim.OpCreateToken), "renewed once, then reused")
}

func TestSimConcurrentExpiry(t *testing.T) {
	e := newSimEnv(t)
	e.clock.Advance(25 * time.Hour)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Go(func() {
			_, err := e.c.ListFlavors(context.Background(), "MySQL", "8.0")
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, e.sim.Calls(otcsim.OpCreateToken), 3, "calls share a renewal")
}

func TestSimObserve(t *testing.T) {
	e := newSimEnv(t)
	ctx := ctxT(t)
	_, _ = e.c.ListFlavors(ctx, "MySQL", "8.0")
	_, _ = e.c.GetInstance(ctx, "0123456789abcdef0123456789abcdefin01")
	e.clock.Advance(25 * time.Hour)
	_, _ = e.c.ListFlavors(ctx, "MySQL", "8.0")
	assert.Equal(t, []string{
		"Authenticate=ok",
		"ListFlavors=ok",
		"GetInstance=notfound",
		"Reauthenticate=ok",
		"ListFlavors=ok",
	}, e.observations())
}

func TestSimLoginErrors(t *testing.T) {
	clock := otcsim.NewManualClock(t0)
	srv := otcsim.NewServer(otcsim.Options{Clock: clock})
	t.Cleanup(srv.Close)
	env := srv.Env()
	cfg, err := otc.ConfigFromEnv(func(k string) string { return env[k] })
	require.NoError(t, err)

	t.Run("wrong password", func(t *testing.T) {
		bad := cfg
		bad.Password = secret.New("Not-The-Passw0rd")
		_, err := otc.New(context.Background(), bad)
		requireKind(t, cloud.KindUnauthorized, err)
		assert.NotContains(t, err.Error(), "Not-The-Passw0rd")
	})
	t.Run("keystone throttles", func(t *testing.T) {
		srv.Sim.AddFault(otcsim.Fault{Op: otcsim.OpCreateToken, Kind: otcsim.FaultThrottle, Count: 1})
		start := time.Now()
		_, err := otc.New(context.Background(), cfg)
		ce := requireKind(t, cloud.KindThrottled, err)
		assert.Equal(t, "IAM.0012", ce.Code)
		assert.Less(t, time.Since(start), 2*time.Second)
	})
	t.Run("keystone hangs", func(t *testing.T) {
		srv.Sim.AddFault(otcsim.Fault{Op: otcsim.OpCreateToken, Kind: otcsim.FaultHang, Count: 1})
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		_, err := otc.New(ctx, cfg)
		requireKind(t, cloud.KindUnavailable, err)
	})
	t.Run("no credentials", func(t *testing.T) {
		_, err := otc.New(context.Background(), otc.Config{})
		assert.ErrorIs(t, err, otc.ErrNoCredentials)
	})
}
