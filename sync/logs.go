package reconcile

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/logsapi"
)

// A log request runs in three acts, one state each in status.logs, so that a lost response never
// starts a second Job:
//
//  1. Starting: the call that first sees a new spec.logs.request records when the Job's capability
//     expires (status.logs.credentialExpires); every call that observes the instance renders the
//     Job's Secret holding the capability, a pure function of status.logs, the instance id, the
//     object and the call's credentials (logs_capability.go), so two calls answer the same Secret
//     and no cloud call is made. The Job is returned only once the Secret is observed with a
//     capability that outlives the Job's deadline (a stale one is renewed before the Job starts).
//  2. Running: the Job and its Secret are returned until the Job is observed Complete or Failed.
//  3. Succeeded or Failed: the Secret is no longer returned (Metacontroller deletes it; the
//     capability expires by itself within minutes), and the Job is kept for the retention, then no
//     longer returned (Metacontroller deletes it). status.logs.request remembers the request.
//
// The Job holds no OTC credential: its capability reads one instance's logs through the hooks'
// logs port (ReadLogs, docs/logs.md). The logs step runs on every sync call that sees the
// instance, whichever step stopped before it, and finalize (logsStep). The rendering of the children
// (logChildren) reads only status.logs and the observed children, so every call returns them,
// even one that failed to observe the instance, and finalize.
// ReasonLogsUnavailable: the controller cannot run log Jobs.
const ReasonLogsUnavailable = "LogsUnavailable"

// Defaults of a log request and the limits it is checked against. rds-logs checks the same.
const (
	defaultLogsSince = "1h"
	defaultLogsLines = 200
	maxLogsLines     = logsapi.MaxLines
	maxLogsSince     = logsapi.MaxSince
	maxLogsRequest   = 63
)

// logsSincePattern is a duration of whole hours, minutes and seconds, e.g. 1h30m.
var logsSincePattern = regexp.MustCompile(`^([0-9]+[hms])+$`)

// validateLogs checks a log request; each problem is one stable sentence.
func validateLogs(r *v1alpha1.LogsRequest, engine string) []string {
	var problems []string
	if r.Request == "" || len(r.Request) > maxLogsRequest {
		problems = append(problems, fmt.Sprintf("logs.request must be 1 to %d characters.", maxLogsRequest))
	}
	if r.Since != "" {
		d, err := time.ParseDuration(r.Since)
		if !logsSincePattern.MatchString(r.Since) || err != nil || d < time.Minute || d > maxLogsSince {
			problems = append(problems, "logs.since must be a duration from 1m to 720h, e.g. 30m or 6h.")
		}
	}
	if r.Lines < 0 || r.Lines > maxLogsLines {
		problems = append(problems, fmt.Sprintf("logs.lines must be between 1 and %d.", maxLogsLines))
	}
	if slices.ContainsFunc(r.Types, func(t string) bool { return t != v1alpha1.LogTypeError && t != v1alpha1.LogTypeSlow }) {
		problems = append(problems, fmt.Sprintf("logs.types may hold only %s and %s.", v1alpha1.LogTypeError, v1alpha1.LogTypeSlow))
	}
	if engine == v1alpha1.EngineSQLServer && slices.Contains(r.Types, v1alpha1.LogTypeSlow) {
		problems = append(problems, "logs.types: SQL Server has no slow query log.")
	}
	return problems
}

// logsInput is all that the logs decision reads: spec.logs and status.logs, the observed Jobs and
// Secrets, the object (for the Job's name and the kubectl command), the instance's engine, the
// clock and the configuration of log Jobs.
type logsInput struct {
	want  *v1alpha1.LogsRequest // spec.logs
	prior *v1alpha1.LogsStatus  // status.logs
	// jobs and secrets are the observed children.
	jobs    map[string]*batchv1.Job
	secrets map[string]*corev1.Secret
	// object, namespace, uid and generation are the Rds object's.
	object, namespace, uid string
	generation             int64
	// instance is the id of the instance this call observed, "" if none (finalize, a failed
	// observation); engine is its engine.
	instance, engine string
	now              metav1.Time
	// deleting says the object is being deleted: a running Job is followed, none starts.
	deleting bool
	// jobImage, retention, deadline and capabilityTTL are Config's JobImage, LogsRetention,
	// LogsJobDeadline and LogsCapabilityTTL; sealing says a key to seal capabilities is there.
	jobImage                           string
	retention, deadline, capabilityTTL time.Duration
	sealing                            bool
	// served is what this process remembers of the object's log requests of the last hour, and
	// servedInstance of the instance's, whichever object made them (logs_limit.go).
	served, servedInstance []logAcceptance
}

