package otcsim

import (
	"net/http"
	"strings"
	"testing"
	"time"

	golangsdk "github.com/opentelekomcloud/gophertelekomcloud"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/instances"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCreateSingleInstanceLifecycle(t *testing.T) {
	e := newEnv(t, Options{})
	res, err := instances.Create(e.rds, createOpts("mysql-demo-01"))
	require.NoError(t, err)

	assert.Equal(t, "mysql-demo-01", res.Instance.Name)
	assert.Equal(t, StatusBuild, res.Instance.Status)
	assert.Equal(t, "3306", res.Instance.Port)
	assert.Regexp(t, `^[0-9a-f]{32}in01$`, res.Instance.Id)
	assert.Regexp(t, `^[0-9a-f-]{36}$`, res.JobId)
	assert.Equal(t, 1, e.sim.MutatingCalls())

	in := e.getInstance(t, res.Instance.Id)
	assert.Equal(t, StatusBuild, in.Status)
	assert.Empty(t, in.Created, "created is empty while BUILD")
	assert.Empty(t, in.PrivateIps)
	assert.Equal(t, TypeSingle, in.Type)
	assert.Equal(t, 3306, in.Port)
	assert.Equal(t, "1", in.Cpu)
	assert.Equal(t, "2", in.Mem)
	assert.Equal(t, "8.0.28", in.DataStore.CompleteVersion)
	require.Len(t, in.Nodes, 1)
	assert.Equal(t, "master", in.Nodes[0].Role)
	assert.Equal(t, "eu-de-01", in.Nodes[0].AvailabilityZone)

	// The job is unknown during its first second, then Running, then Completed.
	_, err = e.getJob(t, res.JobId)
	status, code := rdsErrorCode(t, err)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "DBS.200543", code)

	e.clock.Advance(10 * time.Second)
	job, err := e.getJob(t, res.JobId)
	require.NoError(t, err)
	assert.Equal(t, JobRunning, job.Job.Status)
	assert.Equal(t, "50", job.Job.Process)
	assert.Equal(t, res.Instance.Id, job.Job.Instance.Id)
	assert.Nil(t, job.Job.FailReason)

	e.clock.Advance(10 * time.Second)
	job, err = e.getJob(t, res.JobId)
	require.NoError(t, err)
	assert.Equal(t, JobCompleted, job.Job.Status)
	assert.Empty(t, job.Job.Process)

	in = e.getInstance(t, res.Instance.Id)
	assert.Equal(t, StatusActive, in.Status)
	assert.Equal(t, "2026-05-01T10:00:20+0000", in.Created)
	assert.Equal(t, []string{"192.168.0.100"}, in.PrivateIps)

	// Delete: the instance stays listed while the job runs, then vanishes.
	jobID, err := instances.Delete(e.rds, res.Instance.Id)
	require.NoError(t, err)
	assert.NotEmpty(t, *jobID)
	assert.Equal(t, 2, e.sim.MutatingCalls())

	_, err = instances.Delete(e.rds, res.Instance.Id)
	status, code = rdsErrorCode(t, err)
	assert.Equal(t, http.StatusConflict, status)
	assert.Equal(t, "DBS.200019", code)

	e.clock.Advance(e.sim.Options().Durations.Delete - time.Second)
	assert.Len(t, mustList(t, e, instances.ListOpts{Id: res.Instance.Id}).Instances, 1)
	e.clock.Advance(time.Second)
	list := mustList(t, e, instances.ListOpts{Id: res.Instance.Id})
	assert.Empty(t, list.Instances)
	assert.Zero(t, list.TotalCount)

	_, err = instances.Delete(e.rds, res.Instance.Id)
	status, code = rdsErrorCode(t, err)
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, "DBS.200002", code)
}

func mustList(t *testing.T, e *env, opts instances.ListOpts) *instances.ListResponse {
	t.Helper()
	res, err := instances.List(e.rds, opts)
	require.NoError(t, err)
	return res
}

