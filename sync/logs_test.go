package reconcile

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/cloudtest"
	"github.com/mcsps/rds-lambda-controller/sync/hook"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
	"github.com/mcsps/rds-lambda-controller/test/metacontroller"
)

const testJobImage = "ghcr.io/mcsps/rds-lambda-controller:test"

// logsWorld is one Rds object with an ACTIVE instance, a fake cloud that records its calls, and a
// clock the test moves.
type logsWorld struct {
	fake *cloudtest.Fake
	r    *Reconciler
	now  time.Time
	spec v1alpha1.RdsSpec
}

func newLogsWorld(t *testing.T) *logsWorld {
	w := &logsWorld{now: t0, spec: sampleSpec()}
	w.spec.Logs = &v1alpha1.LogsRequest{Request: "r1"}
	w.fake = &cloudtest.Fake{
		GetInstanceFn: func(context.Context, string) (*cloud.Instance, error) { return activeInstance(), nil },
	}
	w.r = New(Config{Cloud: w.fake, Now: func() time.Time { return w.now }, JobImage: testJobImage, PasswordKey: secret.New("logs test key")})
	return w
}

// requireOnlyObserved checks that the log steps made no cloud call: the calls only observed the
// instance (a capability costs none).
func (w *logsWorld) requireOnlyObserved(t *testing.T) {
	t.Helper()
	for _, call := range w.fake.Calls() {
		require.Equal(t, "GetInstance", call, "a log request makes no cloud call")
	}
}

// capability opens the token of a log Secret.
func (w *logsWorld) capability(t *testing.T, s *corev1.Secret) logsCapability {
	t.Helper()
	c, err := w.r.caps.open(string(s.Data["RDS_LOGS_TOKEN"]))
	require.NoError(t, err)
	return c
}

// observed is what Metacontroller would show the next call: the last answer's status and the
// children it created, changed by the test (a Job finishing, an informer lagging behind).
type observed struct {
	status  v1alpha1.RdsStatus
	secrets map[string]*corev1.Secret
	jobs    map[string]*batchv1.Job
}

func (w *logsWorld) first() observed {
	st := v1alpha1.RdsStatus{ID: "inst-1"}
	conn := storedSecret("A12345678+")
	return observed{status: st, secrets: map[string]*corev1.Secret{conn.Name: conn}, jobs: map[string]*batchv1.Job{}}
}

// sync calls the hook on this observation and returns its answer and the observation
// Metacontroller makes of it (test/metacontroller). The spec is w.spec at the time of the call.
func (w *logsWorld) sync(t *testing.T, o observed) (*hook.SyncResponse, observed) {
	t.Helper()
	mc := metacontroller.NewRds(request(w.spec, o.status).Parent)
	mc.Secrets, mc.Jobs = maps.Clone(o.secrets), maps.Clone(o.jobs)
	resp, err := mc.Sync(context.Background(), w.r)
	require.NoError(t, err)
	return resp, observed{status: mc.Status(), secrets: mc.Secrets, jobs: mc.Jobs}
}

func logsChildren(resp *hook.SyncResponse) (secrets []*corev1.Secret, jobs []*batchv1.Job) {
	for _, ch := range resp.Children {
		switch ch := ch.(type) {
		case *corev1.Secret:
			if ch.Name != "my-rds-single-connection" {
				secrets = append(secrets, ch)
			}
		case *batchv1.Job:
			jobs = append(jobs, ch)
		}
	}
	return secrets, jobs
}

func finish(job *batchv1.Job, typ batchv1.JobConditionType) *batchv1.Job {
	out := job.DeepCopy()
	out.Status.Conditions = append(out.Status.Conditions, batchv1.JobCondition{Type: typ, Status: corev1.ConditionTrue})
	return out
}

