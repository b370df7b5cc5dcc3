package reconcile_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/test/metacontroller"
	"github.com/mcsps/rds-lambda-controller/test/testutil"
)

// threeParameters are three MySQL parameters, innodb_buffer_pool_size needing a restart.
var threeParameters = map[string]string{"max_connections": "300", "innodb_buffer_pool_size": "3221225472", "long_query_time": "2"}

// simParameters is the instance's parameters as the simulator holds them.
func (w *day2World) simParameters() otcsim.ParametersView {
	w.t.Helper()
	v, ok := w.sim.InstanceParameters(w.status().ID)
	require.True(w.t, ok)
	return v
}

// TestParametersEndToEnd drives spec.parameters through the hooks, the real SDK and the simulator:
// three parameters, one needing a restart, are set by one call; status shows the pending restart
// and nothing restarts until restartrequest asks; a console change is set back at the drift
// check; an unknown parameter and an out-of-range value each get a condition and no call.
func TestParametersEndToEnd(t *testing.T) {
	w := newDay2World(t, nil, nil)

	// Three parameters: one call reads them and sets all three in one change.
	w.edit(func(s *v1alpha1.RdsSpec) { s.Parameters = threeParameters })
	w.sync()
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpGetInstanceConfig), "one read of the instance's parameters")
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpUpdateInstanceCfg), "one change for the three")
	assert.Equal(t, 1, w.sim.MutatingCalls(), "and no other change")
	v := w.simParameters()
	for name, want := range threeParameters {
		assert.Equal(t, want, v.Values[name], name)
	}
	assert.Equal(t, []string{"innodb_buffer_pool_size"}, v.PendingRestart, "OTC holds the buffer pool's value until a restart")

	st := w.status()
	require.NotNil(t, st.Parameters)
	assert.Equal(t, []string{"innodb_buffer_pool_size"}, st.Parameters.PendingRestart)
	assert.Equal(t, threeParameters, st.Parameters.Applied)
	cond := w.condition(v1alpha1.ConditionParameters)
	assert.Equal(t, metav1.ConditionFalse, cond.Status)
	assert.Equal(t, reconcile.ReasonParametersPendingRestart, cond.Reason)
	assert.Contains(t, cond.Message, "innodb_buffer_pool_size")
	assert.Equal(t, metav1.ConditionTrue, w.condition(v1alpha1.ConditionSynced).Status)

	// Manual (the default): no restart, however often the object is synced; no read either
	// until the drift check.
	w.settle(10)
	assert.Zero(t, w.sim.Calls(otcsim.OpRestart), "no restart unasked")
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpGetInstanceConfig), "no read between two drift checks")
	assert.Equal(t, 1, w.sim.MutatingCalls())
	assert.Equal(t, []string{"innodb_buffer_pool_size"}, w.simParameters().PendingRestart)
	assert.Equal(t, reconcile.ReasonParametersPendingRestart, w.condition(v1alpha1.ConditionParameters).Reason)

	// The user asks for the restart: it brings the value into effect and the condition clears.
	w.edit(func(s *v1alpha1.RdsSpec) { s.Restartrequest = "2026-05-01" })
	w.settle(6)
	w.clock.Advance(otcsim.DefaultDurations().Restart)
	w.settle(3)
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpRestart), "one restart, the one asked for")
	assert.Empty(t, w.simParameters().PendingRestart, "the restart brought the value into effect")
	assert.Empty(t, w.status().Parameters.PendingRestart)
	cond = w.condition(v1alpha1.ConditionParameters)
	assert.Equal(t, metav1.ConditionTrue, cond.Status, cond.Message)
	assert.Equal(t, reconcile.ReasonParametersApplied, cond.Reason)
	w.requireSettled("the parameters are in effect")

	// A change in the console is set back at the next drift check, and only then.
	_, _, err := w.sim.SetInstanceParameters(w.status().ID, map[string]string{"max_connections": "999", "wait_timeout": "600"})
	require.NoError(t, err)
	w.sim.ResetCounters()
	w.settle(3)
	assert.Equal(t, "999", w.simParameters().Values["max_connections"], "not yet: the drift check is not due")
	assert.Zero(t, w.sim.Calls(otcsim.OpGetInstanceConfig))
	w.clock.Advance(15 * time.Minute)
	w.sync()
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpGetInstanceConfig), "the drift check reads once")
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpUpdateInstanceCfg), "and sets the value back")
	assert.Equal(t, "300", w.simParameters().Values["max_connections"])
	assert.Equal(t, "600", w.simParameters().Values["wait_timeout"], "a parameter the spec does not name is left alone")
	w.sync()
	w.requireSettled("the drift was corrected")

	// An unknown parameter and an out-of-range value: a condition names each, nothing is set.
	w.sim.ResetCounters()
	w.edit(func(s *v1alpha1.RdsSpec) {
		s.Parameters = map[string]string{"max_connections": "999999999", "no_such_parameter": "1", "long_query_time": "5"}
	})
	w.sync()
	w.sync()
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpGetInstanceConfig), "read once for the new generation")
	assert.Zero(t, w.sim.MutatingCalls(), "nothing is set while a value is wrong")
	cond = w.condition(v1alpha1.ConditionParameters)
	assert.Equal(t, metav1.ConditionFalse, cond.Status)
	assert.Equal(t, reconcile.ReasonInvalidParameters, cond.Reason)
	assert.Equal(t, "parameters max_connections: 999999999 is outside its range 10-100000. "+
		"parameters no_such_parameter: OTC knows no such parameter for MySQL 8.0.", cond.Message)
	synced := w.condition(v1alpha1.ConditionSynced)
	assert.Equal(t, metav1.ConditionFalse, synced.Status)
	assert.Equal(t, reconcile.ReasonInvalidParameters, synced.Reason)
	assert.Equal(t, "2", w.simParameters().Values["long_query_time"], "the valid value was not set either")
	before := w.status()
	w.sync()
	assert.Equal(t, before, w.status(), "the same answer again")

	// Removing them: the condition goes, the values stay as they are in OTC.
	w.edit(func(s *v1alpha1.RdsSpec) { s.Parameters = nil })
	w.sync()
	assert.Nil(t, w.status().Parameters)
	for _, c := range w.status().Conditions {
		assert.NotEqual(t, v1alpha1.ConditionParameters, c.Type)
	}
	assert.Equal(t, "300", w.simParameters().Values["max_connections"])
}