// logsPlan is the decision of the logs step.
type logsPlan struct {
	// logs is status.logs as the step leaves it.
	logs *v1alpha1.LogsStatus
	// synced is the Synced outcome of a request that is refused, if any.
	synced *outcome
	// ask is the class whose resync the step asks for, if any; within asks to be called again
	// within that long (a finished Job's retention), if positive.
	ask    *class
	within time.Duration
	// children are the log children to render (planLogChildren).
	children logChildrenPlan
	events   []logLine
	// accepted is the request this plan accepted, for the process to remember.
	accepted *logAcceptance
}

// logChildrenPlan says which log children to return: the Job's Secret sealed anew (seal), else the
// observed one (echo, nil if none); and the Job.
type logChildrenPlan struct {
	seal bool
	echo *corev1.Secret
	job  bool
}

// planLogs decides the logs step: it accepts a new log request, starts its Job once the Job's
// capability is stored, follows the Job to its end and keeps it for the retention. It calls
// nothing.
func planLogs(in logsInput) logsPlan {
	p := logsPlan{logs: in.prior.DeepCopy()}
	p.decide(in)
	p.children = planLogChildren(in, p.logs)
	// NOTE: whatever path decide took (an invalid new request returns before it counts the one
	// status shows), no capability is sealed for a request this process has not counted.
	if p.children.seal && !p.counted(in) {
		p.children.seal = false
	}
	return p
}

// counted reports whether this process counted the request status.logs shows: accepted now, or
// remembered.
func (p *logsPlan) counted(in logsInput) bool {
	request := p.logs.Request
	return (p.accepted != nil && p.accepted.request == request) ||
		slices.ContainsFunc(in.served, func(a logAcceptance) bool { return a.request == request })
}

// decide is planLogs without the children.
func (p *logsPlan) decide(in logsInput) {
	if want := in.want; !in.deleting && want != nil && (p.logs == nil || p.logs.Request != want.Request) {
		if problems := validateLogs(want, in.engine); len(problems) > 0 {
			// NOTE: Ready is always set by now (report), so Synced alone says it, as invalid would.
			p.synced = ptr.To(notSynced(ReasonInvalidSpec, joinSentences(problems), waitsForUser))
			return
		}
		if in.jobImage == "" {
			p.synced = ptr.To(notSynced(ReasonLogsUnavailable,
				"The controller has no image for log Jobs; its operator must set --job-image.", waitsForUser))
			return
		}
		if !in.sealing {
			p.synced = ptr.To(notSynced(ReasonLogsUnavailable, msgNoLogsKey, waitsForUser))
			return
		}
		at := in.now.Time
		i := slices.IndexFunc(in.served, func(a logAcceptance) bool { return a.request == want.Request })
		next, throttled := in.nextLogRequest(p.priorAccepted(), want.Request)
		switch {
		case i >= 0: // accepted before by this process, its answer lost: the same answer
			at = in.served[i].at
		case !next.IsZero():
			// The request waits; the one before is followed as before.
			p.synced = ptr.To(throttled)
			p.askWithin(next.Sub(in.now.Time) + time.Second)
		}
		if i >= 0 || next.IsZero() {
			accepted := append(acceptedInWindow(p.priorAccepted(), at), metav1.NewTime(at))
			p.logs = acceptLogs(in, want)
			p.logs.Accepted = accepted
			p.accepted = &logAcceptance{request: want.Request, at: at}
			p.events = append(p.events, logLine{slog.LevelInfo, "log request accepted", []any{"request", want.Request, "job", p.logs.Job}})
		}
	}
	ls := p.logs
	if ls == nil {
		return
	}
	// NOTE: status.logs is the tenant's to write: a request it shows Starting or Running that this
	// process did not accept (a forged status, or another replica's) is counted here, before this
	// call issues a capability for it (planLogChildren seals one only on a call that observed the
	// instance), against the object's and the instance's limits of this process; status's own
	// record does not count, since it is what is in question. Beyond them the request waits as a
	// new one does: no capability, no Job (found in review, issue #17).
	if running := ls.State == v1alpha1.LogsStarting || ls.State == v1alpha1.LogsRunning; running && !in.deleting && in.instance != "" &&
		p.accepted == nil && !slices.ContainsFunc(in.served, func(a logAcceptance) bool { return a.request == ls.Request }) {
		next, throttled := in.nextLogRequest(nil, ls.Request)
		if !next.IsZero() {
			ls.State, ls.CredentialExpires, ls.Message = v1alpha1.LogsStarting, nil, msgLogsStarting
			p.synced = ptr.To(throttled)
			p.askWithin(next.Sub(in.now.Time) + time.Second)
			return
		}
		p.accepted = &logAcceptance{request: ls.Request, at: in.now.Time}
	}
	switch ls.State {
	case v1alpha1.LogsStarting:
		if in.deleting {
			ls.Message = "The object is being deleted, so the log Job does not start."
			return
		}
		p.start(in, ls)
	case v1alpha1.LogsRunning:
		p.follow(in, ls)
	case v1alpha1.LogsSucceeded, v1alpha1.LogsFailed:
		p.retain(in, ls)
	}
}