func TestLogsLifecycle(t *testing.T) {
	w := newLogsWorld(t)

	// Requested: the capability is stored in the Job's Secret; no Job yet.
	resp, o := w.sync(t, w.first())
	ls := o.status.Logs
	require.NotNil(t, ls)
	jobName := ls.Job
	assert.Regexp(t, `^my-rds-single-logs-[0-9a-f]{8}$`, jobName)
	assert.Equal(t, v1alpha1.LogsStatus{
		Request: "r1", Job: jobName, State: v1alpha1.LogsStarting, Since: "1h", Lines: 200, Types: []string{"error", "slow"},
		CredentialExpires: &metav1.Time{Time: t0.Add(15 * time.Minute)},
		Message:           "The log Job starts once its capability is stored.",
		Accepted:          []metav1.Time{metav1.NewTime(t0)},
	}, *ls)
	secrets, jobs := logsChildren(resp)
	require.Len(t, secrets, 1)
	assert.Empty(t, jobs, "the Job waits for its Secret")
	cred := secrets[0]
	assert.Equal(t, jobName+"-credentials", cred.Name)
	assert.ElementsMatch(t, []string{"RDS_LOGS_TOKEN", "RDS_LOGS_URL"}, slices.Collect(maps.Keys(cred.Data)),
		"the capability and where to present it; no OTC credential, nothing of the controller's login")
	assert.Equal(t, "http://rds-hooks.rds-system.svc:8081", string(cred.Data["RDS_LOGS_URL"]))
	assert.Equal(t, "2026-11-22T10:15:00Z", cred.Annotations[AnnotationCapabilityExpires])
	assert.Equal(t, logsCapability{
		Instance: "inst-1", Namespace: "rds1", Name: "my-rds-single", UID: string(request(w.spec, o.status).Parent.UID),
		Request: "r1", Types: []string{"error", "slow"}, Since: "1h", Lines: 200, Expires: t0.Add(15 * time.Minute).Unix(),
	}, w.capability(t, cred), "bound to the instance, the object, the request and its expiry; the controller's own login")
	assert.Equal(t, 2.0, resp.ResyncAfterSeconds)
	w.requireOnlyObserved(t)

	// The informer has not seen the Secret yet: the same Secret again, no Job.
	lagging := o
	lagging.secrets = map[string]*corev1.Secret{"my-rds-single-connection": o.secrets["my-rds-single-connection"]}
	resp, _ = w.sync(t, lagging)
	secrets, jobs = logsChildren(resp)
	require.Len(t, secrets, 1)
	assert.Equal(t, cred, secrets[0], "two calls answer the same Secret")
	assert.Empty(t, jobs)

	// The Secret is observed: the Job is returned.
	w.now = w.now.Add(2 * time.Second)
	resp, o = w.sync(t, o)
	assert.Equal(t, v1alpha1.LogsRunning, o.status.Logs.State)
	assert.Equal(t, "kubectl logs -n rds1 job/"+jobName, o.status.Logs.Message)
	secrets, jobs = logsChildren(resp)
	require.Len(t, secrets, 1)
	assert.Equal(t, cred.Data, secrets[0].Data, "the same Secret")
	require.Len(t, jobs, 1)
	job := jobs[0]
	assert.Equal(t, jobName, job.Name)

	// Running: a repeated call gives the same answer; a spec edit of the options does not touch
	// the Job (Recreate would run it again).
	w.spec.Logs.Lines = 5
	w.now = w.now.Add(10 * time.Second)
	resp2, o2 := w.sync(t, o)
	assert.Equal(t, o.status, o2.status, "the status is stable while the Job runs")
	_, jobs = logsChildren(resp2)
	require.Len(t, jobs, 1)
	assert.Equal(t, job, jobs[0], "the same Job, whatever the time or spec")

	// Completed: the Secret is no longer returned, the Job is kept.
	o.jobs[jobName] = finish(o.jobs[jobName], batchv1.JobComplete)
	w.now = w.now.Add(time.Minute)
	finishedAt := w.now
	resp, o = w.sync(t, o)
	assert.Equal(t, v1alpha1.LogsSucceeded, o.status.Logs.State)
	assert.Equal(t, finishedAt, o.status.Logs.Finished.Time)
	secrets, jobs = logsChildren(resp)
	assert.Empty(t, secrets, "the capability's Secret goes with the Job's end")
	require.Len(t, jobs, 1)
	assert.Equal(t, job, jobs[0])
	assert.LessOrEqual(t, resp.ResyncAfterSeconds, (time.Hour + time.Second).Seconds())

	// The capability has expired by now; the Job is still kept for kubectl logs.
	w.now = finishedAt.Add(30 * time.Minute)
	resp, o2 = w.sync(t, o)
	assert.Equal(t, o.status, o2.status)
	_, jobs = logsChildren(resp)
	assert.Len(t, jobs, 1)

	// Cleaned up after the retention: the Job is no longer returned, and never again.
	w.now = finishedAt.Add(time.Hour)
	resp, o = w.sync(t, o)
	_, jobs = logsChildren(resp)
	assert.Empty(t, jobs)
	assert.Equal(t, v1alpha1.LogsSucceeded, o.status.Logs.State)
	assert.Equal(t, "The log Job is gone; set a new logs.request to read the logs again.", o.status.Logs.Message)
	resp, o2 = w.sync(t, o)
	assert.Equal(t, o.status, o2.status)
	secrets, jobs = logsChildren(resp)
	assert.Empty(t, secrets)
	assert.Empty(t, jobs)
	w.requireOnlyObserved(t)

	// A new request value is a new Job with a new capability.
	w.spec.Logs = &v1alpha1.LogsRequest{Request: "r2", Types: []string{"slow"}}
	req2 := o
	resp, o = w.sync(t, req2)
	assert.Equal(t, "r2", o.status.Logs.Request)
	assert.NotEqual(t, jobName, o.status.Logs.Job)
	assert.Equal(t, []string{"slow"}, o.status.Logs.Types)
	secrets, _ = logsChildren(resp)
	require.Len(t, secrets, 1)
	c2 := w.capability(t, secrets[0])
	assert.Equal(t, "r2", c2.Request)
	assert.Equal(t, []string{"slow"}, c2.Types)
	assert.NotEqual(t, cred.Data["RDS_LOGS_TOKEN"], secrets[0].Data["RDS_LOGS_TOKEN"])
	w.requireOnlyObserved(t)
}

