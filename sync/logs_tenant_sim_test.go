package reconcile_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/logsapi"
	"github.com/mcsps/rds-lambda-controller/test/metacontroller"
)

// A status.logs written as if its request had been accepted (request equal to spec.logs.request,
// state Starting, a new Job name) buys no capability beyond the limit: the process counts every
// request it issues a capability for, whatever status says, so at most 3 Jobs of 20 reads each
// run per object and hour. Found in review (issue #17): each forged request value bought a fresh
// capability and 20 more reads, without counting.
func TestForgedStatusLogsBuysNoRequestBeyondTheLimit(t *testing.T) {
	w := newLogsLoop(t)
	w.active()
	id := w.status().ID
	w.sim.ResetCounters()
	jobs := 0
	for i := range 10 {
		req := fmt.Sprintf("forged-%d", i)
		w.edit(func(s *v1alpha1.RdsSpec) {
			s.Logs = &v1alpha1.LogsRequest{Request: req, Types: []string{v1alpha1.LogTypeError}}
		})
		st := w.status()
		st.Logs = &v1alpha1.LogsStatus{
			Request: req, Job: fmt.Sprintf("lg-logs-forged%d", i), State: v1alpha1.LogsStarting,
			Since: "1h", Lines: 200, Types: []string{v1alpha1.LogTypeError},
		}
		w.mc.SetStatus(st)
		for range 3 {
			w.sync()
		}
		ls := w.status().Logs
		require.NotNil(t, ls)
		if ls.State != v1alpha1.LogsRunning {
			continue
		}
		jobs++
		token := string(w.mc.Secrets[ls.Job+"-credentials"].Data[logsapi.EnvToken])
		for range 25 {
			_, _ = w.r.ReadLogs(context.Background(), token, logsapi.Request{Instance: id, Type: v1alpha1.LogTypeError})
		}
		w.finishJob(batchv1.JobComplete)
		w.sync()
		w.clock.Advance(time.Minute)
	}
	logReads := w.sim.Calls(otcsim.OpListErrorLogs) + w.sim.Calls(otcsim.OpListSlowLogs)
	t.Logf("log Jobs started: %d, OTC log reads within ~10 minutes: %d", jobs, logReads)
	assert.LessOrEqual(t, jobs, 3, "at most 3 log requests per object and hour")
	assert.LessOrEqual(t, logReads, 3*20, "at most 60 log reads per object and hour")
}

// Deleting an object under Retain and adopting its instance again with a new object (a new uid)
// buys no new log requests: the process counts them by instance as well, at most 3 per instance
// and hour across objects. Found in review (issue #17): every cycle, a handful of hook calls,
// bought 3 more requests of 20 reads each against the same instance on the controller's login.
func TestRecreateAdoptCycleBuysNoLogRequestsBeyondTheInstanceLimit(t *testing.T) {
	w := newLogsLoop(t)
	spec := restoreSpec()
	spec.Deletionpolicy = v1alpha1.DeletionPolicyRetain
	w.mc = metacontroller.NewRds(v1alpha1.Rds{
		ObjectMeta: metav1.ObjectMeta{Name: "lg", Namespace: "team-a", UID: types.UID("uid-lg-0"), Generation: 1},
		Spec:       spec,
	})
	w.active()
	id := w.status().ID
	w.sim.ResetCounters()
	start := w.clock.Now()
	jobs := 0
	for cycle := range 4 {
		if cycle > 0 {
			s := spec
			s.Instanceid = id
			w.mc = metacontroller.NewRds(v1alpha1.Rds{
				ObjectMeta: metav1.ObjectMeta{Name: "lg", Namespace: "team-a", UID: types.UID(fmt.Sprintf("uid-lg-%d", cycle)), Generation: 1},
				Spec:       s,
			})
			for range 3 {
				w.sync()
			}
			require.Equal(t, id, w.status().ID, "the released instance is adopted again")
		}
		for i := range 3 {
			req := fmt.Sprintf("c%d-r%d", cycle, i)
			w.edit(func(s *v1alpha1.RdsSpec) {
				s.Logs = &v1alpha1.LogsRequest{Request: req, Types: []string{v1alpha1.LogTypeError}}
			})
			for range 3 {
				w.sync()
			}
			ls := w.status().Logs
			if ls == nil || ls.Request != req || ls.State != v1alpha1.LogsRunning {
				continue
			}
			jobs++
			token := string(w.mc.Secrets[ls.Job+"-credentials"].Data[logsapi.EnvToken])
			for range 25 {
				_, _ = w.r.ReadLogs(context.Background(), token, logsapi.Request{Instance: id, Type: v1alpha1.LogTypeError})
			}
			w.finishJob(batchv1.JobComplete)
			w.sync()
		}
		// kubectl delete: Retain releases the instance in two finalize calls.
		for range 5 {
			if w.mc.Gone() {
				break
			}
			w.finalize()
		}
		require.True(t, w.mc.Gone(), "the object is released")
		w.clock.Advance(time.Minute)
	}
	logReads := w.sim.Calls(otcsim.OpListErrorLogs) + w.sim.Calls(otcsim.OpListSlowLogs)
	t.Logf("within %s: %d log Jobs, %d OTC log reads of one instance", w.clock.Now().Sub(start), jobs, logReads)
	assert.LessOrEqual(t, logReads, 3*20, "at most 60 log reads of one instance per hour, whatever the tenant does with its objects")
	assert.Equal(t, 3, jobs, "the first object's three requests, none of its successors'")
}
