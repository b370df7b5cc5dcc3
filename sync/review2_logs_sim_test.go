package sync_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/logsapi"
)

// REVIEW2 (logs, item 3): a tenant who may patch rds/status writes status.logs as if its request had
// been accepted already (request equal to spec.logs.request, state Starting). decide() only counts
// a request whose value differs from status.logs.request, so nothing is counted, neither in
// status.logs.accepted nor in the process memory (logRequests); start() issues a fresh capability,
// and the read limiter keys on uid/request, so each forged request value buys 20 new reads.
// docs/logs.md promises at most 60 log reads per object and hour "whatever values are set", and
// that erasing status buys no reads.
func TestReview2ForgedStatusLogsBypassesLogRequestLimit(t *testing.T) {
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