// TestParametersImmediateRestart: with parametersrestart Immediate the instance is restarted once,
// right after the values were set, and the values are in effect.
func TestParametersImmediateRestart(t *testing.T) {
	w := newDay2World(t, nil, nil)
	w.edit(func(s *v1alpha1.RdsSpec) {
		s.Parameters = map[string]string{"innodb_buffer_pool_size": "3221225472"}
		s.Parametersrestart = v1alpha1.ParametersRestartImmediate
	})
	w.sync()
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpUpdateInstanceCfg))
	assert.Zero(t, w.sim.Calls(otcsim.OpRestart), "the restart is the next call's change")
	w.sync()
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpRestart))
	require.NotNil(t, w.status().Operation)
	assert.Equal(t, reconcile.OpParametersRestart, w.status().Operation.Type)
	w.clock.Advance(otcsim.DefaultDurations().Restart)
	w.settle(3)
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpRestart), "once")
	assert.Empty(t, w.simParameters().PendingRestart)
	assert.Equal(t, reconcile.ReasonParametersApplied, w.condition(v1alpha1.ConditionParameters).Reason)
	w.requireSettled("restarted into the new values")
}

// newCreateWorld is day2World before the create: the object is synced until its instance is
// ACTIVE (at most calls calls), with the clock moved on by the create's duration once it is asked.
func newCreateWorld(t *testing.T, spec func(*v1alpha1.RdsSpec)) *day2World {
	t.Helper()
	clock := otcsim.NewManualClock(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC))
	srv := otcsim.NewServer(otcsim.Options{Clock: clock})
	t.Cleanup(srv.Close)
	client := testutil.Login(t, srv, nil)
	w := &day2World{
		t: t, clock: clock, srv: srv, sim: srv.Sim, client: client,
		r: reconcile.New(reconcile.Config{Cloud: client, Now: clock.Now, CallTimeout: 5 * time.Second}),
	}
	obj := v1alpha1.Rds{
		ObjectMeta: metav1.ObjectMeta{Name: "shop", Namespace: "team-a", UID: "uid-params", Generation: 1},
		Spec: v1alpha1.RdsSpec{
			Datastoretype: "MySQL", Datastoreversion: "8.0", Flavorref: "rds.mysql.n1.large.2",
			Volumetype: "CLOUDSSD", Volumesize: 40, Availabilityzone: "eu-de-01", Region: "eu-de",
			Vpc: otcsim.SeedVPCName, Subnet: otcsim.SeedSubnetName, Securitygroup: otcsim.SeedSecurityGroupName,
			Password: "Sim-Passw0rd!",
		},
	}
	spec(&obj.Spec)
	w.mc = metacontroller.NewRds(obj)
	return w
}

