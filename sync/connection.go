package sync

import (
	"fmt"

	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// connectionFor sets the connection Secret for an existing instance (connectionOf). It reports
// false when the password is unknown.
func (c *call) connectionFor(inst *cloud.Instance) bool {
	observed, stored := observedPassword(c.req.Secrets[c.st.ConnectionSecret])
	desired, generated, _ := c.desiredPassword()
	conn, problem := connectionOf(c.spec.Datastoretype, inst, observed, stored, desired, generated, c.st.Adopted)
	if problem != nil {
		c.out.tell(*problem)
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

// desiredPassword is the root password the spec asks for: from spec.password, from the referenced
// Secret, or generated. problem says why it cannot be had yet.
func (c *call) desiredPassword() (pw secret.Value, generated bool, problem string) {
	switch ref := c.spec.Passwordsecretref; {
	case c.spec.Password != "":
		return secret.New(c.spec.Password), false, ""
	case ref != nil:
		key := ref.Key
		if key == "" {
			key = KeyPassword
		}
		s := c.req.Related[ref.Name]
		if s == nil {
			return secret.Value{}, false, fmt.Sprintf("The Secret %q named in passwordsecretref was not found in namespace %s.", ref.Name, c.parent.Namespace)
		}
		v := string(s.Data[key])
		if v == "" {
			return secret.Value{}, false, fmt.Sprintf("The Secret %q named in passwordsecretref has no key %q.", ref.Name, key)
		}
		if msg := passwordProblem(c.spec.Datastoretype, v); msg != "" {
			return secret.Value{}, false, fmt.Sprintf("The password in Secret %q %s.", ref.Name, msg)
		}
		return secret.New(v), false, ""
	default:
		return secret.Value{}, true, ""
	}
}
