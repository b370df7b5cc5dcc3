package reconcile

import (
	"crypto/sha256"
	"strings"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// One-shot requests: a value of a spec field that asks for something to happen once (a restart for
// each restartrequest value, a minor version upgrade for each datastoreversion). Status records the
// value handled, but a call can observe a status that does not show it yet: the answer that
// recorded it was lost, a duplicate call ran next to the first on another replica, or the
// informer cache lagged. So the request is also remembered in the cloud, where every replica
// sees it, before it is carried out: a tag written ahead, as managed tags are (day2_tags.go).
//
//  1. The instance does not carry the request's tag: the call writes it, and nothing else.
//  2. The tag names the value, and the instance (or the observed status, or the tag itself) shows
//     the request carried out or under way: the call records the value as handled, no cloud call.
//  3. The tag names the value, nothing shows it carried out: the call carries it out.
//  4. Status records the value handled and the tag does not say so yet: the call seals the tag
//     (restart only), so that a call observing an older status later still finds it done.
//
// NOTE: OTC keeps no trace of a finished restart: REBOOTING shows one only while it runs, so the
// restart's mark is sealed ("<hash>-done") by the first call whose observed status records it.
// A call that observes an older status after the reboot ended and before the seal (one resync,
// about 10 s) would restart once more: the tag narrows the window to that, across replicas and
// process restarts, and cannot close it. A minor upgrade leaves its trace in the version.
const (
	// TagRestartRequest holds a hash of the restartrequest value whose restart is owed or done.
	TagRestartRequest = "rds-restart-request"
	// TagUpgradeRequest holds a hash of the datastoreversion a minor upgrade was asked for, and
	// the version the instance ran when the tag was written: "<hash>-<version>".
	TagUpgradeRequest = "rds-upgrade-request"
)

// oneShotStep is what a call does about a one-shot request.
type oneShotStep int

const (
	oneShotNothing oneShotStep = iota // no request, or status records it handled
	oneShotMark                       // write the tag ahead; the request waits for a later call
	oneShotRecord                     // carried out (or under way): record it in status, no call
	oneShotIssue                      // carry it out
	oneShotSeal                       // handled: make the tag say so (restart)
)

func (s oneShotStep) String() string {
	return [...]string{"Nothing", "Mark", "Record", "Issue", "Seal"}[s]
}

// oneShotFacts is what a call observes of one one-shot request.
type oneShotFacts struct {
	Asked   bool // the spec asks for a value
	Handled bool // the observed status records that value handled
	Marked  bool // the instance's tag names that value (written ahead)
	Sealed  bool // the tag says that value was carried out
	Evident bool // OTC or the observed status shows it carried out or under way
	// Sealable: the tag can say the value was carried out (restart); an upgrade's trace is the
	// version, its tag is never sealed.
	Sealable bool
}

// decideOneShot is the whole decision; see the comment at the top of the file.
func decideOneShot(f oneShotFacts) oneShotStep {
	switch {
	case !f.Asked:
		return oneShotNothing
	case f.Handled && f.Sealable && f.Marked && !f.Sealed:
		return oneShotSeal
	case f.Handled:
		return oneShotNothing // a tag removed by someone is not written again
	case !f.Marked:
		return oneShotMark // whatever else shows: without the tag it was not this object's request
	case f.Sealed || f.Evident:
		return oneShotRecord
	}
	return oneShotIssue
}

// RequestMark is the tag value that marks a one-shot request for value of the object uid: 8 hex
// digits of their sha256 (values are free text, tag values are not). The uid keeps a mark an
// earlier owner left (an adopted instance) from counting for this object.
func RequestMark(uid, value string) string {
	sum := sha256.Sum256([]byte(uid + "\x00" + value))
	return hexPrefix(sum[:], hashLen)
}

// RestartSeal is the rds-restart-request value once the restart for value was made.
func RestartSeal(uid, value string) string { return RequestMark(uid, value) + sealSuffix }

const sealSuffix = "-done"

// upgradeMark is the rds-upgrade-request value for asked while the instance runs running.
func upgradeMark(uid, asked, running string) string {
	return tagValue(RequestMark(uid, asked) + "-" + running)
}

// upgradeMarked reports whether tag marks a minor upgrade for asked (written while the instance
// ran any version).
func upgradeMarked(tag, uid, asked string) bool {
	return strings.HasPrefix(tag, RequestMark(uid, asked)+"-")
}

// restartFacts are the facts of spec.restartrequest want of the object uid: status handled the value handled, the
// instance's status and tags, the operation the observed status follows, and whether this process
// sent the restart (ledger.go). REBOOTING, the restart of want the observed status follows, or
// this process's own restart shows the restart made; each counts only with the mark.
func restartFacts(uid, want, handled, instStatus string, tags map[string]string, prev *v1alpha1.Operation, sentHere bool) oneShotFacts {
	tag := tags[TagRestartRequest]
	var marked, sealed bool
	if tag != "" { // NOTE: a mark is never empty: an instance without the tag needs no hash
		mark := RequestMark(uid, want)
		sealed = tag == mark+sealSuffix
		marked = tag == mark || sealed
	}
	return oneShotFacts{
		Asked:    want != "",
		Handled:  want == handled,
		Marked:   marked,
		Sealed:   sealed,
		Evident:  instStatus == cloud.StatusRebooting || prev != nil && prev.Type == OpRestart && prev.Target == want || sentHere,
		Sealable: true,
	}
}

// upgradeFacts are the facts of a minor upgrade asked for datastoreversion asked while the instance
// runs running. The mark holds the version the instance ran when it was written: another one
// shows the upgrade made, as does the upgrade the observed status follows.
func upgradeFacts(uid, asked, handled, running string, tags map[string]string, prev *v1alpha1.Operation) oneShotFacts {
	tag, tagged := tags[TagUpgradeRequest]
	marked := tagged && upgradeMarked(tag, uid, asked)
	return oneShotFacts{
		Asked:   asked != "",
		Handled: asked == handled,
		Marked:  marked,
		Evident: marked && tag != upgradeMark(uid, asked, running) || prev != nil && prev.Type == OpMinorUpgrade && prev.Target == asked,
	}
}