func TestCreateHAInstance(t *testing.T) {
	e := newEnv(t, Options{})
	opts := createOpts("pg-demo-01")
	opts.Datastore = &instances.Datastore{Type: "PostgreSQL", Version: "15"}
	opts.Ha = &instances.Ha{Mode: "ha", ReplicationMode: "async"}
	opts.FlavorRef = "rds.pg.n1.large.2.ha"
	opts.AvailabilityZone = "eu-de-01,eu-de-02"
	opts.Volume = &instances.Volume{Type: "CLOUDSSD", Size: 100}
	opts.Port = "8635"
	opts.BackupStrategy = &instances.BackupStrategy{StartTime: "08:15-09:15", KeepDays: 7}
	id := e.createActive(t, opts)

	in := e.getInstance(t, id)
	assert.Equal(t, TypeHa, in.Type)
	assert.Equal(t, "async", in.Ha.ReplicationMode)
	assert.Equal(t, 8635, in.Port)
	assert.Equal(t, "2", in.Cpu)
	assert.Equal(t, "4", in.Mem)
	assert.Equal(t, "15.4", in.DataStore.CompleteVersion)
	assert.Equal(t, "08:15-09:15", in.BackupStrategy.StartTime)
	require.Len(t, in.Nodes, 2)
	assert.Equal(t, "master", in.Nodes[0].Role)
	assert.Equal(t, "eu-de-01", in.Nodes[0].AvailabilityZone)
	assert.Equal(t, "slave", in.Nodes[1].Role)
	assert.Equal(t, "eu-de-02", in.Nodes[1].AvailabilityZone)
}

func TestCreateValidation(t *testing.T) {
	e := newEnv(t, Options{})
	e.createActive(t, createOpts("taken-name"))

	cases := map[string]struct {
		reason string
		mutate func(*instances.CreateRdsOpts)
		status int
		code   string
	}{
		"short name":      {"4 characters at least", func(o *instances.CreateRdsOpts) { o.Name = "abc" }, 400, "DBS.200021"},
		"name with digit": {"starts with a letter", func(o *instances.CreateRdsOpts) { o.Name = "1abc" }, 400, "DBS.200021"},
		"name with dot":   {"letters, digits, - and _ only", func(o *instances.CreateRdsOpts) { o.Name = "ab.cd" }, 400, "DBS.200021"},
		"weak password":   {"3 character classes", func(o *instances.CreateRdsOpts) { o.Password = "password1" }, 400, "DBS.200052"},
		"short password":  {"8 characters", func(o *instances.CreateRdsOpts) { o.Password = "Ab1!" }, 400, "DBS.200052"},
		"long password":   {"32 characters at most", func(o *instances.CreateRdsOpts) { o.Password = "Aa1!" + strings.Repeat("x", 29) }, 400, "DBS.200052"},
		"long name":       {"64 characters at most", func(o *instances.CreateRdsOpts) { o.Name = "a" + strings.Repeat("b", 64) }, 400, "DBS.200021"},
		"bad char in pwd": {"only allowed specials", func(o *instances.CreateRdsOpts) { o.Password = "Abcdef1/x" }, 400, "DBS.200052"},
		"small volume":    {"40 GB at least", func(o *instances.CreateRdsOpts) { o.Volume.Size = 30 }, 400, "DBS.200023"},
		"big volume":      {"4000 GB at most", func(o *instances.CreateRdsOpts) { o.Volume.Size = 4010 }, 400, "DBS.200023"},
		"odd volume":      {"a multiple of 10", func(o *instances.CreateRdsOpts) { o.Volume.Size = 45 }, 400, "DBS.200027"},
		"volume type":     {"known storage types", func(o *instances.CreateRdsOpts) { o.Volume.Type = "SATA" }, 400, "DBS.200026"},
		"storage in az": {"ESSD is not offered in eu-de-03", func(o *instances.CreateRdsOpts) {
			o.Volume.Type = "ESSD"
			o.AvailabilityZone = "eu-de-03"
		}, 400, "DBS.200026"},
		"unknown flavor":   {"flavor must exist", func(o *instances.CreateRdsOpts) { o.FlavorRef = "rds.mysql.x9.huge" }, 400, "DBS.200053"},
		"pg flavor":        {"flavor of another engine", func(o *instances.CreateRdsOpts) { o.FlavorRef = "rds.pg.n1.large.2" }, 400, "DBS.200053"},
		"ha flavor single": {"ha flavor for a single instance", func(o *instances.CreateRdsOpts) { o.FlavorRef = "rds.mysql.n1.large.2.ha" }, 400, "DBS.200053"},
		"sold out": {"2xlarge.4 is sold out in eu-de-03", func(o *instances.CreateRdsOpts) {
			o.FlavorRef = "rds.mysql.n1.2xlarge.4"
			o.AvailabilityZone = "eu-de-03"
		}, 400, "DBS.280450"},
		"unsupported az": {"4xlarge is not offered in eu-de-03", func(o *instances.CreateRdsOpts) {
			o.FlavorRef = "rds.mysql.n1.4xlarge.2"
			o.AvailabilityZone = "eu-de-03"
		}, 400, "DBS.200053"},
		"unknown az":     {"AZ must exist", func(o *instances.CreateRdsOpts) { o.AvailabilityZone = "eu-nl-01" }, 400, "DBS.200025"},
		"two azs single": {"one AZ per node", func(o *instances.CreateRdsOpts) { o.AvailabilityZone = "eu-de-01,eu-de-02" }, 400, "DBS.200025"},
		"unknown vpc":    {"VPC must exist", func(o *instances.CreateRdsOpts) { o.VpcId = "nope" }, 404, "DBS.200503"},
		"unknown subnet": {"subnet must exist", func(o *instances.CreateRdsOpts) { o.SubnetId = "nope" }, 404, "DBS.200501"},
		"neutron subnet": {"RDS wants the VPC v1 subnet id", func(o *instances.CreateRdsOpts) { o.SubnetId = SeedNeutronSubnetID }, 404, "DBS.200501"},
		"unknown sg":     {"security group must exist", func(o *instances.CreateRdsOpts) { o.SecurityGroupId = "nope" }, 404, "DBS.200050"},
		"mysql port":     {"12017 is reserved", func(o *instances.CreateRdsOpts) { o.Port = "12017" }, 400, "DBS.200001"},
		"engine case":    {"datastore.type is case-sensitive", func(o *instances.CreateRdsOpts) { o.Datastore.Type = "mysql" }, 400, "DBS.200001"},
		"engine version": {"version must exist", func(o *instances.CreateRdsOpts) { o.Datastore.Version = "5.6" }, 400, "DBS.200001"},
		"region":         {"only eu-de", func(o *instances.CreateRdsOpts) { o.Region = "eu-nl" }, 400, "DBS.200001"},
		"backup window": {"HH = hh+1", func(o *instances.CreateRdsOpts) {
			o.BackupStrategy = &instances.BackupStrategy{StartTime: "08:15-10:15", KeepDays: 7}
		}, 400, "DBS.201103"},
		"keep days": {"0..732", func(o *instances.CreateRdsOpts) {
			o.BackupStrategy = &instances.BackupStrategy{StartTime: "08:15-09:15", KeepDays: 800}
		}, 400, "DBS.201106"},
		"ha replication": {"semisync or async for MySQL", func(o *instances.CreateRdsOpts) {
			o.Ha = &instances.Ha{Mode: "Ha", ReplicationMode: "sync"}
			o.FlavorRef = "rds.mysql.n1.large.2.ha"
			o.AvailabilityZone = "eu-de-01,eu-de-02"
		}, 400, "DBS.200001"},
		"ha sold out az": {"xlarge.2.ha is sold out in eu-de-02", func(o *instances.CreateRdsOpts) {
			o.Ha = &instances.Ha{Mode: "Ha", ReplicationMode: "semisync"}
			o.FlavorRef = "rds.mysql.n1.xlarge.2.ha"
			o.AvailabilityZone = "eu-de-01,eu-de-02"
		}, 400, "DBS.280450"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			opts := createOpts("valid-name")
			opts.Volume = &instances.Volume{Type: "COMMON", Size: 40}
			opts.Datastore = &instances.Datastore{Type: "MySQL", Version: "8.0"}
			tc.mutate(&opts)
			_, err := instances.Create(e.rds, opts)
			status, code := rdsErrorCode(t, err)
			assert.Equal(t, tc.status, status, tc.reason)
			assert.Equal(t, tc.code, code, tc.reason)
		})
	}
	assert.Len(t, e.sim.Instances(), 1, "no failed create leaves an instance behind")
}

