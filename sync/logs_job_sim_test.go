package reconcile_test

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/otc"
	"github.com/mcsps/rds-lambda-controller/sync/dbusers"
	"github.com/mcsps/rds-lambda-controller/sync/hook"
	"github.com/mcsps/rds-lambda-controller/sync/logsapi"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
	"github.com/mcsps/rds-lambda-controller/test/metacontroller"
)

// logsLoop runs one Rds object against the simulator through the Metacontroller stand-in, with
// the log steps in mind: it records, for each log Job, the capability's expiry in the Secret it
// was created with.
type logsLoop struct {
	t     *testing.T
	sim   *otcsim.Sim
	clock *otcsim.ManualClock
	r     *reconcile.Reconciler
	mc    *metacontroller.Object
	// jobCredential is the expiry of the Secret's capability when the Job first appeared.
	jobCredential map[string]time.Time
	// client is the hooks' OTC client, for acting behind their back.
	client *otc.Client
}

func newLogsLoop(t *testing.T) *logsLoop {
	clock := otcsim.NewManualClock(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC))
	srv := otcsim.NewServer(otcsim.Options{Clock: clock})
	t.Cleanup(srv.Close)
	env := srv.Env()
	cfg, err := otc.ConfigFromEnv(func(k string) string { return env[k] })
	require.NoError(t, err)
	client, err := otc.New(context.Background(), cfg)
	require.NoError(t, err)
	w := &logsLoop{t: t, sim: srv.Sim, clock: clock, jobCredential: map[string]time.Time{}, client: client}
	w.r = reconcile.New(reconcile.Config{Cloud: client, Now: clock.Now, JobImage: "img:1", PasswordKey: secret.New("logs loop key"),
		Databases: reconcile.DatabasesConfig{Apply: func(context.Context, dbusers.Conn, dbusers.Desired, dbusers.ManagedState) (dbusers.Result, error) {
			return dbusers.Result{}, nil
		}}})
	w.mc = metacontroller.NewRds(v1alpha1.Rds{
		ObjectMeta: metav1.ObjectMeta{Name: "lg", Namespace: "team-a", UID: types.UID("uid-lg"), Generation: 1},
		Spec:       restoreSpec(),
	})
	return w
}

// created checks every Job the last answer created: it comes with its Secret, whose capability
// is fresh.
func (w *logsLoop) created(before map[string]*batchv1.Job) {
	for name := range w.mc.Jobs {
		if before[name] != nil {
			continue
		}
		s := w.mc.Secrets[name+"-credentials"]
		require.NotNil(w.t, s, "a Job is returned with its Secret")
		exp, err := time.Parse(time.RFC3339, s.Annotations[reconcile.AnnotationCapabilityExpires])
		require.NoError(w.t, err, "the log Secret says when its capability expires")
		w.jobCredential[name] = exp
		require.True(w.t, exp.After(w.clock.Now().Add(5*time.Minute)), "Job %s started with a capability expiring %s, at %s", name, exp, w.clock.Now())
	}
}

func (w *logsLoop) sync() *hook.SyncResponse {
	w.t.Helper()
	before := maps.Clone(w.mc.Jobs)
	resp, err := w.mc.Sync(context.Background(), w.r)
	require.NoError(w.t, err)
	w.created(before)
	return resp
}

func (w *logsLoop) finalize() *hook.FinalizeResponse {
	w.t.Helper()
	w.mc.Delete(w.clock.Now())
	before := maps.Clone(w.mc.Jobs)
	resp, err := w.mc.Finalize(context.Background(), w.r)
	require.NoError(w.t, err)
	w.created(before)
	return resp
}

func (w *logsLoop) edit(f func(*v1alpha1.RdsSpec)) { w.mc.EditRds(f) }

// status is the stored status.
func (w *logsLoop) status() v1alpha1.RdsStatus { return w.mc.Status() }

func (w *logsLoop) active() {
	w.t.Helper()
	for range 20 {
		w.sync()
		if st := w.status(); st.Status == "ACTIVE" && st.Operation == nil {
			return
		}
		w.clock.Advance(10 * time.Second)
	}
	w.t.Fatal("the instance never became ACTIVE")
}