// untilActive syncs until the instance is ACTIVE, moving the clock past the create.
func (w *day2World) untilActive(calls int) {
	w.t.Helper()
	for range calls {
		w.sync()
		if w.status().Status == "ACTIVE" {
			return
		}
		if w.status().ID != "" {
			w.clock.Advance(otcsim.DefaultDurations().Create)
		}
	}
	w.t.Fatalf("the instance is not ACTIVE after %d calls: %+v", calls, w.status())
}

// TestParametersAtCreate: spec.parameters goes with the create through a template the controller
// makes for the object, so the new instance is ACTIVE with the values in effect (no restart
// pending, nothing set afterwards); the template is deleted once the instance is ACTIVE. A bad
// value stops the create before anything is made.
func TestParametersAtCreate(t *testing.T) {
	values := map[string]string{"max_connections": "300", "innodb_buffer_pool_size": "3221225472"}

	t.Run("bad value: nothing is made", func(t *testing.T) {
		w := newCreateWorld(t, func(s *v1alpha1.RdsSpec) { s.Parameters = map[string]string{"max_connections": "5"} })
		w.sync()
		w.sync()
		assert.Zero(t, w.sim.MutatingCalls(), "no template, no instance")
		assert.Zero(t, w.sim.Calls(otcsim.OpCreateInstance))
		cond := w.condition(v1alpha1.ConditionParameters)
		assert.Equal(t, reconcile.ReasonInvalidParameters, cond.Reason)
		assert.Equal(t, "parameters max_connections: 5 is outside its range 10-100000.", cond.Message)
		assert.Equal(t, reconcile.ReasonInvalidParameters, w.condition(v1alpha1.ConditionSynced).Reason)

		w.edit(func(s *v1alpha1.RdsSpec) { s.Parameters = values })
		w.untilActive(8)
		assert.Equal(t, 1, w.sim.Calls(otcsim.OpCreateInstance), "the fixed spec is created")
	})

	w := newCreateWorld(t, func(s *v1alpha1.RdsSpec) { s.Parameters = values })
	w.untilActive(8)
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpCreateConfiguration), "one template")
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpCreateInstance), "one instance, created with it")
	v := w.simParameters()
	assert.Equal(t, "300", v.Values["max_connections"])
	assert.Equal(t, "3221225472", v.Values["innodb_buffer_pool_size"])
	assert.Empty(t, v.PendingRestart, "in effect from the start: no restart to lose them")

	w.settle(4)
	assert.Zero(t, w.sim.Calls(otcsim.OpUpdateInstanceCfg), "nothing left to set")
	assert.Zero(t, w.sim.Calls(otcsim.OpRestart))
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpDeleteConfiguration), "the template, once the instance is ACTIVE")
	templates, err := w.client.ListParameterTemplates(context.Background())
	require.NoError(t, err)
	for _, tpl := range templates {
		assert.False(t, strings.HasPrefix(tpl.Name, "rds-team-a-shop-"), "no template of the object is left: %s", tpl.Name)
	}
	st := w.status()
	require.NotNil(t, st.Parameters)
	assert.Empty(t, st.Parameters.Template)
	assert.Empty(t, st.Parameters.PendingRestart)
	assert.Equal(t, reconcile.ReasonParametersApplied, w.condition(v1alpha1.ConditionParameters).Reason)
	w.requireSettled("created with its parameters")
}