func TestCreateMalformedJSON(t *testing.T) {
	e := newEnv(t, Options{})
	for name, body := range map[string]string{"not json": "{", "empty": "", "wrong type": `{"name":1}`} {
		t.Run(name, func(t *testing.T) {
			_, err := e.rds.Request(http.MethodPost, e.rds.ServiceURL("instances"), &golangsdk.RequestOpts{
				RawBody:     strings.NewReader(body),
				MoreHeaders: map[string]string{"Content-Type": "application/json"},
				OkCodes:     []int{202},
			})
			status, code := rdsErrorCode(t, err)
			assert.Equal(t, http.StatusBadRequest, status)
			assert.Equal(t, "DBS.200001", code)
		})
	}
}

func TestListFilters(t *testing.T) {
	e := newEnv(t, Options{})
	ids := map[string]string{}
	for _, name := range []string{"alpha-one", "alpha-two", "beta-one"} {
		ids[name] = e.createActive(t, createOpts(name))
	}
	pg := createOpts("gamma-pg")
	pg.Datastore = &instances.Datastore{Type: "PostgreSQL", Version: "16"}
	pg.FlavorRef = "rds.pg.n1.medium.2"
	pg.Port = ""
	ids["gamma-pg"] = e.createActive(t, pg)

	names := func(res *instances.ListResponse) []string {
		var out []string
		for _, in := range res.Instances {
			out = append(out, in.Name)
		}
		return out
	}
	cases := map[string]struct {
		opts  instances.ListOpts
		want  []string
		total int
	}{
		"all, newest first": {instances.ListOpts{}, []string{"gamma-pg", "beta-one", "alpha-two", "alpha-one"}, 4},
		"exact name":        {instances.ListOpts{Name: "alpha-one"}, []string{"alpha-one"}, 1},
		"fuzzy name":        {instances.ListOpts{Name: "*alpha"}, []string{"alpha-two", "alpha-one"}, 2},
		"exact id":          {instances.ListOpts{Id: ids["beta-one"]}, []string{"beta-one"}, 1},
		"unknown id":        {instances.ListOpts{Id: "00000000000000000000000000000000in01"}, nil, 0},
		"datastore":         {instances.ListOpts{DataStoreType: "PostgreSQL"}, []string{"gamma-pg"}, 1},
		"type":              {instances.ListOpts{Type: "Ha"}, nil, 0},
		"page":              {instances.ListOpts{Offset: 1, Limit: 2}, []string{"beta-one", "alpha-two"}, 4},
		"offset past end":   {instances.ListOpts{Offset: 10}, nil, 4},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res := mustList(t, e, tc.opts)
			assert.Equal(t, tc.want, names(res))
			assert.Equal(t, tc.total, res.TotalCount)
		})
	}
	assert.Equal(t, 5432, e.getInstance(t, ids["gamma-pg"]).Port, "default port")

	_, err := instances.List(e.rds, instances.ListOpts{Limit: 101})
	status, code := rdsErrorCode(t, err)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, "DBS.200001", code)
}

