package reconcile

import (
	"context"
	"log/slog"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
)

// class says what an outcome asks of the next call, and so when it comes. Throttling is not a
// class: it is answered with 429 (ThrottledError) and Metacontroller keeps the status.
type class uint8

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
type about uint8

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

// The ranks of Ready and Synced outcomes. Each of the two has one owner per call: the first
// outcome of the highest rank. A problem (False) outranks any good news, so that no change,
// operation or wait hides what someone must fix; among problems, OTC's refusal of this call's own change comes first, since it
// is what the call just learned. Among the rest, the call's change outranks an operation under way,
// which outranks a wait. Among equals the earlier step, in the fixed order of the steps, keeps it.
// So which outcome shows never depends on who wrote last; status.operation still tells an
// operation under way while a problem shows.
const (
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

// ranked reports whether a condition has one owner per call chosen by rank (Ready, Synced); every
// other condition has one step that tells it, and the last word of that step stands.
func ranked(cond string) bool {
	return cond == v1alpha1.ConditionReady || cond == v1alpha1.ConditionSynced
}

// findings collect what the steps of one call told, in the order they told it. Nothing is written
// while the call runs: render chooses each condition once, by rank, and the resync, when the
// answer is written (docs/conditions.md).
type findings struct {
	// prior are the conditions the last call left, which a condition keeps while no step tells
	// it, and against which a transition time is kept.
	prior []v1alpha1.Condition
	told  []finding
	// within is the shortest delay asked for (ask, the outcomes' classes); 0: none yet.
	within time.Duration
	delay  func(class) time.Duration
}

// finding is one word of a step about a condition: an outcome, told only if the condition says
// nothing yet (first), or the condition's removal (drop).
type finding struct {
	outcome
	first, drop bool
}

func newFindings(prior []v1alpha1.Condition, delay func(class) time.Duration) findings {
	// NOTE: a steady call tells about six findings; room for eight is one allocation instead of four.
	return findings{prior: prior, delay: delay, told: make([]finding, 0, 8)}
}

// tell records an outcome: its condition, and its class's resync.
func (f *findings) tell(o outcome) {
	f.askClass(o.class)
	f.told = append(f.told, finding{outcome: o})
}

// tellAll tells the outcomes that are set, in order.
func (f *findings) tellAll(outcomes ...*outcome) {
	for _, o := range outcomes {
		if o != nil {
			f.tell(*o)
		}
	}
}

// record tells what a step's last plan says: its outcomes, in order, and how soon it asks to be
// called again.
func (f *findings) record(h head) {
	for _, t := range h.tells {
		if !t.drop {
			f.askClass(t.class)
		}
		f.told = append(f.told, t)
	}
	if h.ask != nil {
		f.askClass(*h.ask)
	}
	f.ask(h.within)
}

// told is an outcome as a step's plan tells it; nil tells nothing.
func told(outcomes ...*outcome) []finding {
	var out []finding
	for _, o := range outcomes {
		if o != nil {
			out = append(out, finding{outcome: *o})
		}
	}
	return out
}

// The removal of a condition a steady call tells at every call (the step has nothing to say of it),
// made once for the process rather than once per call (#18). Tells are only read (findings.record
// copies them), and each of these has len == cap, so that an append to one copies it first.
var (
	dropAutopilot      = dropped(v1alpha1.ConditionAutopilot)
	dropDatabasesReady = dropped(v1alpha1.ConditionDatabasesReady)
	dropDuplicates     = dropped(v1alpha1.ConditionInstanceDuplicates)
	dropParameters     = dropped(v1alpha1.ConditionParameters)
)

// dropped tells the removal of cond, alone.
func dropped(cond string) []finding {
	return []finding{{outcome: outcome{cond: cond}, drop: true}}
}

// thenDrop is tells followed by drop (one of the package's removals above): drop itself when
// nothing else is told.
func thenDrop(tells, drop []finding) []finding {
	if len(tells) == 0 {
		return drop
	}
	return append(tells, drop...)
}

// tellFirst tells an outcome only if its condition says nothing yet (neither the last call's
// status nor an earlier step of this call): a first word that a later outcome may replace.
func (f *findings) tellFirst(o outcome) {
	f.askClass(o.class)
	f.told = append(f.told, finding{outcome: o, first: true})
}

// drop removes a condition that no longer applies.
func (f *findings) drop(cond string) {
	f.told = append(f.told, finding{outcome: outcome{cond: cond}, drop: true})
}

// ask asks to be called again within d at the latest. The answer's resync is the shortest delay
// any part of the call asked for, the steady resync when none did: no part of a call can lengthen
// what another asked.
func (f *findings) ask(d time.Duration) {
	if d > 0 && (f.within == 0 || d < f.within) {
		f.within = d
	}
}

// askClass is ask with the delay of a class.
func (f *findings) askClass(cl class) { f.ask(f.delay(cl)) }

// resync is the delay the answer asks for: the shortest any part of the call asked, else the
// steady one.
func (f *findings) resync() time.Duration {
	if steady := f.delay(settled); f.within == 0 || f.within > steady {
		return steady
	}
	return f.within
}

// chosen is a condition as the findings so far choose it: the winning outcome and its rank, or
// dropped, or nothing told (told false).
type chosen struct {
	outcome
	rank          int
	told, dropped bool
}

// chooseOne goes through the findings in order and chooses the condition typ: for Ready and
// Synced the first outcome of the highest rank, for any other the last word. A first word counts
// only while the condition says nothing, in the last call's status or in this call. Steps ask it
// part-way through a call (condition), render for each condition told.
func (f *findings) chooseOne(typ string) chosen {
	var cur chosen
	for _, t := range f.told {
		if t.cond != typ {
			continue
		}
		if next, ok := f.chooseNext(cur, t); ok {
			cur = next
		}
	}
	return cur
}

// chooseNext is what one finding makes of a condition chosen so far (choose's rule), and whether
// it changes it.
func (f *findings) chooseNext(cur chosen, t finding) (chosen, bool) {
	switch {
	case t.drop:
		return chosen{dropped: true}, true
	case t.first:
		if cur.told || (!cur.dropped && getConditionIn(f.prior, t.cond) != nil) {
			return cur, false
		}
		return chosen{outcome: t.outcome, rank: rankOf(t.outcome), told: true}, true
	case ranked(t.cond) && cur.told && rankOf(t.outcome) <= cur.rank:
		// a later outcome of lower or equal rank does not replace an earlier one
		return cur, false
	default:
		return chosen{outcome: t.outcome, rank: rankOf(t.outcome), told: true}, true
	}
}

// condition is the condition typ as the answer would carry it now: chosen from what the call told
// so far, else as the last call left it; nil when it has none.
func (f *findings) condition(typ string) *v1alpha1.Condition {
	if c, ok := f.current(typ); ok {
		return &c
	}
	return nil
}

// has says the answer would carry the condition typ now (condition is not nil).
func (f *findings) has(typ string) bool {
	_, ok := f.current(typ)
	return ok
}

// current is condition as a value, and whether there is one: a caller that only reads it makes no
// copy on the heap (#18).
func (f *findings) current(typ string) (v1alpha1.Condition, bool) {
	switch ch := f.chooseOne(typ); {
	case ch.dropped:
		return v1alpha1.Condition{}, false
	case ch.told:
		return v1alpha1.Condition{Type: typ, Status: ch.status, Reason: ch.reason, Message: ch.message}, true
	}
	if old := getConditionIn(f.prior, typ); old != nil {
		return *old, true
	}
	return v1alpha1.Condition{}, false
}

// render writes the conditions of the answer, each once: a condition no step told keeps what the
// last call left, a dropped one goes, a told one keeps its transition time while its status holds
// (setCondition). New conditions follow in the order they were first told.
//
// NOTE: each condition is chosen where it was first told (chooseOne): a call tells a handful, and
// searching them costs less than a list of the conditions chosen, which every call would make.
func (f *findings) render(now metav1.Time) []v1alpha1.Condition {
	st := v1alpha1.RdsStatus{Conditions: slices.Clone(f.prior)}
	for i, t := range f.told {
		if f.toldBefore(i, t.cond) {
			continue
		}
		switch ch := f.chooseOne(t.cond); {
		case ch.dropped:
			removeCondition(&st, t.cond)
		case ch.told:
			setCondition(&st, now, t.cond, ch.status, ch.reason, ch.message)
		}
	}
	return st.Conditions
}

// toldBefore says a finding before the i-th was about the condition typ.
func (f *findings) toldBefore(i int, typ string) bool {
	for _, t := range f.told[:i] {
		if t.cond == typ {
			return true
		}
	}
	return false
}

// logLine is a line a step logs for its decision.
type logLine struct {
	level slog.Level
	msg   string
	args  []any
}

// logAll logs a plan's lines.
func logAll(ctx context.Context, log *slog.Logger, lines []logLine) {
	for _, l := range lines {
		log.Log(ctx, l.level, l.msg, l.args...)
	}
}