// TestParametersTemplateGoneBeforeTheObject: an object deleted while its instance is still being
// created (Skipfinalbackup, so the deletion needs no backup) is finalized only once the parameter
// template made for its create is deleted too.
func TestParametersTemplateGoneBeforeTheObject(t *testing.T) {
	w := newCreateWorld(t, func(s *v1alpha1.RdsSpec) {
		s.Parameters = map[string]string{"max_connections": "300"}
		s.Skipfinalbackup = true
	})
	for range 4 {
		w.sync()
		if w.status().ID != "" {
			break
		}
	}
	require.Equal(t, "BUILD", w.status().Status)
	require.NotEmpty(t, w.status().Parameters.Template)
	w.mc.Delete(w.clock.Now())
	finalized := false
	for i := 0; i < 12 && !finalized; i++ {
		resp, err := w.mc.Finalize(context.Background(), w.r)
		require.NoError(t, err)
		finalized = resp.Finalized
		w.clock.Advance(time.Minute)
	}
	require.True(t, finalized, "the object goes")
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpDeleteConfiguration), "its template first")
	templates, err := w.client.ListParameterTemplates(context.Background())
	require.NoError(t, err)
	for _, tpl := range templates {
		assert.True(t, !tpl.UserDefined, "only the defaults are left: %s", tpl.Name)
	}
}

// TestParametersRestartInMaintenanceWindow: with parametersrestart InMaintenanceWindow the values
// are set at once and the instance is restarted once, in its maintenance window (OTC's default
// 02:00-06:00 here), not before.
func TestParametersRestartInMaintenanceWindow(t *testing.T) {
	w := newDay2World(t, nil, nil) // the clock stands at 10:00 UTC
	w.edit(func(s *v1alpha1.RdsSpec) {
		s.Parameters = map[string]string{"innodb_buffer_pool_size": "3221225472"}
		s.Parametersrestart = v1alpha1.ParametersRestartInMaintenanceWindow
	})
	w.settle(5)
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpUpdateInstanceCfg))
	assert.Zero(t, w.sim.Calls(otcsim.OpRestart), "not outside the window")
	assert.Contains(t, w.condition(v1alpha1.ConditionParameters).Message, "maintenance window 02:00-06:00")

	w.clock.Advance(16 * time.Hour) // 02:00 and a little, the next day
	w.sync()
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpRestart), "in the window")
	w.clock.Advance(otcsim.DefaultDurations().Restart)
	w.settle(3)
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpRestart), "once")
	assert.Empty(t, w.simParameters().PendingRestart)
	assert.Equal(t, reconcile.ReasonParametersApplied, w.condition(v1alpha1.ConditionParameters).Reason)
}

// TestParametersLostAnswer: OTC sets the values but its answer is lost. The call records them as
// set with the restart they need; a later call on the status from before that answer (the answer
// that recorded it was lost too) reads them set, changes nothing, and still reports the restart.
func TestParametersLostAnswer(t *testing.T) {
	w := newDay2World(t, nil, nil)
	fault, err := otcsim.ParseFault(otcsim.OpUpdateInstanceCfg + ":commit-drop:count=1")
	require.NoError(t, err)
	w.sim.AddFault(fault)
	w.edit(func(s *v1alpha1.RdsSpec) { s.Parameters = threeParameters })
	before := w.mc.Rds() // the object as the next, stale, call will see it
	w.sync()
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpUpdateInstanceCfg))
	assert.Equal(t, []string{"innodb_buffer_pool_size"}, w.simParameters().PendingRestart, "OTC set them")
	assert.Equal(t, []string{"innodb_buffer_pool_size"}, w.status().Parameters.PendingRestart, "recorded as set")

	w.mc.SetStatus(before.Status) // the answer that recorded it is lost as well
	w.sync()
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpUpdateInstanceCfg), "nothing set again")
	assert.Equal(t, []string{"innodb_buffer_pool_size"}, w.status().Parameters.PendingRestart, "the restart is still owed")
	assert.Equal(t, reconcile.ReasonParametersPendingRestart, w.condition(v1alpha1.ConditionParameters).Reason)
}
