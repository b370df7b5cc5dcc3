package otcsim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/opentelekomcloud/gophertelekomcloud/openstack/ces/v1/alarms"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/common/tags"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/backups"
	"github.com/opentelekomcloud/gophertelekomcloud/openstack/rds/v3/instances"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// control calls the control API and decodes the answer into out (if not nil).
func control(t *testing.T, e *env, method, path string, body any, out any) int {
	t.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	if out != nil {
		require.NoError(t, json.NewDecoder(resp.Body).Decode(out))
	}
	return resp.StatusCode
}

func TestControlAPIIsOffByDefault(t *testing.T) {
	e := newEnv(t, Options{})
	assert.Equal(t, http.StatusNotFound, control(t, e, http.MethodGet, "/_sim/state", nil, nil))
}

func TestControlAPI(t *testing.T) {
	e := newEnv(t, Options{EnableControl: true})
	id, _ := e.create(t, createOpts("controlled-01"))

	// Clock.
	var now struct {
		Now string `json:"now"`
	}
	require.Equal(t, http.StatusOK, control(t, e, http.MethodPost, "/_sim/clock/advance", map[string]string{"duration": "20s"}, &now))
	assert.Equal(t, "2026-05-01T10:00:20Z", now.Now)
	assert.Equal(t, StatusActive, e.getInstance(t, id).Status)
	assert.Equal(t, http.StatusBadRequest, control(t, e, http.MethodPost, "/_sim/clock/advance", map[string]string{"duration": "soon"}, nil))

	// State.
	var state struct {
		Instances []InstanceView `json:"instances"`
		Backups   []BackupView   `json:"backups"`
		Calls     map[string]int `json:"calls"`
		Mutating  int            `json:"mutating"`
	}
	require.Equal(t, http.StatusOK, control(t, e, http.MethodGet, "/_sim/state", nil, &state))
	var keys map[string]json.RawMessage
	require.Equal(t, http.StatusOK, control(t, e, http.MethodGet, "/_sim/state", nil, &keys))
	assert.Equal(t, []string{"alarms", "backups", "calls", "faults", "instances", "mutating", "now", "project_id"},
		slices.Sorted(maps.Keys(keys)), "the keys README.md and internal/otcsim/README.md name")
	require.Len(t, state.Instances, 1)
	assert.Equal(t, "controlled-01", state.Instances[0].Name)
	assert.Equal(t, []string{"eu-de-01"}, state.Instances[0].AvailabilityZones)
	assert.Len(t, state.Backups, 1)
	assert.Equal(t, 1, state.Mutating)

	// Status.
	require.Equal(t, http.StatusNoContent, control(t, e, http.MethodPost, "/_sim/instances/"+id+"/status", map[string]string{"status": "failed"}, nil))
	assert.Equal(t, StatusFailed, e.getInstance(t, id).Status)
	assert.Equal(t, http.StatusBadRequest, control(t, e, http.MethodPost, "/_sim/instances/"+id+"/status", map[string]string{"status": "ON FIRE"}, nil))
	assert.Equal(t, http.StatusBadRequest, control(t, e, http.MethodPost, "/_sim/instances/nope/status", map[string]string{"status": "ACTIVE"}, nil))
	e.sim.SetInstanceStatus(id, StatusActive)

	// Fail the next backup.
	require.Equal(t, http.StatusNoContent, control(t, e, http.MethodPost, "/_sim/instances/"+id+"/fail-next-backup", nil, nil))
	b, err := backups.Create(e.rds, backups.CreateOpts{InstanceID: id, Name: "doomed"})
	require.NoError(t, err)
	e.clock.Advance(e.sim.Options().Durations.Backup)
	got, err := backups.List(e.rds, backups.ListOpts{BackupID: b.ID})
	require.NoError(t, err)
	assert.Equal(t, backups.StatusFailed, got[0].Status)

	// Faults.
	var added struct {
		Fault faultView `json:"fault"`
	}
	require.Equal(t, http.StatusCreated, control(t, e, http.MethodPost, "/_sim/faults", map[string]string{"spec": "ListInstances:status:status=503,count=1"}, &added))
	assert.Equal(t, faultView{Op: "ListInstances", Kind: "status", Status: 503, Count: 1}, added.Fault)
	require.Equal(t, http.StatusCreated, control(t, e, http.MethodPost, "/_sim/faults", map[string]any{"op": "GetJob", "kind": "latency", "delay": "1ms"}, nil))
	assert.Equal(t, http.StatusBadRequest, control(t, e, http.MethodPost, "/_sim/faults", map[string]string{"spec": "x:boom"}, nil))
	assert.Equal(t, http.StatusBadRequest, control(t, e, http.MethodPost, "/_sim/faults", map[string]string{"op": "Bogus", "kind": "status"}, nil), "an operation that does not exist would never fire")
	var faults struct {
		Faults []faultView `json:"faults"`
	}
	require.Equal(t, http.StatusOK, control(t, e, http.MethodGet, "/_sim/faults", nil, &faults))
	assert.Len(t, faults.Faults, 2)
	_, err = instances.List(e.rds, instances.ListOpts{})
	require.Error(t, err)
	require.Equal(t, http.StatusNoContent, control(t, e, http.MethodDelete, "/_sim/faults", nil, nil))
	assert.Empty(t, e.sim.Faults())

	// Counters.
	var counters struct {
		Calls    map[string]int `json:"calls"`
		Mutating int            `json:"mutating"`
	}
	require.Equal(t, http.StatusOK, control(t, e, http.MethodGet, "/_sim/counters", nil, &counters))
	assert.Equal(t, 2, counters.Mutating)
	assert.Equal(t, 1, counters.Calls[OpCreateBackup])
	require.Equal(t, http.StatusNoContent, control(t, e, http.MethodDelete, "/_sim/counters", nil, nil))
	assert.Zero(t, e.sim.MutatingCalls())
	assert.Zero(t, e.sim.Calls(OpListInstances), "the control API is not counted")
}

