package reconcile_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
)

// userTemplates are the project's templates that are not OTC's defaults.
func (w *day2World) userTemplates() []string {
	w.t.Helper()
	list, err := w.client.ListParameterTemplates(context.Background())
	require.NoError(w.t, err)
	var names []string
	for _, t := range list {
		if t.UserDefined {
			names = append(names, t.Name)
		}
	}
	return names
}

// TestParametersTemplateGoneDeletedBeforeCreate (review #20): an object deleted after the call that
// made its template and before the create that would name it leaves no template behind: that call
// records the template in status.parameters.template, which the finalize call goes by.
func TestParametersTemplateGoneDeletedBeforeCreate(t *testing.T) {
	w := newCreateWorld(t, func(s *v1alpha1.RdsSpec) {
		s.Parameters = map[string]string{"max_connections": "300"}
		s.Skipfinalbackup = true
	})
	w.sync()
	require.Equal(t, 1, w.sim.Calls(otcsim.OpCreateConfiguration), "the template first")
	require.Empty(t, w.status().ID, "no instance yet")
	require.Len(t, w.userTemplates(), 1)

	w.finalizeAll()
	assert.Empty(t, w.userTemplates(), "the template made for the create is deleted with the object")
	assert.Empty(t, w.sim.Instances())
}

// TestParametersTemplateGoneStatusLost (review #20): the status that named the create's template
// is lost (the create call's answer, or a tenant's status write): the template is still deleted,
// at the latest with the object, since the spec names parameters.
func TestParametersTemplateGoneStatusLost(t *testing.T) {
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
	require.NotEmpty(t, w.status().Parameters.Template)
	st := w.status()
	st.Parameters = nil
	w.mc.SetStatus(st)

	w.finalizeAll()
	assert.Empty(t, w.userTemplates(), "the template made for the create is deleted with the object")
	assert.Empty(t, w.sim.Instances())
}

// TestParametersTemplateGoneActiveStatusLost (review #20): the answer that named the create's
// template in status is lost; the instance becomes ACTIVE all the same. The first check of its
// parameters looks for the object's templates and deletes them: none is left for the object's
// lifetime.
func TestParametersTemplateGoneActiveStatusLost(t *testing.T) {
	w := newCreateWorld(t, func(s *v1alpha1.RdsSpec) { s.Parameters = map[string]string{"max_connections": "300"} })
	for range 4 {
		w.sync()
		if w.status().ID != "" {
			break
		}
	}
	require.NotEmpty(t, w.status().Parameters.Template)
	st := w.status()
	st.Parameters = nil
	w.mc.SetStatus(st)
	w.untilActive(6)
	w.settle(4)
	assert.Empty(t, w.userTemplates(), "the template made for the create is deleted once the instance is ACTIVE")
	assert.Equal(t, "300", w.simParameters().Values["max_connections"])
}

// TestParametersImmediateAfterFailedChange (review #20): OTC fails the change without setting it
// (a 503: no answer to tell). The restart parametersrestart Immediate makes comes only once the
// values are read set: a restart for values never set would be followed by a second one when
// the drift check sets them.
func TestParametersImmediateAfterFailedChange(t *testing.T) {
	w := newDay2World(t, nil, nil)
	fault, err := otcsim.ParseFault(otcsim.OpUpdateInstanceCfg + ":status:status=503,count=1")
	require.NoError(t, err)
	w.sim.AddFault(fault)
	w.edit(func(s *v1alpha1.RdsSpec) {
		s.Parameters = map[string]string{"innodb_buffer_pool_size": "3221225472"}
		s.Parametersrestart = v1alpha1.ParametersRestartImmediate
	})
	w.sync()
	require.Equal(t, 1, w.sim.Calls(otcsim.OpUpdateInstanceCfg))
	require.NotEqual(t, "3221225472", w.simParameters().Values["innodb_buffer_pool_size"], "OTC set nothing")
	for range 4 {
		w.sync()
		w.clock.Advance(otcsim.DefaultDurations().Restart)
	}
	assert.Equal(t, "3221225472", w.simParameters().Values["innodb_buffer_pool_size"], "set")
	assert.Empty(t, w.simParameters().PendingRestart, "and in effect")
	w.clock.Advance(reconcile.DefaultParametersDriftCheck)
	w.settle(4)
	w.clock.Advance(otcsim.DefaultDurations().Restart)
	w.settle(4)
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpRestart), "one restart")
	assert.Equal(t, reconcile.ReasonParametersApplied, w.condition(v1alpha1.ConditionParameters).Reason)
}

// TestParametersImmediateWithRestartRequest (review #20): parameters that need a restart and a
// restartrequest in the same edit, with parametersrestart Immediate: the values go first, and the
// one restart asked for brings them into effect; the instance is not restarted twice.
func TestParametersImmediateWithRestartRequest(t *testing.T) {
	w := newDay2World(t, nil, nil)
	w.edit(func(s *v1alpha1.RdsSpec) {
		s.Parameters = map[string]string{"innodb_buffer_pool_size": "3221225472"}
		s.Parametersrestart = v1alpha1.ParametersRestartImmediate
		s.Restartrequest = "2026-05-01"
	})
	for range 8 {
		w.sync()
		w.clock.Advance(otcsim.DefaultDurations().Restart)
	}
	w.settle(4)
	assert.Equal(t, "3221225472", w.simParameters().Values["innodb_buffer_pool_size"])
	assert.Empty(t, w.simParameters().PendingRestart, "in effect")
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpRestart), "one restart")
	assert.Equal(t, reconcile.ReasonParametersApplied, w.condition(v1alpha1.ConditionParameters).Reason)
}