// nextLogRequest is when a new request of the object may be accepted (zero: now), by the acceptance
// times status remembers (prior), the object's in this process and the instance's in this
// process; and the Synced outcome of a request that waits until then.
func (in logsInput) nextLogRequest(prior []metav1.Time, request string) (time.Time, outcome) {
	object := nextLogRequest(prior, in.served, in.now.Time)
	instance := nextLogRequest(nil, in.servedInstance, in.now.Time)
	if instance.After(object) {
		return instance, logRequestThrottledForInstance(request, instance)
	}
	return object, logRequestThrottled(request, object)
}

// askWithin asks to be called again within d, or sooner if the plan asked so already.
func (p *logsPlan) askWithin(d time.Duration) {
	if p.within <= 0 || d < p.within {
		p.within = d
	}
}

// priorAccepted is the acceptance times status.logs remembers.
func (p *logsPlan) priorAccepted() []metav1.Time {
	if p.logs == nil {
		return nil
	}
	return p.logs.Accepted
}

// logsStep is the logs step, as the loop runs it (loop.go): it starts a new log request and follows
// the Job of the latest one. It runs after the instance steps, whether or not one of them stopped
// the call: it needs no read, no root password, makes no cloud call and changes nothing on the
// instance, so a restore or a day-2 change that holds the other steps for a long time, or an
// adopted instance whose password is unknown, does not hold a log request. An earlier step's
// resync survives. Finalize runs it too (deleting): a running Job is followed to its end and kept
// for its retention (logChildren returns it), but no Job starts and no capability is issued.
type logsStep struct {
	in logsInput
	p  logsPlan
}

// newLogsStep is the logs step of this call: on the instance it observed (engine), or while the
// object is being deleted.
func newLogsStep(c *call, engine string, deleting bool) *logsStep {
	in := c.logsInput()
	in.engine, in.deleting = engine, deleting
	return &logsStep{in: in}
}

func (s *logsStep) plan() head {
	s.p = planLogs(s.in)
	return head{tells: told(s.p.synced), logs: s.p.events, ask: s.p.ask, within: s.p.within}
}

func (s *logsStep) saw(need, seen)        {}
func (s *logsStep) answered(acted, error) {}

// render writes status.logs and a request the plan accepted, for the process to remember;
// logChildren renders the log children from status.logs.
func (s *logsStep) render(a *answer) {
	a.st.Logs = s.p.logs
	if s.p.accepted != nil {
		a.keep.logs = append(a.keep.logs, keptLogRequest{uid: s.in.uid, instance: s.in.instance, accepted: *s.p.accepted})
	}
}

// msgNoLogsKey: without a stable secret the replicas share no key to seal capabilities with.
const msgNoLogsKey = "The controller has no stable key to seal log Job capabilities with (a token login); its operator must set --password-key."

