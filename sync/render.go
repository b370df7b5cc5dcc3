package reconcile

import (
	"k8s.io/utils/ptr"
)

// invalid reports a spec the hook does not act on; Ready keeps what it said, or says so if it
// said nothing yet.
func (f *findings) invalid(message string) {
	f.tell(notSynced(ReasonInvalidSpec, message, waitsForUser))
	f.tellFirst(notReady(ReasonInvalidSpec, "The spec is invalid; see the Synced condition.", waitsForUser))
}

// waitingForUser are the outcomes of something only the user can fix, looked at again at the
// steady pace (a referenced Secret is a related resource, so Metacontroller calls again as soon as
// it changes): Synced says what, Ready says so only if it said nothing yet.
func waitingForUser(reason, message string) []finding {
	return []finding{
		{outcome: notSynced(reason, message, waitsForUser)},
		{outcome: notReady(reason, "Waiting for the spec's prerequisites; see the Synced condition.", waitsForUser), first: true},
	}
}

// pending are the outcomes of a change the call issued whose operation Ready follows.
func pending(reason, message string) []finding {
	return told(ptr.To(notReady(reason, message, inFlight)), ptr.To(syncedOK(ReasonReconcileSuccess, "The change was issued to OTC.", inFlight).made()))
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
		conn := *c.conn
		conn.readers = readerHosts(c.spec, c.st.ReadReplicas) // replicas.go
		children = append(children, connectionSecret(c.parent, conn))
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

// findings are the outcomes of a reference the call does not use, for a call that manages no
// instance yet (create, adopt: status.id is empty). One the tenancy rules refuse is InvalidSpec-style
// (the user must change the spec): a stable Synced and Ready, and no cloud change. Any other
// waits for the user (waitingForUser).
func (b blocked) findings() []finding {
	if b.tenancy {
		return []finding{
			{outcome: notSynced(b.reason, b.message, waitsForUser)},
			{outcome: notReady(b.reason, "The spec names an instance this object may not use; see the Synced condition.", waitsForUser)},
		}
	}
	return waitingForUser(b.reason, b.message)
}