// TestParametersBooleanChecked (review #20): a boolean parameter's allowed values ("on|off", as
// OTC reports them) are checked like any other's: a value OTC would refuse gets InvalidParameters
// naming the parameter, and no call.
func TestParametersBooleanChecked(t *testing.T) {
	w := newDay2World(t, nil, nil)
	w.edit(func(s *v1alpha1.RdsSpec) {
		s.Parameters = map[string]string{"explicit_defaults_for_timestamp": "maybe", "max_connections": "300"}
	})
	w.sync()
	assert.Zero(t, w.sim.Calls(otcsim.OpUpdateInstanceCfg), "no call")
	cond := w.condition(v1alpha1.ConditionParameters)
	assert.Equal(t, reconcile.ReasonInvalidParameters, cond.Reason)
	assert.Contains(t, cond.Message, "explicit_defaults_for_timestamp")

	w.edit(func(s *v1alpha1.RdsSpec) {
		s.Parameters = map[string]string{"explicit_defaults_for_timestamp": "false", "max_connections": "300"}
	})
	w.settle(3)
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpUpdateInstanceCfg))
	assert.Equal(t, "false", w.simParameters().Values["explicit_defaults_for_timestamp"])
	assert.Equal(t, reconcile.ReasonParametersApplied, w.condition(v1alpha1.ConditionParameters).Reason)
}

// TestParametersRefusedNotEverySync (review #20): OTC refuses a change the check passed (a rule
// of its own). The refusal is told in the Parameters condition, and the change is tried again at
// the spec's next generation or the drift check, not with a read and a refused call at every
// steady sync.
func TestParametersRefusedNotEverySync(t *testing.T) {
	w := newDay2World(t, nil, nil)
	fault, err := otcsim.ParseFault(otcsim.OpUpdateInstanceCfg + ":status:status=400")
	require.NoError(t, err)
	w.sim.AddFault(fault)
	w.edit(func(s *v1alpha1.RdsSpec) { s.Parameters = map[string]string{"max_connections": "300"} })
	w.sync()
	require.Equal(t, 1, w.sim.Calls(otcsim.OpUpdateInstanceCfg))
	for range 2 {
		w.clock.Advance(5 * time.Minute)
		w.sync()
	}
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpGetInstanceConfig), "no read between two drift checks")
	assert.Equal(t, 1, w.sim.Calls(otcsim.OpUpdateInstanceCfg), "no refused call at every sync")
	assert.Equal(t, reconcile.ReasonInvalidParameters, w.condition(v1alpha1.ConditionParameters).Reason)
	assert.Equal(t, metav1.ConditionFalse, w.condition(v1alpha1.ConditionSynced).Status)

	w.clock.Advance(reconcile.DefaultParametersDriftCheck)
	w.sync()
	assert.Equal(t, 2, w.sim.Calls(otcsim.OpUpdateInstanceCfg), "tried again at the drift check")
}

// TestParametersCheckedInTheFuture (review #20): a status.parameters.checked later than now (a
// hooks replica whose clock runs ahead, a status written by hand) does not put the drift check
// off: a console change is set back at the next call.
func TestParametersCheckedInTheFuture(t *testing.T) {
	w := newDay2World(t, nil, nil)
	w.edit(func(s *v1alpha1.RdsSpec) { s.Parameters = map[string]string{"max_connections": "300"} })
	w.settle(2)
	require.Equal(t, "300", w.simParameters().Values["max_connections"])
	st := w.status()
	future := metav1.NewTime(w.clock.Now().Add(365 * 24 * time.Hour))
	st.Parameters.Checked = &future
	w.mc.SetStatus(st)
	_, _, err := w.sim.SetInstanceParameters(st.ID, map[string]string{"max_connections": "999"})
	require.NoError(t, err)
	w.sync()
	assert.Equal(t, "300", w.simParameters().Values["max_connections"], "set back")
	assert.False(t, w.status().Parameters.Checked.After(w.clock.Now()), "checked now")
}

// TestParametersPendingUntilStopped (review #20): values that wait for a restart are in effect
// once the instance was stopped and started again: the start boots the database with them. Status
// no longer lists them, so that no restart is made (Immediate, InMaintenanceWindow) or asked
// (Manual) for them.
func TestParametersPendingUntilStopped(t *testing.T) {
	w := newDay2World(t, nil, nil)
	w.edit(func(s *v1alpha1.RdsSpec) {
		s.Parameters = map[string]string{"innodb_buffer_pool_size": "3221225472"}
		s.Parametersrestart = v1alpha1.ParametersRestartInMaintenanceWindow
	})
	w.sync()
	require.Equal(t, []string{"innodb_buffer_pool_size"}, w.status().Parameters.PendingRestart)
	w.edit(func(s *v1alpha1.RdsSpec) { s.Stopped = true })
	for range 6 {
		w.sync()
		w.clock.Advance(otcsim.DefaultDurations().Restart)
	}
	require.Equal(t, "SHUTDOWN", w.view().Status)
	w.edit(func(s *v1alpha1.RdsSpec) { s.Stopped = false })
	for range 6 {
		w.sync()
		w.clock.Advance(otcsim.DefaultDurations().Restart)
	}
	require.Equal(t, "ACTIVE", w.view().Status)
	assert.Empty(t, w.simParameters().PendingRestart, "the start booted the database with the values")
	assert.Empty(t, w.status().Parameters.PendingRestart)
	assert.Equal(t, reconcile.ReasonParametersApplied, w.condition(v1alpha1.ConditionParameters).Reason)
	window := time.Date(2026, 5, 2, 3, 0, 0, 0, time.UTC) // within OTC's default window, 02:00-06:00
	w.clock.Advance(window.Sub(w.clock.Now()))
	w.settle(3)
	assert.Zero(t, w.sim.Calls(otcsim.OpRestart), "no restart for values in effect")
}
