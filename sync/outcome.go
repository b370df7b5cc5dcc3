package sync

import (
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

func (cl class) String() string {
	return [...]string{"settled", "inFlight", "retry", "waitsForUser", "storingSecret"}[cl]
}

// outcome is one finding of a call, the only shape in which a decision reports: the condition it
// sets, its reason (a Reason constant, named as its value), a stable sentence (no ids, times or
// counters, so that the same state writes the same status), and its class.
type outcome struct {
	cond    string
	status  metav1.ConditionStatus
	reason  string
	message string
	class   class
}

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

// tell records an outcome: its condition, and its class's resync.
func (c *call) tell(o outcome) {
	c.setCondition(o.cond, o.status, o.reason, o.message)
	c.ask(c.r.resyncOf(o.class))
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