func TestControlAdvanceNeedsManualClock(t *testing.T) {
	srv := NewServer(Options{EnableControl: true})
	t.Cleanup(srv.Close)
	resp, err := http.Post(srv.URL+"/_sim/clock/advance", "application/json", bytes.NewReader([]byte(`{"duration":"1s"}`)))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusConflict, resp.StatusCode)
}

func TestInstanceBackedByRealEndpoint(t *testing.T) {
	e := newEnv(t, Options{EnableControl: true})
	id := e.createActive(t, createOpts("real-mysql"))

	require.Equal(t, http.StatusNoContent, control(t, e, http.MethodPost, "/_sim/instances/"+id+"/endpoint",
		map[string]any{"host": "127.0.0.1", "port": 3307}, nil))
	in := e.getInstance(t, id)
	assert.Equal(t, []string{"127.0.0.1"}, in.PrivateIps)
	assert.Equal(t, 3307, in.Port)

	require.NoError(t, e.sim.SetInstanceEndpoint(id, "", 0))
	in = e.getInstance(t, id)
	assert.Equal(t, []string{"192.168.0.100"}, in.PrivateIps)
	assert.Equal(t, 3306, in.Port)
	require.Error(t, e.sim.SetInstanceEndpoint(id, "127.0.0.1", 0))
	require.Error(t, e.sim.SetInstanceEndpoint("nope", "127.0.0.1", 3307))
}