func (w *logsLoop) synced() v1alpha1.Condition {
	for _, c := range w.status().Conditions {
		if c.Type == v1alpha1.ConditionSynced {
			return c
		}
	}
	return v1alpha1.Condition{}
}

func (w *logsLoop) finishJob(typ batchv1.JobConditionType) {
	require.True(w.t, w.mc.FinishJob(w.status().Logs.Job, typ))
}

// A log request issued just before a restore runs while the restore holds the other steps, with
// the capability it was issued; and a capability that went stale while the controller was away is
// renewed before the Job starts. No log request makes an IAM call.
func TestLogsCredentialExpiresBehindRestore(t *testing.T) {
	t.Run("restore holds the other steps", func(t *testing.T) {
		w := newLogsLoop(t)
		w.active()
		w.clock.Advance(2 * time.Hour)
		w.sync()
		w.edit(func(s *v1alpha1.RdsSpec) { s.Logs = &v1alpha1.LogsRequest{Request: "r1"} })
		w.sync()
		require.Equal(t, v1alpha1.LogsStarting, w.status().Logs.State)
		id := w.status().ID
		w.sim.SetInstanceStatus(id, "REBOOTING")
		w.edit(func(s *v1alpha1.RdsSpec) {
			s.Backuprestoretime = w.clock.Now().Add(-30 * time.Minute).UTC().Format(time.RFC3339)
		})
		w.sync()
		ls := w.status().Logs
		assert.Equal(t, v1alpha1.LogsRunning, ls.State, "the restore waiting for ACTIVE does not hold the log Job")
		assert.Contains(t, w.mc.Jobs, ls.Job)
		w.finishJob(batchv1.JobComplete)
		for range 3 {
			w.clock.Advance(5 * time.Minute)
			w.sync()
		}
		w.sim.SetInstanceStatus(id, "ACTIVE")
		for range 6 {
			w.sync()
			w.clock.Advance(10 * time.Second)
		}
		assert.Equal(t, v1alpha1.LogsSucceeded, w.status().Logs.State)
		assert.Len(t, w.jobCredential, 1, "one Job for one request")
		assert.Zero(t, w.sim.Calls(otcsim.OpCreateTemporaryCredential), "no OTC credential for the log Job")
	})
	t.Run("credential stale before the Job starts", func(t *testing.T) {
		w := newLogsLoop(t)
		w.active()
		w.edit(func(s *v1alpha1.RdsSpec) { s.Logs = &v1alpha1.LogsRequest{Request: "r1"} })
		w.sync()
		require.Equal(t, v1alpha1.LogsStarting, w.status().Logs.State)
		w.clock.Advance(20 * time.Minute) // no call in between: the controller was away
		mutating := w.sim.MutatingCalls()
		resp := w.sync()
		ls := w.status().Logs
		assert.Equal(t, v1alpha1.LogsStarting, ls.State, "not Failed: no Job ever ran")
		assert.Empty(t, w.mc.Jobs, "no Job with an expired credential")
		assert.True(t, ls.CredentialExpires.After(w.clock.Now().Add(10*time.Minute)), "a fresh capability")
		w.mc.Secrets = map[string]*corev1.Secret{} // the new Secret is not stored yet: an old one is observed
		for _, c := range resp.Children {
			if s, ok := c.(*corev1.Secret); ok && s.Name == ls.Job+"-credentials" {
				stale := s.DeepCopy()
				stale.Annotations[reconcile.AnnotationCapabilityExpires] = w.clock.Now().Add(-5 * time.Minute).Format(time.RFC3339)
				w.mc.Secrets[s.Name] = stale
			}
		}
		w.sync() // observes the stale Secret, answers the fresh one
		assert.Empty(t, w.mc.Jobs, "no Job with an expired capability")
		assert.Equal(t, ls.CredentialExpires, w.status().Logs.CredentialExpires, "the fresh one may still arrive: not renewed again")
		w.sync() // the fresh Secret is observed now
		assert.Equal(t, v1alpha1.LogsRunning, w.status().Logs.State)
		assert.Contains(t, w.mc.Jobs, ls.Job)
		assert.Zero(t, w.sim.Calls(otcsim.OpCreateTemporaryCredential))
		assert.Zero(t, w.sim.MutatingCalls()-mutating, "a capability changes nothing in the cloud")
	})
}