func TestForcedStatusAndBusyInstance(t *testing.T) {
	e := newEnv(t, Options{})
	id, jobID := e.create(t, createOpts("doomed-01"))

	_, err := instances.Delete(e.rds, id)
	status, code := rdsErrorCode(t, err)
	assert.Equal(t, http.StatusConflict, status, "cannot delete while BUILD")
	assert.Equal(t, "DBS.200019", code)

	e.clock.Advance(2 * time.Second)
	e.sim.SetInstanceStatus(id, StatusCreateFail)
	assert.Equal(t, StatusCreateFail, e.getInstance(t, id).Status)
	job, err := e.getJob(t, jobID)
	require.NoError(t, err)
	assert.Equal(t, JobFailed, job.Job.Status)
	require.NotNil(t, job.Job.FailReason)

	// A failed instance can be deleted.
	_, err = instances.Delete(e.rds, id)
	require.NoError(t, err)
}

// TestWaitForJobCompleted drives the job endpoint through the SDK's own poller: it must tolerate
// the first-second DBS.200543 and see Completed. The poller sleeps 1 s between queries.
func TestWaitForJobCompleted(t *testing.T) {
	e := newEnv(t, Options{})
	_, jobID := e.create(t, createOpts("job-waiter"))
	e.clock.Advance(e.sim.Options().Durations.Create)
	require.NoError(t, instances.WaitForJobCompleted(e.rds, 30, jobID))
	assert.Equal(t, 1, e.sim.Calls(OpGetJob), "one query saw Completed")

	id, failing := e.create(t, createOpts("job-failer"))
	e.clock.Advance(2 * time.Second)
	e.sim.SetInstanceStatus(id, StatusCreateFail)
	require.Error(t, instances.WaitForJobCompleted(e.rds, 30, failing), "a Failed job is an error")
}

// TestDuplicateNames: OTC lets instances of one type share a name ("Instances of the same type can
// have the same name under the same tenant"); Options.UniqueNames keeps the strict behaviour.
func TestDuplicateNames(t *testing.T) {
	t.Run("allowed by default", func(t *testing.T) {
		e := newEnv(t, Options{})
		first := e.createActive(t, createOpts("same-name"))
		second, err := instances.Create(e.rds, createOpts("same-name"))
		require.NoError(t, err)
		assert.NotEqual(t, first, second.Instance.Id)
		res := mustList(t, e, instances.ListOpts{Name: "same-name"})
		assert.Equal(t, 2, res.TotalCount, "a look-up by name finds both")
		_, err = e.sim.AddInstance(InstanceSpec{Name: "same-name"})
		require.NoError(t, err)
		assert.Len(t, e.sim.Instances(), 3)
	})
	t.Run("UniqueNames refuses", func(t *testing.T) {
		e := newEnv(t, Options{UniqueNames: true})
		e.createActive(t, createOpts("same-name"))
		_, err := instances.Create(e.rds, createOpts("same-name"))
		status, code := rdsErrorCode(t, err)
		assert.Equal(t, http.StatusConflict, status)
		assert.Equal(t, "DBS.200022", code)
		_, err = e.sim.AddInstance(InstanceSpec{Name: "same-name"})
		require.Error(t, err)
		assert.Len(t, e.sim.Instances(), 1)
	})
}