func TestAlarmStateAndMetricsThroughControl(t *testing.T) {
	e := newEnv(t, Options{EnableControl: true})
	ces := cesClient(t, e)
	id := e.createActive(t, createOpts("ctl-alarm"))
	alarmID, err := alarms.CreateAlarm(ces, alarms.CreateAlarmOpts{
		AlarmName: "mem-high",
		Metric: alarms.MetricForAlarm{Namespace: "SYS.RDS", MetricName: "rds002_mem_util",
			Dimensions: []alarms.MetricsDimension{{Name: "rds_cluster_id", Value: id}}},
		Condition: alarms.Condition{Period: 1, Filter: "average", ComparisonOperator: ">", Value: 90, Count: 1},
	})
	require.NoError(t, err)

	state := func() string {
		shown, err := alarms.ShowAlarm(ces, alarmID)
		require.NoError(t, err)
		return shown[0].AlarmState
	}
	assert.Equal(t, AlarmOK, state())
	require.Equal(t, http.StatusNoContent, control(t, e, http.MethodPost, "/_sim/metrics",
		map[string]any{"instance_id": id, "metric": "rds002_mem_util", "value": 99.0}, nil))
	assert.Equal(t, AlarmAlarm, state(), "evaluated on the pinned metric")

	require.Equal(t, http.StatusNoContent, control(t, e, http.MethodPost, "/_sim/alarms/"+alarmID+"/state", map[string]string{"state": "ok"}, nil))
	assert.Equal(t, AlarmOK, state(), "a forced state wins")
	assert.Equal(t, []AlarmView{{ID: alarmID, Name: "mem-high", MetricName: "rds002_mem_util", Enabled: true, State: AlarmOK}}, e.sim.Alarms())

	assert.Equal(t, http.StatusBadRequest, control(t, e, http.MethodPost, "/_sim/alarms/"+alarmID+"/state", map[string]string{"state": "panic"}, nil))
	assert.Equal(t, http.StatusBadRequest, control(t, e, http.MethodPost, "/_sim/alarms/nope/state", map[string]string{"state": "alarm"}, nil))
}

func TestOptionsEndpointsBackNewInstances(t *testing.T) {
	e := newEnv(t, Options{Endpoints: map[string]string{"real-one": "127.0.0.1:3307", "*": "db.local:13306"}})

	id, jobID := e.create(t, createOpts("real-one"))
	assert.Empty(t, e.getInstance(t, id).PrivateIps, "no address while BUILD")
	var job struct {
		Job struct {
			Entities struct {
				Instance struct {
					Endpoint string `json:"endpoint"`
				} `json:"instance"`
			} `json:"entities"`
		} `json:"job"`
	}
	e.clock.Advance(2 * time.Second)
	_, err := e.rds.Get(e.rds.ServiceURL("jobs")+"?id="+jobID, &job, nil)
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:3307", job.Job.Entities.Instance.Endpoint, "the job names the real server")
	e.clock.Advance(e.sim.Options().Durations.Create)
	in := e.getInstance(t, id)
	assert.Equal(t, []string{"127.0.0.1"}, in.PrivateIps)
	assert.Equal(t, 3307, in.Port)

	other := e.createActive(t, createOpts("any-other"))
	in = e.getInstance(t, other)
	assert.Equal(t, []string{"db.local"}, in.PrivateIps, "* matches names without an entry")
	assert.Equal(t, 13306, in.Port)

	for name, ep := range map[string]string{"no port": "127.0.0.1", "port 0": "127.0.0.1:0", "no host": ":3306", "text port": "h:x"} {
		_, _, err := ParseEndpoint(ep)
		assert.Error(t, err, name)
	}
}

