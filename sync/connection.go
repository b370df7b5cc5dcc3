package sync

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

func (c *call) observedSecret() *corev1.Secret { return c.req.Secrets[c.st.ConnectionSecret] }

func (c *call) observedPassword() (secret.Value, bool) { return observedPassword(c.observedSecret()) }

// connectionFor sets the connection Secret for an existing instance (connectionOf). It reports
// false when the password is unknown.
func (c *call) connectionFor(inst *cloud.Instance) bool {
	observed, stored := c.observedPassword()
	desired, generated, _ := c.desiredPassword()
	conn, problem := connectionOf(c.spec.Datastoretype, inst, observed, stored, desired, generated, c.st.Adopted)
	if problem != nil {
		c.tell(*problem)
		return false
	}
	c.conn = conn
	return true
}

// connectionOf is the connection to an existing instance. The password is the one the instance
// was created with: the stored one when there is one, else the spec's. problem says why it is
// unknown.
func connectionOf(engine string, inst *cloud.Instance, observed secret.Value, stored bool, desired secret.Value, generated, adopted bool) (*connection, *outcome) {
	pw := observed
	if !stored {
		switch {
		case (generated || desired.Empty()) && adopted:
			return nil, ptr.To(notSynced(ReasonPasswordUnknown,
				"The root password of the adopted instance is unknown, so no connection Secret is written: set password or name a Secret holding it in passwordsecretref.", settled))
		case generated || desired.Empty():
			return nil, ptr.To(notSynced(ReasonPasswordSecretMissing,
				"The root password is unknown: its connection Secret is gone. Reset the root password in OTC and name a Secret holding it in passwordsecretref.", settled))
		}
		pw = desired
	}
	conn := &connection{engine: engine, password: pw, port: inst.Port}
	if len(inst.PrivateIPs) > 0 {
		conn.host = inst.PrivateIPs[0]
	}
	return conn, nil
}
