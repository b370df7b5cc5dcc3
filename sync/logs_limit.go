package reconcile

import (
	"fmt"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ReasonLogRequestThrottled: the object's log requests of the last hour reached the limit.
const ReasonLogRequestThrottled = "LogRequestThrottled"

// Each log request buys its Job a capability of up to maxReadsPerCapability OTC log reads (and an
// instance read each) on the object's login. At most maxLogRequests requests of one object are
// accepted within logRequestWindow; a new value of logs.request beyond that waits, so that new
// values buy no new read budget.
//
// NOTE: status.logs.accepted is the object's memory of its requests, and holds across replicas
// against a tenant who can only edit the spec. A tenant who may also write rds/status can erase it;
// logRequests, the process's memory by object uid, then holds the same limit per replica (until it
// restarts). It changes no answer for a status that is true: it only remembers more than a status
// that forgot. A request it accepted is accepted again with the time it was accepted at (a lost
// answer), never counted twice. A request status.logs claims was accepted, but the process did
// not accept (a forged status, another replica's, one from before a restart), is counted before a
// capability is issued for it. The process also counts by instance, across objects, so that
// objects made again to adopt the same instance (each with a new uid) buy no new reads of it.
const (
	maxLogRequests   = 3
	logRequestWindow = time.Hour
)

// logAcceptance is a log request accepted for an object, and when.
type logAcceptance struct {
	request string
	at      time.Time
}

// nextLogRequest is when a new log request may be accepted at now, given the acceptance times
// status remembers and those the process remembers; zero: now. Times outside the window, and
// times after now (not written by a call), do not count.
func nextLogRequest(status []metav1.Time, process []logAcceptance, now time.Time) time.Time {
	var next time.Time
	consider := func(times []time.Time) {
		times = slices.DeleteFunc(times, func(at time.Time) bool { return !inLogWindow(at, now) })
		if len(times) < maxLogRequests {
			return
		}
		slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
		if t := times[len(times)-maxLogRequests].Add(logRequestWindow); t.After(next) {
			next = t
		}
	}
	var fromStatus, fromProcess []time.Time
	for _, at := range status {
		fromStatus = append(fromStatus, at.Time)
	}
	for _, a := range process {
		fromProcess = append(fromProcess, a.at)
	}
	consider(fromStatus)
	consider(fromProcess)
	return next
}

func inLogWindow(at, now time.Time) bool {
	return !at.After(now) && now.Sub(at) < logRequestWindow
}

// acceptedInWindow is the acceptance times of status that still count at now.
func acceptedInWindow(status []metav1.Time, now time.Time) []metav1.Time {
	var out []metav1.Time
	for _, at := range status {
		if inLogWindow(at.Time, now) {
			out = append(out, at)
		}
	}
	return out
}

// logRequestThrottled is the Synced outcome of a request that waits until next.
func logRequestThrottled(request string, next time.Time) outcome {
	return notSynced(ReasonLogRequestThrottled, fmt.Sprintf(
		"The log request %q was not started: %d log requests of this object were accepted within the last hour; the next one is allowed at %s.",
		request, maxLogRequests, next.UTC().Format(time.RFC3339)), settled)
}

// logRequestThrottledForInstance is the Synced outcome of a request that waits until next because
// of the instance's requests, across the objects that adopted it.
func logRequestThrottledForInstance(request string, next time.Time) outcome {
	return notSynced(ReasonLogRequestThrottled, fmt.Sprintf(
		"The log request %q was not started: %d log requests of this object's instance were accepted within the last hour; the next one is allowed at %s.",
		request, maxLogRequests, next.UTC().Format(time.RFC3339)), settled)
}

// logRequests is the process's memory of the log requests accepted for each object (by uid) and
// for each instance (by id; its entries' request is "<uid>/<request>") within the window.
type logRequests struct {
	mu         sync.Mutex
	byUID      map[string][]logAcceptance
	byInstance map[string][]logAcceptance
	swept      time.Time
}

func newLogRequests() *logRequests {
	return &logRequests{byUID: map[string][]logAcceptance{}, byInstance: map[string][]logAcceptance{}}
}

// recent is what the process remembers of uid's requests, and of the requests of every object for
// the instance, at now.
func (l *logRequests) recent(uid, instance string, now time.Time) (object, inst []logAcceptance) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	if instance != "" {
		inst = slices.Clone(l.byInstance[instance])
	}
	return slices.Clone(l.byUID[uid]), inst
}

// record remembers that uid's request for the instance was accepted at at.
func (l *logRequests) record(uid, instance string, a logAcceptance) {
	l.mu.Lock()
	defer l.mu.Unlock()
	add := func(m map[string][]logAcceptance, key string, a logAcceptance) {
		if !slices.ContainsFunc(m[key], func(b logAcceptance) bool { return b.request == a.request }) {
			m[key] = append(m[key], a)
		}
	}
	add(l.byUID, uid, a)
	if instance != "" {
		add(l.byInstance, instance, logAcceptance{request: uid + "/" + a.request, at: a.at})
	}
}

// sweep forgets what left the window, at most once a minute. The caller holds l.mu.
func (l *logRequests) sweep(now time.Time) {
	if now.Sub(l.swept) < time.Minute && !now.Before(l.swept) {
		return
	}
	l.swept = now
	for _, m := range []map[string][]logAcceptance{l.byUID, l.byInstance} {
		for key, as := range m {
			as = slices.DeleteFunc(as, func(a logAcceptance) bool { return now.Sub(a.at) >= logRequestWindow })
			if len(as) == 0 {
				delete(m, key)
			} else {
				m[key] = as
			}
		}
	}
}