// A log Job running when the object is deleted is kept with its Secret while the deletion takes
// its time, and status.logs follows it to its end.
func TestLogsFinalizeKeepsLogJob(t *testing.T) {
	w := newLogsLoop(t)
	w.active()
	w.edit(func(s *v1alpha1.RdsSpec) { s.Logs = &v1alpha1.LogsRequest{Request: "r1"} })
	w.sync()
	w.sync()
	job := w.status().Logs.Job
	require.Equal(t, v1alpha1.LogsRunning, w.status().Logs.State)

	resp := w.finalize() // starts the final backup
	require.False(t, resp.Finalized)
	assert.Contains(t, w.mc.Jobs, job, "a Job left out is deleted by Metacontroller")
	assert.Contains(t, w.mc.Secrets, job+"-credentials")
	assert.Equal(t, v1alpha1.LogsRunning, w.status().Logs.State)

	w.finishJob(batchv1.JobComplete)
	resp = w.finalize()
	require.False(t, resp.Finalized)
	ls := w.status().Logs
	assert.Equal(t, v1alpha1.LogsSucceeded, ls.State, "status.logs follows the Job during the deletion")
	assert.Equal(t, "kubectl logs -n team-a job/"+job, ls.Message)
	assert.Contains(t, w.mc.Jobs, job, "kept for kubectl logs")
	assert.NotContains(t, w.mc.Secrets, job+"-credentials", "its capability is no longer needed")
	assert.Zero(t, w.sim.Calls(otcsim.OpCreateTemporaryCredential))
}

// An adopted instance whose root password is unknown still serves a log request: a log Job needs
// no password.
func TestLogsRunWithPasswordUnknown(t *testing.T) {
	w := newLogsLoop(t)
	w.active()
	id := w.status().ID
	// As deletionpolicy Retain leaves it: released by lg, adoptable by another object of team-a.
	require.NoError(t, w.client.SetTags(context.Background(), id, map[string]string{"rds-released-by": "uid-lg"}))
	other := w.mc.Rds()
	other.Name, other.UID = "other", "uid-other"
	other.Status = v1alpha1.RdsStatus{}
	other.Spec.Instanceid = id
	other.Spec.Password = ""
	other.Spec.Logs = &v1alpha1.LogsRequest{Request: "r1"}
	w.mc = metacontroller.NewRds(other) // no status, no children
	for range 3 {
		w.sync()
	}
	assert.True(t, w.status().Adopted)
	assert.Equal(t, reconcile.ReasonPasswordUnknown, w.synced().Reason, "the password problem is still reported")
	ls := w.status().Logs
	require.NotNil(t, ls)
	assert.Equal(t, v1alpha1.LogsRunning, ls.State)
	assert.Contains(t, w.mc.Jobs, ls.Job)
	assert.NotContains(t, w.mc.Secrets, reconcile.ConnectionSecretName("other"), "no connection Secret without a password")
}