// logsInput is the logs decision's input of this call, without the instance's engine.
func (c *call) logsInput() logsInput {
	cfg := c.r.cfg
	in := logsInput{
		want: c.spec.Logs, prior: c.st.Logs, jobs: c.req.Jobs, secrets: c.req.Secrets,
		object: c.parent.Name, namespace: c.parent.Namespace, uid: string(c.parent.UID), generation: c.parent.Generation,
		instance: c.logsInstance, now: c.now,
		jobImage: cfg.JobImage, retention: cfg.LogsRetention, deadline: cfg.LogsJobDeadline, capabilityTTL: cfg.LogsCapabilityTTL,
		sealing: c.r.caps != nil,
	}
	in.served, in.servedInstance = c.r.logRequests.recent(string(c.parent.UID), c.logsInstance, c.now.Time)
	return in
}

// acceptLogs is the status of a new request, with the options it runs with.
func acceptLogs(in logsInput, want *v1alpha1.LogsRequest) *v1alpha1.LogsStatus {
	ls := &v1alpha1.LogsStatus{
		Request: want.Request,
		Job:     logsJobName(in.object, in.uid, in.generation, want.Request),
		State:   v1alpha1.LogsStarting,
		Since:   want.Since,
		Lines:   want.Lines,
		Types:   slices.Clone(want.Types),
	}
	if ls.Since == "" {
		ls.Since = defaultLogsSince
	}
	if ls.Lines == 0 {
		ls.Lines = defaultLogsLines
	}
	if len(ls.Types) == 0 {
		ls.Types = []string{v1alpha1.LogTypeError}
		if in.engine != v1alpha1.EngineSQLServer {
			ls.Types = append(ls.Types, v1alpha1.LogTypeSlow)
		}
	}
	ls.Message = msgLogsStarting
	return ls
}

const msgLogsStarting = "The log Job starts once its capability is stored."

// start moves on when the Job's Secret is observed with a capability that outlives the Job's
// deadline, and otherwise (re)sets the capability's expiry so that the Secret this call renders
// holds one that does.
func (p *logsPlan) start(in logsInput, ls *v1alpha1.LogsStatus) {
	if !in.sealing { // a replica started without the key
		p.synced = ptr.To(notSynced(ReasonLogsUnavailable, msgNoLogsKey, waitsForUser))
		return
	}
	if observed := observedLogsSecret(in.secrets, ls); observed != nil && in.now.Add(in.deadline).Before(logsSecretExpires(observed, ls)) {
		ls.State = v1alpha1.LogsRunning
		ls.Message = logsCommand(in.namespace, ls)
		p.follow(in, ls)
		return
	}
	p.ask = ptr.To(storingSecret)
	// NOTE: a capability costs no cloud call and is a function of status.logs: renewing it is only
	// a new expiry. It is renewed when it would expire before the Job could end (its Secret never
	// arrived in time, or the call that accepted the request was long ago); the Secret of the last
	// expiry may still be on its way, and two calls answer the same one.
	// A recorded expiry beyond the capability's lifetime from now was not written by a call (a
	// forged status): it is replaced too.
	if exp := ls.CredentialExpires; exp == nil || !in.now.Add(in.deadline).Before(exp.Time) ||
		exp.After(in.now.Add(in.capabilityTTL+capabilitySkew)) {
		next := metav1.NewTime(in.now.Add(in.capabilityTTL))
		ls.CredentialExpires = &next
		p.events = append(p.events, logLine{slog.LevelInfo, "log Job capability issued", []any{"job", ls.Job, "expires", next.Time}})
	}
	ls.Message = msgLogsStarting
}

// logsSecretExpires is when the capability in an observed log Secret expires: as its annotation
// says, or else as status.logs recorded.
func logsSecretExpires(s *corev1.Secret, ls *v1alpha1.LogsStatus) time.Time {
	if t, err := time.Parse(time.RFC3339, s.Annotations[AnnotationCapabilityExpires]); err == nil {
		return t
	}
	if ls.CredentialExpires != nil {
		return ls.CredentialExpires.Time
	}
	return time.Time{}
}

