package reconcile

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/logsapi"
)

// TestPlanLogs is the log request's state machine as a table: spec.logs, status.logs and the
// observed Job and Secret in, the plan out. No cloud, no fake, no key: sealing is the render's.
func TestPlanLogs(t *testing.T) {
	now := metav1.NewTime(t0)
	at := func(d time.Duration) *metav1.Time { return ptr.To(metav1.NewTime(t0.Add(d))) }
	job := logsJobName("my-rds-single", "uid-1", 3, "r1")
	command := "kubectl logs -n rds1 job/" + job
	// status is the status.logs of request r1 in a state.
	status := func(state string, edits ...func(*v1alpha1.LogsStatus)) *v1alpha1.LogsStatus {
		ls := &v1alpha1.LogsStatus{Request: "r1", Job: job, State: state, Since: "1h", Lines: 200,
			Types: []string{v1alpha1.LogTypeError, v1alpha1.LogTypeSlow}, Message: msgLogsStarting, CredentialExpires: at(15 * time.Minute)}
		for _, edit := range edits {
			edit(ls)
		}
		return ls
	}
	message := func(m string) func(*v1alpha1.LogsStatus) { return func(ls *v1alpha1.LogsStatus) { ls.Message = m } }
	finished := func(d time.Duration) func(*v1alpha1.LogsStatus) {
		return func(ls *v1alpha1.LogsStatus) { ls.Finished = at(d) }
	}
	acceptedAt := func(ds ...time.Duration) func(*v1alpha1.LogsStatus) {
		return func(ls *v1alpha1.LogsStatus) {
			for _, d := range ds {
				ls.Accepted = append(ls.Accepted, metav1.NewTime(t0.Add(d)))
			}
		}
	}
	expires := func(d time.Duration) func(*v1alpha1.LogsStatus) {
		return func(ls *v1alpha1.LogsStatus) { ls.CredentialExpires = at(d) }
	}
	// capability is the Job's Secret as observed, its capability expiring after d.
	capability := func(d time.Duration) *corev1.Secret {
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: logsSecretName(job),
				Annotations: map[string]string{AnnotationCapabilityExpires: t0.Add(d).Format(time.RFC3339)}},
			Data: map[string][]byte{logsapi.EnvToken: []byte("token")},
		}
	}
	ended := func(typ batchv1.JobConditionType) *batchv1.Job {
		return &batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: typ, Status: corev1.ConditionTrue}}}}
	}

	// input is a sync call of an object asking for log request r1, nothing accepted yet, the
	// instance observed, a key to seal with; each edit changes what a case is about.
	input := func(edits ...func(*logsInput)) logsInput {
		in := logsInput{
			want: &v1alpha1.LogsRequest{Request: "r1"}, jobs: map[string]*batchv1.Job{}, secrets: map[string]*corev1.Secret{},
			object: "my-rds-single", namespace: "rds1", uid: "uid-1", generation: 3,
			instance: "inst-1", engine: v1alpha1.EngineMySQL, now: now,
			jobImage: "rds-logs:1", retention: time.Hour, deadline: 5 * time.Minute, capabilityTTL: 15 * time.Minute, sealing: true,
		}
		for _, edit := range edits {
			edit(&in)
		}
		return in
	}
	// prior is status.logs as this process left it: a request it shows Starting or Running is one
	// the process accepted (a minute ago).
	prior := func(ls *v1alpha1.LogsStatus) func(*logsInput) {
		return func(in *logsInput) {
			in.prior = ls
			if ls.State == v1alpha1.LogsStarting || ls.State == v1alpha1.LogsRunning {
				in.served = append(in.served, logAcceptance{ls.Request, t0.Add(-time.Minute)})
			}
		}
	}
	// forged is status.logs as this process did not leave it (a forged status, another replica's).
	forged := func(ls *v1alpha1.LogsStatus) func(*logsInput) { return func(in *logsInput) { in.prior = ls } }
	observed := func(s *corev1.Secret) func(*logsInput) { return func(in *logsInput) { in.secrets[s.Name] = s } }
	seen := func(j *batchv1.Job) func(*logsInput) { return func(in *logsInput) { in.jobs[job] = j } }
	later := func(d time.Duration) func(*logsInput) {
		return func(in *logsInput) { in.now = metav1.NewTime(t0.Add(d)) }
	}
	deleting := func(in *logsInput) { in.deleting, in.instance = true, "" }
	issued := func(d time.Duration) logLine {
		return logLine{slog.LevelInfo, "log Job capability issued", []any{"job", job, "expires", t0.Add(d)}}
	}
	finishedLine := func(state string) logLine {
		return logLine{slog.LevelInfo, "log Job finished", []any{"job", job, "state", state}}
	}

	tests := []struct {
		reason string
		in     logsInput
		want   logsPlan
	}{
		{reason: "no request", in: input(func(in *logsInput) { in.want = nil }), want: logsPlan{}},
		{
			reason: "a new request is accepted with its defaults, and its capability issued",
			in:     input(),
			want: logsPlan{logs: status(v1alpha1.LogsStarting, acceptedAt(0)), ask: ptr.To(storingSecret),
				children: logChildrenPlan{seal: true}, accepted: &logAcceptance{request: "r1", at: t0},
				events: []logLine{{slog.LevelInfo, "log request accepted", []any{"request", "r1", "job", job}}, issued(15 * time.Minute)}},
		},
		{
			reason: "a third request within the hour is accepted, and remembered with the two before",
			in: input(prior(status(v1alpha1.LogsSucceeded, message(command), finished(0), acceptedAt(-50*time.Minute, -10*time.Minute),
				func(ls *v1alpha1.LogsStatus) { ls.Request = "r0" }))),
			want: logsPlan{logs: status(v1alpha1.LogsStarting, acceptedAt(-50*time.Minute, -10*time.Minute, 0)), ask: ptr.To(storingSecret),
				children: logChildrenPlan{seal: true}, accepted: &logAcceptance{request: "r1", at: t0},
				events: []logLine{{slog.LevelInfo, "log request accepted", []any{"request", "r1", "job", job}}, issued(15 * time.Minute)}},
		},
		{
			reason: "a fourth request within the hour waits until the first leaves the hour; the one before is followed as before",
			in: input(prior(status(v1alpha1.LogsRunning, message(command), acceptedAt(-50*time.Minute, -20*time.Minute, -10*time.Minute),
				func(ls *v1alpha1.LogsStatus) { ls.Request = "r0" })), seen(ended(batchv1.JobComplete))),
			want: logsPlan{logs: status(v1alpha1.LogsSucceeded, message(command), finished(0), acceptedAt(-50*time.Minute, -20*time.Minute, -10*time.Minute),
				func(ls *v1alpha1.LogsStatus) { ls.Request = "r0" }),
				synced: ptr.To(logRequestThrottled("r1", t0.Add(10*time.Minute))), ask: ptr.To(retry), within: 10*time.Minute + time.Second,
				children: logChildrenPlan{job: true}, events: []logLine{finishedLine(v1alpha1.LogsSucceeded)}},
		},
		{
			reason: "requests older than an hour do not count, nor times after now (not written by a call)",
			in: input(prior(status(v1alpha1.LogsSucceeded, message(command), finished(0), acceptedAt(-2*time.Hour, -61*time.Minute, time.Hour, 2*time.Hour),
				func(ls *v1alpha1.LogsStatus) { ls.Request = "r0" }))),
			want: logsPlan{logs: status(v1alpha1.LogsStarting, acceptedAt(0)), ask: ptr.To(storingSecret),
				children: logChildrenPlan{seal: true}, accepted: &logAcceptance{request: "r1", at: t0},
				events: []logLine{{slog.LevelInfo, "log request accepted", []any{"request", "r1", "job", job}}, issued(15 * time.Minute)}},
		},
		{
			reason: "a status that forgot the requests of the hour: the process remembers them",
			in: input(func(in *logsInput) {
				in.served = []logAcceptance{{"a", t0.Add(-40 * time.Minute)}, {"b", t0.Add(-30 * time.Minute)}, {"c", t0.Add(-5 * time.Minute)}}
			}),
			want: logsPlan{synced: ptr.To(logRequestThrottled("r1", t0.Add(20*time.Minute))), within: 20*time.Minute + time.Second},
		},
		{
			reason: "a request this process accepted, its answer lost: accepted again as it was, not counted twice",
			in: input(func(in *logsInput) {
				in.served = []logAcceptance{{"a", t0.Add(-40 * time.Minute)}, {"b", t0.Add(-30 * time.Minute)}, {"r1", t0.Add(-time.Minute)}}
			}),
			want: logsPlan{logs: status(v1alpha1.LogsStarting, acceptedAt(-time.Minute)), ask: ptr.To(storingSecret),
				children: logChildrenPlan{seal: true}, accepted: &logAcceptance{request: "r1", at: t0.Add(-time.Minute)},
				events: []logLine{{slog.LevelInfo, "log request accepted", []any{"request", "r1", "job", job}}, issued(15 * time.Minute)}},
		},
		{
			reason: "SQL Server has no slow query log",
			in:     input(func(in *logsInput) { in.engine = v1alpha1.EngineSQLServer }),
			want: logsPlan{logs: status(v1alpha1.LogsStarting, acceptedAt(0), func(ls *v1alpha1.LogsStatus) { ls.Types = []string{v1alpha1.LogTypeError} }),
				ask: ptr.To(storingSecret), children: logChildrenPlan{seal: true}, accepted: &logAcceptance{request: "r1", at: t0},
				events: []logLine{{slog.LevelInfo, "log request accepted", []any{"request", "r1", "job", job}}, issued(15 * time.Minute)}},
		},
		{
			reason: "an invalid request is refused, the earlier one followed no further",
			in:     input(func(in *logsInput) { in.want.Lines = -1 }, prior(status(v1alpha1.LogsSucceeded, func(ls *v1alpha1.LogsStatus) { ls.Request = "r0" }))),
			want: logsPlan{logs: status(v1alpha1.LogsSucceeded, func(ls *v1alpha1.LogsStatus) { ls.Request = "r0" }),
				synced: ptr.To(notSynced(ReasonInvalidSpec, "logs.lines must be between 1 and 2000.", waitsForUser))},
		},
		{
			reason: "no image for log Jobs",
			in:     input(func(in *logsInput) { in.jobImage = "" }),
			want:   logsPlan{synced: ptr.To(notSynced(ReasonLogsUnavailable, "The controller has no image for log Jobs; its operator must set --job-image.", waitsForUser))},
		},
		{
			reason: "no key to seal capabilities with",
			in:     input(func(in *logsInput) { in.sealing = false }),
			want:   logsPlan{synced: ptr.To(notSynced(ReasonLogsUnavailable, msgNoLogsKey, waitsForUser))},
		},
		{
			reason: "starting, on a replica without the key",
			in:     input(prior(status(v1alpha1.LogsStarting)), func(in *logsInput) { in.sealing = false }),
			want:   logsPlan{logs: status(v1alpha1.LogsStarting), synced: ptr.To(notSynced(ReasonLogsUnavailable, msgNoLogsKey, waitsForUser))},
		},
		{
			reason: "starting, the Secret not observed yet: the same capability, look again very soon",
			in:     input(prior(status(v1alpha1.LogsStarting))),
			want:   logsPlan{logs: status(v1alpha1.LogsStarting), ask: ptr.To(storingSecret), children: logChildrenPlan{seal: true}},
		},
		{
			reason: "starting, a request this process did not accept: counted before its capability is issued",
			in:     input(forged(status(v1alpha1.LogsStarting))),
			want: logsPlan{logs: status(v1alpha1.LogsStarting), ask: ptr.To(storingSecret), children: logChildrenPlan{seal: true},
				accepted: &logAcceptance{request: "r1", at: t0}},
		},
		{
			reason: "running, a request this process did not accept: counted before its capability is sealed again",
			in:     input(forged(status(v1alpha1.LogsRunning, message(command))), observed(capability(15*time.Minute))),
			want: logsPlan{logs: status(v1alpha1.LogsRunning, message(command)), ask: ptr.To(retry),
				children: logChildrenPlan{seal: true, echo: capability(15 * time.Minute), job: true}, accepted: &logAcceptance{request: "r1", at: t0}},
		},
		{
			reason: "running, a request this process did not accept, the object's limit reached: it waits as a new one, no capability, no Job (found in review, issue #17)",
			in: input(forged(status(v1alpha1.LogsRunning, message(command))), observed(capability(15*time.Minute)), func(in *logsInput) {
				in.served = []logAcceptance{{"a", t0.Add(-40 * time.Minute)}, {"b", t0.Add(-30 * time.Minute)}, {"c", t0.Add(-5 * time.Minute)}}
			}),
			want: logsPlan{logs: status(v1alpha1.LogsStarting, func(ls *v1alpha1.LogsStatus) { ls.CredentialExpires = nil }),
				synced: ptr.To(logRequestThrottled("r1", t0.Add(20*time.Minute))), within: 20*time.Minute + time.Second,
				children: logChildrenPlan{echo: capability(15 * time.Minute)}},
		},
		{
			reason: "an invalid new request and a Starting one this process did not accept: no capability is sealed for it",
			in: input(forged(status(v1alpha1.LogsStarting)), func(in *logsInput) {
				in.want = &v1alpha1.LogsRequest{Request: "r2", Lines: -1}
			}),
			want: logsPlan{logs: status(v1alpha1.LogsStarting),
				synced: ptr.To(notSynced(ReasonInvalidSpec, "logs.lines must be between 1 and 2000.", waitsForUser))},
		},
		{
			reason: "a new request, the instance's limit reached by other objects (adopted again under new uids): it waits",
			in: input(func(in *logsInput) {
				in.servedInstance = []logAcceptance{{"uid-0/a", t0.Add(-40 * time.Minute)}, {"uid-0/b", t0.Add(-30 * time.Minute)}, {"uid-9/a", t0.Add(-5 * time.Minute)}}
			}),
			want: logsPlan{synced: ptr.To(logRequestThrottledForInstance("r1", t0.Add(20*time.Minute))), within: 20*time.Minute + time.Second},
		},
		{
			reason: "a request this process did not accept, the instance's limit reached: it waits",
			in: input(forged(status(v1alpha1.LogsStarting)), func(in *logsInput) {
				in.servedInstance = []logAcceptance{{"uid-0/a", t0.Add(-40 * time.Minute)}, {"uid-0/b", t0.Add(-30 * time.Minute)}, {"uid-9/a", t0.Add(-5 * time.Minute)}}
			}),
			want: logsPlan{logs: status(v1alpha1.LogsStarting, func(ls *v1alpha1.LogsStatus) { ls.CredentialExpires = nil }),
				synced: ptr.To(logRequestThrottledForInstance("r1", t0.Add(20*time.Minute))), within: 20*time.Minute + time.Second},
		},
		{
			reason: "starting, a capability that would expire before the Job's deadline is renewed",
			in:     input(prior(status(v1alpha1.LogsStarting)), observed(capability(15*time.Minute)), later(12*time.Minute)),
			want: logsPlan{logs: status(v1alpha1.LogsStarting, expires(27*time.Minute)), ask: ptr.To(storingSecret),
				children: logChildrenPlan{seal: true, echo: capability(15 * time.Minute)}, events: []logLine{issued(27 * time.Minute)}},
		},
		{
			reason: "starting, a forged expiry beyond the capability's lifetime is replaced",
			in:     input(prior(status(v1alpha1.LogsStarting, expires(24*time.Hour)))),
			want: logsPlan{logs: status(v1alpha1.LogsStarting), ask: ptr.To(storingSecret),
				children: logChildrenPlan{seal: true}, events: []logLine{issued(15 * time.Minute)}},
		},
		{
			reason: "starting, the Secret stored: the Job runs",
			in:     input(prior(status(v1alpha1.LogsStarting)), observed(capability(15*time.Minute))),
			want: logsPlan{logs: status(v1alpha1.LogsRunning, message(command)), ask: ptr.To(retry),
				children: logChildrenPlan{seal: true, echo: capability(15 * time.Minute), job: true}},
		},
		{
			reason: "running: followed until it ends",
			in:     input(prior(status(v1alpha1.LogsRunning, message(command))), observed(capability(15*time.Minute)), seen(&batchv1.Job{})),
			want: logsPlan{logs: status(v1alpha1.LogsRunning, message(command)), ask: ptr.To(retry),
				children: logChildrenPlan{seal: true, echo: capability(15 * time.Minute), job: true}},
		},
		{
			reason: "running, the Job completed: kept for the retention, its Secret no longer",
			in:     input(prior(status(v1alpha1.LogsRunning, message(command))), seen(ended(batchv1.JobComplete))),
			want: logsPlan{logs: status(v1alpha1.LogsSucceeded, message(command), finished(0)), ask: ptr.To(retry), within: time.Hour + time.Second,
				children: logChildrenPlan{job: true}, events: []logLine{finishedLine(v1alpha1.LogsSucceeded)}},
		},
		{
			reason: "running, the Job failed: its log says why",
			in:     input(prior(status(v1alpha1.LogsRunning, message(command))), seen(ended(batchv1.JobFailed))),
			want: logsPlan{logs: status(v1alpha1.LogsFailed, message("The log Job failed; its log says why: "+command+"."), finished(0)),
				ask: ptr.To(retry), within: time.Hour + time.Second,
				children: logChildrenPlan{job: true}, events: []logLine{finishedLine(v1alpha1.LogsFailed)}},
		},
		{
			reason: "running, the Job never seen and its capability over: given up",
			in:     input(prior(status(v1alpha1.LogsRunning, message(command))), later(20*time.Minute)),
			want: logsPlan{logs: status(v1alpha1.LogsFailed, message("The log Job is gone; set a new logs.request to read the logs again."), finished(20*time.Minute)),
				ask: ptr.To(retry), events: []logLine{finishedLine(v1alpha1.LogsFailed)}},
		},
		{
			reason: "succeeded, within the retention: the Job is kept",
			in:     input(prior(status(v1alpha1.LogsSucceeded, message(command), finished(0))), seen(ended(batchv1.JobComplete)), later(30*time.Minute)),
			want: logsPlan{logs: status(v1alpha1.LogsSucceeded, message(command), finished(0)), within: 30*time.Minute + time.Second,
				children: logChildrenPlan{job: true}},
		},
		{
			reason: "succeeded, the retention over: the Job goes",
			in:     input(prior(status(v1alpha1.LogsSucceeded, message(command), finished(0))), seen(ended(batchv1.JobComplete)), later(time.Hour)),
			want:   logsPlan{logs: status(v1alpha1.LogsSucceeded, message("The log Job is gone; set a new logs.request to read the logs again."), finished(0))},
		},
		{
			reason: "a new request after a finished one gets a new Job",
			in:     input(prior(status(v1alpha1.LogsSucceeded, message(command), finished(0), func(ls *v1alpha1.LogsStatus) { ls.Request = "r0" }))),
			want: logsPlan{logs: status(v1alpha1.LogsStarting, acceptedAt(0)), ask: ptr.To(storingSecret), children: logChildrenPlan{seal: true},
				accepted: &logAcceptance{request: "r1", at: t0},
				events:   []logLine{{slog.LevelInfo, "log request accepted", []any{"request", "r1", "job", job}}, issued(15 * time.Minute)}},
		},
		{
			reason: "being deleted: a new request is not accepted",
			in:     input(deleting),
			want:   logsPlan{},
		},
		{
			reason: "being deleted: a starting Job does not start, its Secret is echoed, not sealed",
			in:     input(deleting, prior(status(v1alpha1.LogsStarting)), observed(capability(15*time.Minute))),
			want: logsPlan{logs: status(v1alpha1.LogsStarting, message("The object is being deleted, so the log Job does not start.")),
				children: logChildrenPlan{echo: capability(15 * time.Minute)}},
		},
		{
			reason: "being deleted: a running Job is followed to its end",
			in:     input(deleting, prior(status(v1alpha1.LogsRunning, message(command))), seen(ended(batchv1.JobComplete))),
			want: logsPlan{logs: status(v1alpha1.LogsSucceeded, message(command), finished(0)), ask: ptr.To(retry), within: time.Hour + time.Second,
				children: logChildrenPlan{job: true}, events: []logLine{finishedLine(v1alpha1.LogsSucceeded)}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			in := tt.in
			var before *v1alpha1.LogsStatus
			if in.prior != nil {
				before = in.prior.DeepCopy()
			}
			assert.Equal(t, tt.want, planLogs(in))
			assert.Equal(t, before, in.prior, "the plan leaves its input alone")
		})
	}
}

