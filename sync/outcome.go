package sync

import (
	"context"
	"log/slog"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
)

// class says what an outcome asks of the next call, and so when it comes. Throttling is not a
// class: it is answered with 429 (ThrottledError) and Metacontroller keeps the status.
type class int

const (
	// settled: nothing is in flight; the steady resync looks again.
	settled class = iota
	// inFlight: OTC works on a change, or the instance is in a transitional state; look again soon.
	inFlight
	// retry: a failure that may pass by itself (OTC unavailable, the instance busy); look again soon.
	retry
	// waitsForUser: only a change of the spec, a Secret or the instance by a person helps; the steady
	// resync looks again, and Metacontroller calls at once when the object or a related Secret changes.
	waitsForUser
	// storingSecret: a child Secret must be stored before the next step; look again very soon.
	storingSecret
)

// outcome is one finding of a call, the only shape in which a decision reports: the condition it
// sets, its reason (a Reason constant, named as its value), a stable sentence (no ids, times or
// counters, so that the same state writes the same status), and its class.
type outcome struct {
	cond    string
	status  metav1.ConditionStatus
	reason  string
	message string
	class   class
	// about marks an outcome about the call's own change (made) or an operation under way
	// (underway), or a fallback; it ranks the outcome in Ready and Synced (rankOf).
	about about
}

// about is what an outcome reports beyond its status.
type about int

const (
	aboutState    about = iota // what a step found
	aboutUnderway              // an operation an earlier call started, still under way
	aboutMade                  // this call's one change, made or refused by OTC
	aboutFallback              // what the call says when no step says more: any other outcome replaces it
)

// syncedOK is a Synced=True outcome.
func syncedOK(reason, message string, cl class) outcome {
	return outcome{cond: v1alpha1.ConditionSynced, status: metav1.ConditionTrue, reason: reason, message: message, class: cl}
}

// notSynced is a Synced=False outcome.
func notSynced(reason, message string, cl class) outcome {
	return outcome{cond: v1alpha1.ConditionSynced, status: metav1.ConditionFalse, reason: reason, message: message, class: cl}
}

// notReady is a Ready=False outcome.
func notReady(reason, message string, cl class) outcome {
	return outcome{cond: v1alpha1.ConditionReady, status: metav1.ConditionFalse, reason: reason, message: message, class: cl}
}

// resyncOf is the one rule for when to call again: each class asks for a delay, and a call answers
// the shortest delay any of its outcomes asked for (ask).
func (r *Reconciler) resyncOf(cl class) time.Duration {
	switch cl {
	case inFlight, retry:
		return r.cfg.ResyncPending
	case storingSecret:
		return r.cfg.ResyncSecret
	}
	return r.cfg.ResyncSteady
}

// made marks the outcome of this call's one change: what the call did to the cloud is what it
// reports in Synced.
func (o outcome) made() outcome { o.about = aboutMade; return o }

// underway marks the outcome of an operation an earlier call started.
func (o outcome) underway() outcome { o.about = aboutUnderway; return o }

// fallback marks what the call says when no step says more: Synced's "The instance matches the
// spec.", Ready from the instance's status. Any other outcome of the condition replaces it.
func (o outcome) fallback() outcome { o.about = aboutFallback; return o }

// tell records an outcome: its condition, and its class's resync. Ready and Synced have one owner
// per call (rankOf); a later outcome of lower or equal rank does not replace an earlier one.
func (c *call) tell(o outcome) {
	c.ask(c.r.resyncOf(o.class))
	if !c.mayTell(o.cond, rankOf(o)) {
		return
	}
	c.setCondition(o.cond, o.status, o.reason, o.message)
}

// The ranks of Ready and Synced outcomes. Each of the two has one owner per call: the first
// outcome of the highest rank. A problem (False) outranks any good news, so that no change,
// operation or wait hides what someone must fix; among problems, OTC's refusal of this call's own change comes first, since it
// is what the call just learned. Among the rest, the call's change outranks an operation under way,
// which outranks a wait. Among equals the earlier step, in the fixed order of the steps, keeps it.
// So which outcome shows never depends on who wrote last; status.operation still tells an
// operation under way while a problem shows.
const (
	rankNone     = -2 // nothing told yet in this call
	rankDefault  = -1 // a fallback: any other outcome replaces it
	rankWaiting  = 0  // True: nothing to change, or waiting for the instance
	rankUnderway = 1  // True: an operation an earlier call started
	rankMade     = 2  // True: this call's one change
	rankProblem  = 3  // False: a problem someone must fix, or a failure
	rankRefused  = 4  // False: OTC refused this call's one change
)

func rankOf(o outcome) int {
	problem := o.status != metav1.ConditionTrue
	switch {
	case o.about == aboutFallback:
		return rankDefault
	case problem && o.about == aboutMade:
		return rankRefused
	case problem:
		return rankProblem
	case o.about == aboutMade:
		return rankMade
	case o.about == aboutUnderway:
		return rankUnderway
	}
	return rankWaiting
}

// mayTell reports whether an outcome of this rank becomes the call's condition cond, and if so
// takes the rank. Only Ready and Synced are ranked: every other condition has one step that
// writes it.
func (c *call) mayTell(cond string, rank int) bool {
	var told *int
	switch cond {
	case v1alpha1.ConditionReady:
		told = &c.readyRank
	case v1alpha1.ConditionSynced:
		told = &c.syncedRank
	default:
		return true
	}
	if *told != rankNone && rank <= *told {
		return false
	}
	*told = rank
	return true
}

// ask asks to be called again within d at the latest. The answer's resync is the shortest delay
// any part of the call asked for, the steady resync when none did: no part of a call can lengthen
// what another asked.
func (c *call) ask(d time.Duration) {
	if d > 0 {
		c.resync = min(c.resync, d)
	}
}

// askClass is ask with the delay of a class.
func (c *call) askClass(cl class) { c.ask(c.r.resyncOf(cl)) }

// logLine is a line a step logs for its decision.
type logLine struct {
	level slog.Level
	msg   string
	args  []any
}

// logAll logs a plan's lines.
func (c *call) logAll(ctx context.Context, lines []logLine) {
	for _, l := range lines {
		c.log.Log(ctx, l.level, l.msg, l.args...)
	}
}

// tellAll tells the outcomes that are set, in order.
func (c *call) tellAll(outcomes ...*outcome) {
	for _, o := range outcomes {
		if o != nil {
			c.tell(*o)
		}
	}
}

// setCondition sets a condition of the answer.
//
// NOTE: a call may set a condition more than once: Synced True before the steps, then False from a
// step that finds a problem it reported before. The transition time compares with what the last
// call reported, not with the value set earlier in this call, or it would move on every call.
func (c *call) setCondition(typ string, status metav1.ConditionStatus, reason, message string) {
	setCondition(&c.st, c.now, typ, status, reason, message)
	if old := getCondition(&c.parent.Status, typ); old != nil && old.Status == status {
		getCondition(&c.st, typ).LastTransitionTime = old.LastTransitionTime
	}
}