// follow records the end of the Job once it is observed.
func (p *logsPlan) follow(in logsInput, ls *v1alpha1.LogsStatus) {
	p.ask = ptr.To(retry)
	state := ""
	if job := in.jobs[ls.Job]; job != nil {
		for _, cond := range job.Status.Conditions {
			switch {
			case cond.Status != corev1.ConditionTrue:
			case cond.Type == batchv1.JobComplete:
				state = v1alpha1.LogsSucceeded
			case cond.Type == batchv1.JobFailed:
				state = v1alpha1.LogsFailed
			}
		}
	} else if exp := ls.CredentialExpires; exp != nil && !in.now.Time.Before(exp.Add(in.deadline)) {
		// The Job was never seen (refused by a quota, say) and could no longer run with its
		// capability: give up rather than keep its Secret for ever.
		state = v1alpha1.LogsFailed
	}
	if state == "" {
		return
	}
	ls.State = state
	finished := in.now
	ls.Finished = &finished
	p.events = append(p.events, logLine{slog.LevelInfo, "log Job finished", []any{"job", ls.Job, "state", state}})
	p.retain(in, ls)
}

// retain says where the output is while the Job is kept, and asks to be called when it goes.
func (p *logsPlan) retain(in logsInput, ls *v1alpha1.LogsStatus) {
	if !logsJobKept(in, ls) {
		ls.Message = "The log Job is gone; set a new logs.request to read the logs again."
		return
	}
	ls.Message = logsCommand(in.namespace, ls)
	if ls.State == v1alpha1.LogsFailed {
		ls.Message = "The log Job failed; its log says why: " + ls.Message + "."
	}
	if left := ls.Finished.Add(in.retention).Sub(in.now.Time); left > 0 {
		p.askWithin(left + time.Second)
	}
}

// logsJobKept reports whether a finished Job is still returned: while it is observed and within
// the retention. Once gone it is never returned again, or Metacontroller would run it again.
func logsJobKept(in logsInput, ls *v1alpha1.LogsStatus) bool {
	return ls.Finished != nil && in.jobs[ls.Job] != nil && in.now.Time.Before(ls.Finished.Add(in.retention))
}

func logsCommand(namespace string, ls *v1alpha1.LogsStatus) string {
	return fmt.Sprintf("kubectl logs -n %s job/%s", namespace, ls.Job)
}

// planLogChildren decides the log Job and its Secret as status.logs (ls) says they should be. It
// reads only ls and the observed children, so every call decides them, even one that failed to
// observe the instance, and finalize.
func planLogChildren(in logsInput, ls *v1alpha1.LogsStatus) logChildrenPlan {
	var p logChildrenPlan
	if ls == nil {
		return p
	}
	switch ls.State {
	case v1alpha1.LogsStarting, v1alpha1.LogsRunning:
		// NOTE: only a call that observed the instance renders the capability, for the instance it
		// observed; any other (a failed observation, finalize) echoes the observed Secret.
		p.seal = in.instance != "" && ls.CredentialExpires != nil && in.sealing
		p.echo = observedLogsSecret(in.secrets, ls)
		p.job = ls.State == v1alpha1.LogsRunning
	case v1alpha1.LogsSucceeded, v1alpha1.LogsFailed:
		p.job = logsJobKept(in, ls)
	}
	return p
}

// observedLogsSecret is the Job's Secret if it is observed with a capability in it (a Secret of
// an earlier version, with an AK/SK, is not).
func observedLogsSecret(secrets map[string]*corev1.Secret, ls *v1alpha1.LogsStatus) *corev1.Secret {
	s := secrets[logsSecretName(ls.Job)]
	if s == nil || len(s.Data[logsapi.EnvToken]) == 0 {
		return nil
	}
	return s
}

// NOTE: a Job's name becomes the job-name label of its pods, which allows 63 characters.
const (
	maxJobName      = 63
	logsJobInfix    = "-logs-"
	logsSecretSufix = "-credentials"
)

// logsJobName names the Job of one request. The generation that first saw the request is part of
// the hash, so that asking again with an earlier value is a new Job, not the old one found again.
func logsJobName(parent, uid string, generation int64, request string) string {
	sum := sha256.Sum256([]byte(uid + "/" + strconv.FormatInt(generation, 10) + "/" + request))
	suffix := logsJobInfix + hex.EncodeToString(sum[:])[:hashLen]
	if room := maxJobName - len(suffix); len(parent) > room {
		parent = strings.TrimRight(parent[:room], "-.")
	}
	return parent + suffix
}

func logsSecretName(job string) string { return job + logsSecretSufix }
