package sync

import (
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
)

// invalid reports a spec the hook does not act on; Ready keeps what it said, or says so if it
// said nothing yet.
func (c *call) invalid(message string) {
	c.out.tell(notSynced(ReasonInvalidSpec, message, waitsForUser))
	c.out.tellFirst(notReady(ReasonInvalidSpec, "The spec is invalid; see the Synced condition.", waitsForUser))
}

// waitForUser reports something only the user can fix, and looks again at the steady pace: a
// referenced Secret is a related resource, so Metacontroller calls again as soon as it changes.
func (c *call) waitForUser(reason, message string) {
	c.out.tell(notSynced(reason, message, waitsForUser))
	c.out.tellFirst(notReady(reason, "Waiting for the spec's prerequisites; see the Synced condition.", waitsForUser))
}

func (c *call) pending(reason, message string) {
	c.out.tell(notReady(reason, message, inFlight))
	c.out.tell(syncedOK(ReasonReconcileSuccess, "The change was issued to OTC.", inFlight).made())
}

// synced is the Synced condition of a call that found nothing to say: every outcome a step tells
// replaces it.
func (c *call) synced() {
	c.out.tell(syncedOK(ReasonReconcileSuccess, "The instance matches the spec.", settled).fallback())
}

// children returns every child to keep. A child left out is deleted by Metacontroller, so the
// connection Secret is echoed as observed whenever this call had nothing newer to say.
func (c *call) children() []any {
	children := []any{}
	switch observed := c.observedSecret(); {
	case c.conn != nil:
		children = append(children, connectionSecret(c.parent, *c.conn))
	case observed != nil:
		children = append(children, echoSecret(c.parent, observed))
	}
	return c.keepUserSecrets(append(children, c.extra...)) // databases.go
}

// blocked is why a reference in the spec (restorefrom, instanceid) is not used: a Synced=False
// outcome, whose Ready follows refused when the tenancy rules refuse it (tenancy), else
// waitForUser.
type blocked struct {
	outcome
	tenancy bool
}

// block reports why a reference in the spec is not used.
func (c *call) block(b blocked) {
	if b.tenancy {
		c.refused(b.reason, b.message)
		return
	}
	c.waitForUser(b.reason, b.message)
}

// refused reports a reference the tenancy rules refuse (InvalidSpec-style: the user must change
// the spec): a stable Synced and, unless set already, Ready condition, and no cloud change.
func (c *call) refused(reason, message string) {
	c.out.tell(notSynced(reason, message, waitsForUser))
	if c.out.condition(v1alpha1.ConditionReady) == nil || c.st.ID == "" {
		c.out.tell(notReady(reason, "The spec names an instance this object may not use; see the Synced condition.", waitsForUser))
	}
}
