package sync_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/otc"
	"github.com/mcsps/rds-lambda-controller/sync/dbusers"
	"github.com/mcsps/rds-lambda-controller/sync/hook"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
	"github.com/mcsps/rds-lambda-controller/test/otcsim"
)

// logsLoop plays Metacontroller for one Rds object against the simulator, with the log steps in
// mind: it feeds each answer back and records, for each log Job, the capability's expiry in the
// Secret it was first returned with.
type logsLoop struct {
	t     *testing.T
	sim   *otcsim.Sim
	clock *otcsim.ManualClock
	r     *sync.Reconciler
	req   *hook.Request
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
	w.r = sync.New(sync.Config{Cloud: client, Now: clock.Now, JobImage: "img:1", PasswordKey: secret.New("logs loop key"),
		Databases: sync.DatabasesConfig{Apply: func(context.Context, dbusers.Conn, dbusers.Desired, dbusers.ManagedState) (dbusers.Result, error) {
			return dbusers.Result{}, nil
		}}})
	w.req = &hook.Request{
		Parent: v1alpha1.Rds{
			TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.APIVersion, Kind: v1alpha1.Kind},
			ObjectMeta: metav1.ObjectMeta{Name: "lg", Namespace: "team-a", UID: types.UID("uid-lg"), Generation: 1},
			Spec:       restoreSpec(),
		},
		Secrets: map[string]*corev1.Secret{}, Jobs: map[string]*batchv1.Job{}, Related: map[string]*corev1.Secret{}, Version: hook.V1,
	}
	return w
}

func (w *logsLoop) feed(st *v1alpha1.RdsStatus, children []any) {
	w.req.Parent.Status = *st.DeepCopy()
	secrets, jobs := map[string]*corev1.Secret{}, map[string]*batchv1.Job{}
	for _, c := range children {
		if s, ok := c.(*corev1.Secret); ok {
			secrets[s.Name] = s.DeepCopy()
		}
	}
	for _, c := range children {
		j, ok := c.(*batchv1.Job)
		if !ok {
			continue
		}
		if old := w.req.Jobs[j.Name]; old != nil {
			jobs[j.Name] = old // the cluster keeps its status
			continue
		}
		jobs[j.Name] = j.DeepCopy()
		s := secrets[j.Name+"-credentials"]
		require.NotNil(w.t, s, "a Job is returned with its Secret")
		exp, err := time.Parse(time.RFC3339, s.Annotations[sync.AnnotationCapabilityExpires])
		require.NoError(w.t, err, "the log Secret says when its capability expires")
		w.jobCredential[j.Name] = exp
		require.True(w.t, exp.After(w.clock.Now().Add(5*time.Minute)), "Job %s started with a capability expiring %s, at %s", j.Name, exp, w.clock.Now())
	}
	w.req.Secrets, w.req.Jobs = secrets, jobs
}

func (w *logsLoop) sync() *hook.SyncResponse {
	w.t.Helper()
	resp, err := w.r.Sync(context.Background(), w.req)
	require.NoError(w.t, err)
	w.feed(resp.Status, resp.Children)
	return resp
}

func (w *logsLoop) finalize() *hook.FinalizeResponse {
	w.t.Helper()
	w.req.Finalizing = true
	now := metav1.NewTime(w.clock.Now())
	w.req.Parent.DeletionTimestamp = &now
	resp, err := w.r.Finalize(context.Background(), w.req)
	require.NoError(w.t, err)
	w.feed(resp.Status, resp.Children)
	return resp
}

func (w *logsLoop) edit(f func(*v1alpha1.RdsSpec)) { f(&w.req.Parent.Spec); w.req.Parent.Generation++ }

func (w *logsLoop) active() {
	w.t.Helper()
	for range 20 {
		w.sync()
		if st := w.req.Parent.Status; st.Status == "ACTIVE" && st.Operation == nil {
			return
		}
		w.clock.Advance(10 * time.Second)
	}
	w.t.Fatal("the instance never became ACTIVE")
}

func (w *logsLoop) synced() v1alpha1.Condition {
	for _, c := range w.req.Parent.Status.Conditions {
		if c.Type == v1alpha1.ConditionSynced {
			return c
		}
	}
	return v1alpha1.Condition{}
}