func TestLogsJobIsLockedDown(t *testing.T) {
	w := newLogsWorld(t)
	w.spec.Logs = &v1alpha1.LogsRequest{Request: "ticket-42", Since: "6h", Lines: 50, Types: []string{"error"}}
	_, o := w.sync(t, w.first())
	resp, _ := w.sync(t, o)
	_, jobs := logsChildren(resp)
	require.Len(t, jobs, 1)
	job := jobs[0]

	assert.Equal(t, "ticket-42", job.Annotations[AnnotationLogsRequest])
	assert.Equal(t, int32(1), *job.Spec.BackoffLimit)
	assert.Equal(t, int64(300), *job.Spec.ActiveDeadlineSeconds, "ends well before its 15-minute capability")
	assert.Equal(t, int32(7200), *job.Spec.TTLSecondsAfterFinished, "a backstop after the hooks' own retention")
	pod := job.Spec.Template.Spec
	assert.Equal(t, corev1.RestartPolicyNever, pod.RestartPolicy)
	assert.False(t, *pod.AutomountServiceAccountToken, "no service account token")
	assert.True(t, *pod.SecurityContext.RunAsNonRoot)
	assert.Equal(t, corev1.SeccompProfileTypeRuntimeDefault, pod.SecurityContext.SeccompProfile.Type)
	require.Len(t, pod.Containers, 1)
	ctr := pod.Containers[0]
	assert.Equal(t, testJobImage, ctr.Image)
	assert.Equal(t, []string{"/rds-logs"}, ctr.Command)
	assert.Equal(t, []string{"--instance=inst-1", "--since=6h", "--lines=50", "--types=error"}, ctr.Args)
	assert.Equal(t, job.Name+"-credentials", ctr.EnvFrom[0].SecretRef.Name)
	assert.Empty(t, ctr.Env, "no credential in the Job spec")
	assert.True(t, *ctr.SecurityContext.ReadOnlyRootFilesystem)
	assert.False(t, *ctr.SecurityContext.AllowPrivilegeEscalation)
	assert.Equal(t, []corev1.Capability{"ALL"}, ctr.SecurityContext.Capabilities.Drop)
	assert.Equal(t, "64Mi", ctr.Resources.Limits.Memory().String())
	assert.Equal(t, "200m", ctr.Resources.Limits.Cpu().String())
}

func TestLogsFailedJob(t *testing.T) {
	w := newLogsWorld(t)
	_, o := w.sync(t, w.first())
	_, o = w.sync(t, o)
	job := o.status.Logs.Job
	o.jobs[job] = finish(o.jobs[job], batchv1.JobFailed)
	resp, o := w.sync(t, o)
	assert.Equal(t, v1alpha1.LogsFailed, o.status.Logs.State)
	assert.Equal(t, "The log Job failed; its log says why: kubectl logs -n rds1 job/"+job+".", o.status.Logs.Message)
	secrets, jobs := logsChildren(resp)
	assert.Empty(t, secrets)
	assert.Len(t, jobs, 1, "kept, so that its log can be read")
	_, o2 := w.sync(t, o)
	assert.Equal(t, o.status, o2.status, "a failed request is not retried: a new request value is")
}