// TestOptionsEndpointsByOwnerTags: a "NAMESPACE/NAME" key backs the instance whose ownership tags
// name that object, from the first request after the tags are written; before that, and for other
// objects, the instance name and "*" decide. SetInstanceEndpoint wins over all of them.
func TestOptionsEndpointsByOwnerTags(t *testing.T) {
	e := newEnv(t, Options{Endpoints: map[string]string{
		"team-a/shop": "10.9.0.1:3306", "rds-team-a-shop-0a1b2c3d": "10.9.0.2:3306", "*": "10.9.0.3:3306",
	}})
	endpoint := func(id string) string {
		in := e.getInstance(t, id)
		require.Len(t, in.PrivateIps, 1)
		return fmt.Sprintf("%s:%d", in.PrivateIps[0], in.Port)
	}
	owned := func(ns, name string) []tags.ResourceTag {
		return []tags.ResourceTag{{Key: OwnerNamespaceTag, Value: ns}, {Key: OwnerNameTag, Value: name}}
	}

	byName := e.createActive(t, createOpts("rds-team-a-shop-0a1b2c3d"))
	assert.Equal(t, "10.9.0.2:3306", endpoint(byName), "the OTC name, while no tags say whose it is")
	require.NoError(t, tags.Create(e.rds, "instances", byName, owned("team-a", "shop")).Err)
	assert.Equal(t, "10.9.0.1:3306", endpoint(byName), "namespace/name from the ownership tags wins")

	other := e.createActive(t, createOpts("rds-team-b-shop-99999999"))
	assert.Equal(t, "10.9.0.3:3306", endpoint(other))
	require.NoError(t, tags.Create(e.rds, "instances", other, owned("team-b", "shop")).Err)
	assert.Equal(t, "10.9.0.3:3306", endpoint(other), "another namespace's shop is not team-a/shop")
	require.NoError(t, tags.Create(e.rds, "instances", other, []tags.ResourceTag{{Key: OwnerNamespaceTag, Value: "team-a"}}).Err)
	assert.Equal(t, "10.9.0.1:3306", endpoint(other))

	require.NoError(t, e.sim.SetInstanceEndpoint(other, "127.0.0.1", 3307))
	assert.Equal(t, "127.0.0.1:3307", endpoint(other), "a pinned endpoint wins")
	require.NoError(t, e.sim.SetInstanceEndpoint(other, "", 0))
	assert.Equal(t, "10.9.0.1:3306", endpoint(other), "unpinned, the options decide again")
}

// TestOptionsEndpointsByEngine: "engine:ENGINE" backs the instances of that engine that no name
// or object names, so a MariaDB can back the MySQL instances and a PostgreSQL the PostgreSQL ones.
func TestOptionsEndpointsByEngine(t *testing.T) {
	e := newEnv(t, Options{Endpoints: map[string]string{
		EngineKey("PostgreSQL"): "127.0.0.1:5433", "*": "127.0.0.1:3307", "named-pg": "10.9.0.9:5432",
	}})
	endpoint := func(id string) string {
		in := e.getInstance(t, id)
		require.Len(t, in.PrivateIps, 1)
		return fmt.Sprintf("%s:%d", in.PrivateIps[0], in.Port)
	}
	pg := func(name string) instances.CreateRdsOpts {
		o := createOpts(name)
		o.Datastore = &instances.Datastore{Type: "PostgreSQL", Version: "15"}
		o.FlavorRef, o.Port = "rds.pg.n1.large.2", ""
		return o
	}
	assert.Equal(t, "127.0.0.1:5433", endpoint(e.createActive(t, pg("any-pg"))), "a PostgreSQL instance: the engine's server")
	assert.Equal(t, "127.0.0.1:3307", endpoint(e.createActive(t, createOpts("any-mysql"))), "a MySQL instance: *")
	assert.Equal(t, "10.9.0.9:5432", endpoint(e.createActive(t, pg("named-pg"))), "a name wins over the engine")
}

func TestEndpointFlags(t *testing.T) {
	f := EndpointFlags{}
	for _, v := range []string{"team-a/shop=127.0.0.1:3307", "rds-x=db:3306", "127.0.0.1:3306"} {
		require.NoError(t, f.Set(v), v)
	}
	assert.Equal(t, EndpointFlags{"team-a/shop": "127.0.0.1:3307", "rds-x": "db:3306", "*": "127.0.0.1:3306"}, f)
	assert.Equal(t, "*=127.0.0.1:3306 rds-x=db:3306 team-a/shop=127.0.0.1:3307", f.String())
	require.NoError(t, f.Set("engine:postgresql=127.0.0.1:5433"))
	assert.Equal(t, "127.0.0.1:5433", f[EngineKey("PostgreSQL")], "the engine's name is spelled as OTC spells it")
	for _, bad := range []string{"=h:1", "/shop=h:1", "team-a/=h:1", "a/b/c=h:1", "x=h", "h:70000", "engine:oracle=h:1"} {
		assert.Error(t, f.Set(bad), bad)
	}
}
