package sync

import (
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
)

// invalid reports a spec the hook does not act on; Ready keeps what it said, or says so if it
// said nothing yet.
func (f *findings) invalid(message string) {
	f.tell(notSynced(ReasonInvalidSpec, message, waitsForUser))
	f.tellFirst(notReady(ReasonInvalidSpec, "The spec is invalid; see the Synced condition.", waitsForUser))
}

// waitForUser reports something only the user can fix, and looks again at the steady pace: a
// referenced Secret is a related resource, so Metacontroller calls again as soon as it changes.
func (f *findings) waitForUser(reason, message string) {
	f.tell(notSynced(reason, message, waitsForUser))
	f.tellFirst(notReady(reason, "Waiting for the spec's prerequisites; see the Synced condition.", waitsForUser))
}

func (f *findings) pending(reason, message string) {
	f.tell(notReady(reason, message, inFlight))
	f.tell(syncedOK(ReasonReconcileSuccess, "The change was issued to OTC.", inFlight).made())
}

// synced is the Synced condition of a call that found nothing to say: every outcome a step tells
// replaces it.
func (f *findings) synced() {
	f.tell(syncedOK(ReasonReconcileSuccess, "The instance matches the spec.", settled).fallback())
}

// children returns every child to keep. A child left out is deleted by Metacontroller, so the
// connection Secret is echoed as observed whenever this call had nothing newer to say.
func (c *call) children() []any {
	children := []any{}
	switch observed := c.req.Secrets[c.st.ConnectionSecret]; {
	case c.conn != nil:
		children = append(children, connectionSecret(c.parent, *c.conn))
	case observed != nil:
		children = append(children, echoSecret(c.parent, observed))
	}
	return keepUserSecrets(c.req, &c.st, append(children, c.extra...)) // databases.go
}

// blocked is why a reference in the spec (restorefrom, instanceid) is not used: a Synced=False
// outcome, whose Ready follows refused when the tenancy rules refuse it (tenancy), else
// waitForUser.
type blocked struct {
	outcome
	tenancy bool
}

// block reports why a reference in the spec is not used.
func (f *findings) block(b blocked, id string) {
	if b.tenancy {
		f.refused(b.reason, b.message, id)
		return
	}
	f.waitForUser(b.reason, b.message)
}

// refused reports a reference the tenancy rules refuse (InvalidSpec-style: the user must change
// the spec): a stable Synced and, unless set already, Ready condition, and no cloud change.
func (f *findings) refused(reason, message, id string) {
	f.tell(notSynced(reason, message, waitsForUser))
	if f.condition(v1alpha1.ConditionReady) == nil || id == "" {
		f.tell(notReady(reason, "The spec names an instance this object may not use; see the Synced condition.", waitsForUser))
	}
}