// The logs step after a step that stopped the call neither drops the answer nor delays the
// earlier step's next look.
func TestLogsAfterAStoppedStep(t *testing.T) {
	t.Run("request with a resize", func(t *testing.T) {
		w := newLogsLoop(t)
		w.active()
		w.edit(func(s *v1alpha1.RdsSpec) {
			s.Flavorref = "rds.mysql.n1.xlarge.2"
			s.Logs = &v1alpha1.LogsRequest{Request: "r1"}
		})
		w.sync()
		st := w.status()
		require.NotNil(t, st.Operation, "the resize is recorded")
		assert.Equal(t, "Resize", st.Operation.Type)
		assert.Equal(t, v1alpha1.LogsStarting, st.Logs.State)
		assert.NotNil(t, st.Logs.CredentialExpires, "the capability comes with the call that issued the resize")
		w.clock.Advance(5 * time.Second)
		w.sync()
		assert.Equal(t, v1alpha1.LogsRunning, w.status().Logs.State)
		assert.Equal(t, 1, w.sim.Calls(otcsim.OpResize))
		assert.Zero(t, w.sim.Calls(otcsim.OpCreateTemporaryCredential))
	})
	t.Run("invalid request during a resize", func(t *testing.T) {
		w := newLogsLoop(t)
		w.active()
		w.edit(func(s *v1alpha1.RdsSpec) { s.Flavorref = "rds.mysql.n1.xlarge.2" })
		w.sync()
		w.clock.Advance(time.Second)
		w.edit(func(s *v1alpha1.RdsSpec) { s.Logs = &v1alpha1.LogsRequest{Request: "r1", Since: "1d"} })
		resp := w.sync()
		assert.Equal(t, reconcile.ReasonInvalidSpec, w.synced().Reason, "the problem is reported")
		assert.LessOrEqual(t, resp.ResyncAfterSeconds, 10.0, "the resize in flight is still looked at soon")
		assert.Nil(t, w.status().Logs)
	})
}

// Ten new logs.request values in a row, each Job reading as much as its capability allows, cost
// at most the documented budget of OTC reads (docs/logs.md: 3 requests per object per hour, each
// at most 20 reads, each read one instance read and one log read here): a new value within the
// hour buys no new read budget (security review #17, attack 9). The same holds for a tenant who
// also erases status.logs before each request: the process remembers what status forgot.
func TestLogsRequestsAreRateLimitedPerObject(t *testing.T) {
	for name, erase := range map[string]bool{"spec only": false, "status.logs erased too": true} {
		t.Run(name, func(t *testing.T) {
			w := newLogsLoop(t)
			w.active()
			id := w.status().ID
			w.sim.ResetCounters()
			throttled, instanceReads := 0, 0
			for i := range 10 {
				if erase {
					st := w.status()
					st.Logs = nil
					w.mc.SetStatus(st)
				}
				w.edit(func(s *v1alpha1.RdsSpec) {
					s.Logs = &v1alpha1.LogsRequest{Request: fmt.Sprintf("r%d", i), Types: []string{v1alpha1.LogTypeError}}
				})
				for range 3 {
					w.sync()
				}
				if c := w.synced(); c.Reason == "LogRequestThrottled" {
					throttled++
					assert.Contains(t, c.Message, "the next one is allowed at 2026-05-01T11:")
				}
				ls := w.status().Logs
				if ls == nil || ls.Request != fmt.Sprintf("r%d", i) {
					continue
				}
				require.Equal(t, v1alpha1.LogsRunning, ls.State)
				token := string(w.mc.Secrets[ls.Job+"-credentials"].Data[logsapi.EnvToken])
				before := w.sim.Calls(otcsim.OpListInstances)
				for range 25 { // more than rds-logs ever needs: all the capability serves
					_, _ = w.r.ReadLogs(context.Background(), token, logsapi.Request{Instance: id, Type: v1alpha1.LogTypeError})
				}
				instanceReads += w.sim.Calls(otcsim.OpListInstances) - before
				w.finishJob(batchv1.JobComplete)
				w.sync()
				w.clock.Advance(time.Minute)
			}
			logReads := w.sim.Calls(otcsim.OpListErrorLogs) + w.sim.Calls(otcsim.OpListSlowLogs)
			assert.LessOrEqual(t, logReads, 3*20, "log reads within the hour")
			assert.LessOrEqual(t, instanceReads, 3*20, "instance reads of the log reads within the hour")
			assert.Equal(t, 7, throttled, "3 requests served, 7 refused")

			// After the hour the next request is served.
			w.clock.Advance(time.Hour)
			w.edit(func(s *v1alpha1.RdsSpec) { s.Logs = &v1alpha1.LogsRequest{Request: "later"} })
			w.sync()
			require.NotNil(t, w.status().Logs)
			assert.Equal(t, "later", w.status().Logs.Request)
			assert.Equal(t, reconcile.ReasonReconcileSuccess, w.synced().Reason)
		})
	}
}
