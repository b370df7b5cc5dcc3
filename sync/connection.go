package reconcile

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// connectionFor sets the connection Secret for an existing instance (connectionOf). It reports
// false when the password is unknown.
func (c *call) connectionFor(inst *cloud.Instance) bool {
	observed, stored := observedPassword(c.req.Secrets[c.st.ConnectionSecret])
	desired, generated, _ := desiredPassword(c.spec, c.req.Related, c.parent.Namespace)
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
func desiredPassword(spec *v1alpha1.RdsSpec, related map[string]*corev1.Secret, namespace string) (pw secret.Value, generated bool, problem string) {
	switch ref := spec.Passwordsecretref; {
	case spec.Password != "":
		return secret.New(spec.Password), false, ""
	case ref != nil:
		key := ref.Key
		if key == "" {
			key = KeyPassword
		}
		s := related[ref.Name]
		if s == nil {
			return secret.Value{}, false, fmt.Sprintf("The Secret %q named in passwordsecretref was not found in namespace %s.", ref.Name, namespace)
		}
		v := string(s.Data[key])
		if v == "" {
			return secret.Value{}, false, fmt.Sprintf("The Secret %q named in passwordsecretref has no key %q.", ref.Name, key)
		}
		if msg := passwordProblem(spec.Datastoretype, v); msg != "" {
			return secret.Value{}, false, fmt.Sprintf("The password in Secret %q %s.", ref.Name, msg)
		}
		return secret.New(v), false, ""
	default:
		return secret.Value{}, true, ""
	}
}