// TestPlanLogChildren decides the log children of a call from status.logs alone, as a call that
// failed to observe the instance does.
func TestPlanLogChildren(t *testing.T) {
	ls := &v1alpha1.LogsStatus{Request: "r1", Job: "j", State: v1alpha1.LogsRunning, CredentialExpires: ptr.To(metav1.NewTime(t0))}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: logsSecretName("j")}, Data: map[string][]byte{logsapi.EnvToken: []byte("t")}}
	old := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: logsSecretName("j")}, Data: map[string][]byte{"OS_ACCESS_KEY": []byte("ak")}}
	in := logsInput{now: metav1.NewTime(t0), secrets: map[string]*corev1.Secret{s.Name: s}, sealing: true}
	assert.Equal(t, logChildrenPlan{echo: s, job: true}, planLogChildren(in, ls), "no instance observed: the Secret is echoed")
	in.instance = "inst-1"
	assert.Equal(t, logChildrenPlan{seal: true, echo: s, job: true}, planLogChildren(in, ls))
	in.sealing = false
	assert.Equal(t, logChildrenPlan{echo: s, job: true}, planLogChildren(in, ls), "no key: the Secret is echoed")
	in.secrets[s.Name] = old
	assert.Equal(t, logChildrenPlan{job: true}, planLogChildren(in, ls), "a Secret without a capability is not echoed")
	assert.Equal(t, logChildrenPlan{}, planLogChildren(in, nil))
}