func (w *logsLoop) finishJob(typ batchv1.JobConditionType) {
	job := w.req.Jobs[w.req.Parent.Status.Logs.Job]
	require.NotNil(w.t, job)
	job.Status.Conditions = append(job.Status.Conditions, batchv1.JobCondition{Type: typ, Status: corev1.ConditionTrue})
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
		require.Equal(t, v1alpha1.LogsStarting, w.req.Parent.Status.Logs.State)
		id := w.req.Parent.Status.ID
		w.sim.SetInstanceStatus(id, "REBOOTING")
		w.edit(func(s *v1alpha1.RdsSpec) {
			s.Backuprestoretime = w.clock.Now().Add(-30 * time.Minute).UTC().Format(time.RFC3339)
		})
		w.sync()
		ls := w.req.Parent.Status.Logs
		assert.Equal(t, v1alpha1.LogsRunning, ls.State, "the restore waiting for ACTIVE does not hold the log Job")
		assert.Contains(t, w.req.Jobs, ls.Job)
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
		assert.Equal(t, v1alpha1.LogsSucceeded, w.req.Parent.Status.Logs.State)
		assert.Len(t, w.jobCredential, 1, "one Job for one request")
		assert.Zero(t, w.sim.Calls(otcsim.OpCreateTemporaryCredential), "no OTC credential for the log Job")
	})
	t.Run("credential stale before the Job starts", func(t *testing.T) {
		w := newLogsLoop(t)
		w.active()
		w.edit(func(s *v1alpha1.RdsSpec) { s.Logs = &v1alpha1.LogsRequest{Request: "r1"} })
		w.sync()
		require.Equal(t, v1alpha1.LogsStarting, w.req.Parent.Status.Logs.State)
		w.clock.Advance(20 * time.Minute) // no call in between: the controller was away
		mutating := w.sim.MutatingCalls()
		resp := w.sync()
		ls := w.req.Parent.Status.Logs
		assert.Equal(t, v1alpha1.LogsStarting, ls.State, "not Failed: no Job ever ran")
		assert.Empty(t, w.req.Jobs, "no Job with an expired credential")
		assert.True(t, ls.CredentialExpires.After(w.clock.Now().Add(10*time.Minute)), "a fresh capability")
		w.req.Secrets = map[string]*corev1.Secret{} // the new Secret is not stored yet: an old one is observed
		for _, c := range resp.Children {
			if s, ok := c.(*corev1.Secret); ok && s.Name == ls.Job+"-credentials" {
				stale := s.DeepCopy()
				stale.Annotations[sync.AnnotationCapabilityExpires] = w.clock.Now().Add(-5 * time.Minute).Format(time.RFC3339)
				w.req.Secrets[s.Name] = stale
			}
		}
		w.sync() // observes the stale Secret, answers the fresh one
		assert.Empty(t, w.req.Jobs, "no Job with an expired capability")
		assert.Equal(t, ls.CredentialExpires, w.req.Parent.Status.Logs.CredentialExpires, "the fresh one may still arrive: not renewed again")
		w.sync() // the fresh Secret is observed now
		assert.Equal(t, v1alpha1.LogsRunning, w.req.Parent.Status.Logs.State)
		assert.Contains(t, w.req.Jobs, ls.Job)
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
	job := w.req.Parent.Status.Logs.Job
	require.Equal(t, v1alpha1.LogsRunning, w.req.Parent.Status.Logs.State)

	resp := w.finalize() // starts the final backup
	require.False(t, resp.Finalized)
	assert.Contains(t, w.req.Jobs, job, "a Job left out is deleted by Metacontroller")
	assert.Contains(t, w.req.Secrets, job+"-credentials")
	assert.Equal(t, v1alpha1.LogsRunning, w.req.Parent.Status.Logs.State)

	w.finishJob(batchv1.JobComplete)
	resp = w.finalize()
	require.False(t, resp.Finalized)
	ls := w.req.Parent.Status.Logs
	assert.Equal(t, v1alpha1.LogsSucceeded, ls.State, "status.logs follows the Job during the deletion")
	assert.Equal(t, "kubectl logs -n team-a job/"+job, ls.Message)
	assert.Contains(t, w.req.Jobs, job, "kept for kubectl logs")
	assert.NotContains(t, w.req.Secrets, job+"-credentials", "its capability is no longer needed")
	assert.Zero(t, w.sim.Calls(otcsim.OpCreateTemporaryCredential))
}

// An adopted instance whose root password is unknown still serves a log request: a log Job needs
// no password.
func TestLogsRunWithPasswordUnknown(t *testing.T) {
	w := newLogsLoop(t)
	w.active()
	id := w.req.Parent.Status.ID
	// As deletionpolicy Retain leaves it: released by lg, adoptable by another object of team-a.
	require.NoError(t, w.client.SetTags(context.Background(), id, map[string]string{"rds-released-by": "uid-lg"}))
	w.req.Parent.Name, w.req.Parent.UID = "other", "uid-other"
	w.req.Parent.Status = v1alpha1.RdsStatus{}
	w.req.Secrets, w.req.Jobs = map[string]*corev1.Secret{}, map[string]*batchv1.Job{}
	w.req.Parent.Spec.Instanceid = id
	w.req.Parent.Spec.Password = ""
	w.req.Parent.Spec.Logs = &v1alpha1.LogsRequest{Request: "r1"}
	for range 3 {
		w.sync()
	}
	assert.True(t, w.req.Parent.Status.Adopted)
	assert.Equal(t, sync.ReasonPasswordUnknown, w.synced().Reason, "the password problem is still reported")
	ls := w.req.Parent.Status.Logs
	require.NotNil(t, ls)
	assert.Equal(t, v1alpha1.LogsRunning, ls.State)
	assert.Contains(t, w.req.Jobs, ls.Job)
	assert.NotContains(t, w.req.Secrets, sync.ConnectionSecretName("other"), "no connection Secret without a password")
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
		st := w.req.Parent.Status
		require.NotNil(t, st.Operation, "the resize is recorded")
		assert.Equal(t, "Resize", st.Operation.Type)
		assert.Equal(t, v1alpha1.LogsStarting, st.Logs.State)
		assert.NotNil(t, st.Logs.CredentialExpires, "the capability comes with the call that issued the resize")
		w.clock.Advance(5 * time.Second)
		w.sync()
		assert.Equal(t, v1alpha1.LogsRunning, w.req.Parent.Status.Logs.State)
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
		assert.Equal(t, sync.ReasonInvalidSpec, w.synced().Reason, "the problem is reported")
		assert.LessOrEqual(t, resp.ResyncAfterSeconds, 10.0, "the resize in flight is still looked at soon")
		assert.Nil(t, w.req.Parent.Status.Logs)
	})
}