func TestLogsReissueWhenSecretNeverArrived(t *testing.T) {
	w := newLogsWorld(t)
	_, o := w.sync(t, w.first())
	lost := o
	lost.secrets = map[string]*corev1.Secret{"my-rds-single-connection": o.secrets["my-rds-single-connection"]}

	w.now = t0.Add(9 * time.Minute)
	_, o = w.sync(t, lost)
	assert.Equal(t, t0.Add(15*time.Minute), o.status.Logs.CredentialExpires.Time, "the first capability may still arrive in time")

	w.now = t0.Add(10 * time.Minute)
	resp, o := w.sync(t, lost)
	assert.Equal(t, t0.Add(25*time.Minute), o.status.Logs.CredentialExpires.Time, "too close to its expiry to be of use: renewed")
	assert.Equal(t, v1alpha1.LogsStarting, o.status.Logs.State)
	secrets, jobs := logsChildren(resp)
	require.Len(t, secrets, 1)
	assert.Empty(t, jobs)
	assert.Equal(t, t0.Add(25*time.Minute).Unix(), w.capability(t, secrets[0]).Expires)

	// A stale Secret observed (the renewed one is on its way): no Job yet; the renewed one: the Job.
	resp, o2 := w.sync(t, lost)
	_, jobs = logsChildren(resp)
	assert.Empty(t, jobs)
	assert.Equal(t, o.status, o2.status)
	_, o = w.sync(t, o)
	assert.Equal(t, v1alpha1.LogsRunning, o.status.Logs.State)
	w.requireOnlyObserved(t)
}

func TestLogsJobNeverSeen(t *testing.T) {
	w := newLogsWorld(t)
	_, o := w.sync(t, w.first())
	_, o = w.sync(t, o)
	require.Equal(t, v1alpha1.LogsRunning, o.status.Logs.State)
	noJob := o
	noJob.jobs = map[string]*batchv1.Job{}

	w.now = t0.Add(15 * time.Minute)
	resp, o2 := w.sync(t, noJob)
	assert.Equal(t, v1alpha1.LogsRunning, o2.status.Logs.State, "it may still come")
	_, jobs := logsChildren(resp)
	assert.Len(t, jobs, 1)

	w.now = t0.Add(20 * time.Minute)
	resp, o2 = w.sync(t, noJob)
	assert.Equal(t, v1alpha1.LogsFailed, o2.status.Logs.State, "its capability and deadline are past")
	assert.Equal(t, "The log Job is gone; set a new logs.request to read the logs again.", o2.status.Logs.Message)
	secrets, jobs := logsChildren(resp)
	assert.Empty(t, secrets)
	assert.Empty(t, jobs)
}

func TestLogsChildrenSurviveAFailedObservation(t *testing.T) {
	w := newLogsWorld(t)
	_, o := w.sync(t, w.first())
	_, o = w.sync(t, o)
	require.Equal(t, v1alpha1.LogsRunning, o.status.Logs.State)

	w.fake.GetInstanceFn = func(context.Context, string) (*cloud.Instance, error) {
		return nil, &cloud.Error{Kind: cloud.KindUnavailable, Op: "GetInstance"}
	}
	resp, _ := w.sync(t, o)
	secrets, jobs := logsChildren(resp)
	assert.Len(t, secrets, 1, "a child left out is deleted: the running Job keeps its Secret")
	assert.Len(t, jobs, 1)
}

func TestLogsRefused(t *testing.T) {
	cases := map[string]struct {
		reason    string
		logs      *v1alpha1.LogsRequest
		engine    string
		noImage   bool
		noKey     bool
		wantCond  v1alpha1.Condition
		wantState string
	}{
		"bad options": {
			reason: "every problem in one stable sentence, no cloud call",
			logs:   &v1alpha1.LogsRequest{Request: "r1", Since: "1d", Lines: 5000, Types: []string{"general"}},
			wantCond: v1alpha1.Condition{Status: metav1.ConditionFalse, Reason: ReasonInvalidSpec,
				Message: "logs.since must be a duration from 1m to 720h, e.g. 30m or 6h. logs.lines must be between 1 and 2000. logs.types may hold only error and slow."},
		},
		"empty request": {
			reason:   "a request needs a name",
			logs:     &v1alpha1.LogsRequest{},
			wantCond: v1alpha1.Condition{Status: metav1.ConditionFalse, Reason: ReasonInvalidSpec, Message: "logs.request must be 1 to 63 characters."},
		},
		"slow log of SQL Server": {
			reason:   "SQL Server has no slow query log",
			logs:     &v1alpha1.LogsRequest{Request: "r1", Types: []string{"slow"}},
			engine:   v1alpha1.EngineSQLServer,
			wantCond: v1alpha1.Condition{Status: metav1.ConditionFalse, Reason: ReasonInvalidSpec, Message: "logs.types: SQL Server has no slow query log."},
		},
		"no job image": {
			reason:   "the operator did not configure the image",
			logs:     &v1alpha1.LogsRequest{Request: "r1"},
			noImage:  true,
			wantCond: v1alpha1.Condition{Status: metav1.ConditionFalse, Reason: ReasonLogsUnavailable, Message: "The controller has no image for log Jobs; its operator must set --job-image."},
		},
		"no stable key": {
			reason: "a token login without --password-key: the replicas share no key to seal capabilities with",
			logs:   &v1alpha1.LogsRequest{Request: "r1"},
			noKey:  true,
			wantCond: v1alpha1.Condition{Status: metav1.ConditionFalse, Reason: ReasonLogsUnavailable,
				Message: "The controller has no stable key to seal log Job capabilities with (a token login); its operator must set --password-key."},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := newLogsWorld(t)
			w.spec.Logs = tc.logs
			if tc.engine != "" {
				w.fake.GetInstanceFn = sqlServerInstance
				w.spec.Datastoretype, w.spec.Datastoreversion = v1alpha1.EngineSQLServer, "2022_SE" // the instance's engine
			}
			if tc.noImage {
				w.r.cfg.JobImage = ""
			}
			if tc.noKey {
				w.r = New(Config{Cloud: w.fake, Now: func() time.Time { return w.now }, JobImage: testJobImage})
			}
			resp, o := w.sync(t, w.first())
			got := condition(t, &o.status, v1alpha1.ConditionSynced)
			got.Type, got.LastTransitionTime = "", metav1.Time{}
			assert.Equal(t, tc.wantCond, got, tc.reason)
			if tc.wantState == "" {
				assert.Nil(t, o.status.Logs, tc.reason)
			} else {
				assert.Equal(t, tc.wantState, o.status.Logs.State, tc.reason)
			}
			secrets, jobs := logsChildren(resp)
			assert.Empty(t, secrets, tc.reason)
			assert.Empty(t, jobs, tc.reason)
			w.now = w.now.Add(time.Minute)
			resp2, o2 := w.sync(t, o)
			assert.Equal(t, o.status, o2.status, "the same problem writes the same status: "+tc.reason)
			assert.Len(t, resp2.Children, len(resp.Children))
		})
	}
}

func sqlServerInstance(context.Context, string) (*cloud.Instance, error) {
	inst := activeInstance()
	inst.Engine = v1alpha1.EngineSQLServer
	return inst, nil
}

func TestLogsDefaultsForSQLServer(t *testing.T) {
	w := newLogsWorld(t)
	w.fake.GetInstanceFn = sqlServerInstance
	_, o := w.sync(t, w.first())
	assert.Equal(t, []string{"error"}, o.status.Logs.Types)
}

func TestLogsJobName(t *testing.T) {
	long := "a-very-long-rds-object-name-that-goes-on-and-on-and-on-until-the-end"
	cases := map[string]struct {
		reason string
		a, b   [4]string
		same   bool
	}{
		"same request":      {reason: "deterministic", a: [4]string{"db", "u1", "1", "r1"}, b: [4]string{"db", "u1", "1", "r1"}, same: true},
		"new request":       {reason: "a new value, a new Job", a: [4]string{"db", "u1", "1", "r1"}, b: [4]string{"db", "u1", "2", "r2"}},
		"old value again":   {reason: "an earlier value asked again is a new Job", a: [4]string{"db", "u1", "1", "r1"}, b: [4]string{"db", "u1", "3", "r1"}},
		"recreated object":  {reason: "another object of the same name", a: [4]string{"db", "u1", "1", "r1"}, b: [4]string{"db", "u2", "1", "r1"}},
		"long parent names": {reason: "cut, then told apart by the hash", a: [4]string{long + "-x", "u1", "1", "r1"}, b: [4]string{long + "-y", "u1", "1", "r2"}},
	}
	name := func(v [4]string) string {
		gen := map[string]int64{"1": 1, "2": 2, "3": 3}[v[2]]
		return logsJobName(v[0], v[1], gen, v[3])
	}
	for n, tc := range cases {
		t.Run(n, func(t *testing.T) {
			a, b := name(tc.a), name(tc.b)
			assert.LessOrEqual(t, len(a), 63, "a Job's name is its pods' job-name label")
			assert.Equal(t, tc.same, a == b, tc.reason)
		})
	}
}
