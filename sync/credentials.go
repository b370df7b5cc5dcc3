package sync

import (
	"context"
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/hook"
)

// Namespace credentials modes (CredentialsConfig.Mode).
const (
	// CredentialsOptional: an object uses its namespace's Secret when there is one, else the
	// controller's own login.
	CredentialsOptional = "Optional"
	// CredentialsRequired: every object needs a Secret of its namespace; the controller's own
	// login serves none.
	CredentialsRequired = "Required"
	// DefaultCredentialsSecret is the namespace default Secret's name.
	DefaultCredentialsSecret = "otc-credentials"
)

// Reasons of the credentials step. Each comes with the steady resync: the Secret is a related
// object, so Metacontroller calls again as soon as it changes.
const (
	// ReasonCredentialsRequired: the administrator requires namespace credentials and there are none.
	ReasonCredentialsRequired = "CredentialsRequired"
	// ReasonWaitingForCredentials: the Secret spec.credentialssecret (or status.credentialsSecret)
	// names is not there.
	ReasonWaitingForCredentials = "WaitingForCredentials"
	// ReasonCredentialsInvalid: the Secret's login is incomplete or not allowed.
	ReasonCredentialsInvalid = "CredentialsInvalid"
	// ReasonCredentialsChanged: the instance was found with another login than this call would use.
	ReasonCredentialsChanged = "CredentialsChanged"
)

// CredentialsConfig says where an object's OTC login comes from (docs/credentials.md). It applies
// only when Config.Clouds is set; without it every object uses the controller's own login.
type CredentialsConfig struct {
	// Mode is CredentialsOptional (default) or CredentialsRequired.
	Mode string
	// DefaultSecret is the Secret a namespace provides for objects that name none.
	// Default DefaultCredentialsSecret.
	DefaultSecret string
}

func (cc CredentialsConfig) withDefaults() CredentialsConfig {
	if cc.Mode == "" {
		cc.Mode = CredentialsOptional
	}
	if cc.DefaultSecret == "" {
		cc.DefaultSecret = DefaultCredentialsSecret
	}
	return cc
}

// credentialsRule asks Metacontroller for the Secret an object's login may come from: the one it
// names, or its namespace's default.
func (r *Reconciler) credentialsRule(req *hook.CustomizeRequest) []hook.ResourceRule {
	if r.cfg.Clouds == nil {
		return nil
	}
	name := req.Parent.Spec.Credentialssecret
	if name == "" {
		name = r.cfg.Credentials.DefaultSecret
	}
	return []hook.ResourceRule{{APIVersion: "v1", Resource: "secrets", Namespace: req.Parent.Namespace, Names: []string{name}}}
}

// Customize is the package's Customize plus the Secret of the object's OTC login.
func (r *Reconciler) Customize(req *hook.CustomizeRequest) *hook.CustomizeResponse {
	resp := Customize(req)
	resp.RelatedResources = append(resp.RelatedResources, r.credentialsRule(req)...)
	return resp
}

// credentials picks this call's OTC login and client (c.creds, c.cloud, c.ownProject) before any
// cloud call. It reports false when the call must stop: it then has set a condition (or returns
// the error cloudError made of a failed login) and made no cloud call but for that login.
//
// NOTE: an instance lives in one OTC project. Once found or created with one login, it is looked
// for with that login only (status.credentialsSecret): a fallback to another login would find
// nothing there, and the object would report its instance gone, or finalize would leave it
// behind, billed.
func (c *call) credentials(ctx context.Context) (bool, error) {
	if c.r.cfg.Clouds == nil {
		return true, nil
	}
	cc := c.r.cfg.Credentials
	name, named := c.spec.Credentialssecret, c.spec.Credentialssecret != ""
	if !named {
		name = cc.DefaultSecret
	}
	s := c.req.Related[name]
	if s != nil && s.Namespace != c.parent.Namespace {
		// Metacontroller passes only what customize asked for, in this namespace; anything else is
		// never used.
		c.log.Warn("ignored a related Secret from another namespace", "secret", name, "namespace", s.Namespace)
		s = nil
	}
	source := ""
	switch {
	case s != nil:
		source = name
	case named:
		c.waitForCredentials(ReasonWaitingForCredentials,
			fmt.Sprintf("The Secret %q named in credentialssecret was not found in namespace %s.", name, c.parent.Namespace))
		return false, nil
	case c.st.CredentialsSecret != "":
		c.waitForCredentials(ReasonWaitingForCredentials,
			fmt.Sprintf("The instance was found with the OTC login in Secret %q, which is gone from namespace %s; restore it.", c.st.CredentialsSecret, c.parent.Namespace))
		return false, nil
	case cc.Mode == CredentialsRequired:
		c.waitForCredentials(ReasonCredentialsRequired,
			fmt.Sprintf("This controller requires an OTC login from the object's namespace: create the Secret %q in namespace %s or name one in credentialssecret.", name, c.parent.Namespace))
		return false, nil
	}
	if c.st.ID != "" && source != c.st.CredentialsSecret {
		c.waitForCredentials(ReasonCredentialsChanged, credentialsChanged(c.st.CredentialsSecret, source))
		return false, nil
	}
	if s == nil {
		c.st.CredentialsSecret, c.st.CredentialsProject = "", ""
		return true, nil // the controller's own login, the default client
	}
	creds := &cloud.Credentials{Namespace: c.parent.Namespace, Secret: name, Env: map[string]string{}}
	for k, v := range s.Data {
		if strings.HasPrefix(k, "OS_") {
			creds.Env[k] = string(v)
		}
	}
	var client cloud.Cloud
	err := c.cloudCall(ctx, func(ctx context.Context) (err error) {
		client, err = c.r.cloudFor(ctx, creds)
		return err
	})
	var ce *cloud.Error
	switch {
	case errors.Is(err, cloud.ErrCredentialsInvalid):
		c.waitForCredentials(ReasonCredentialsInvalid, fmt.Sprintf("The OTC login in Secret %q cannot be used: %s.", name, strings.TrimPrefix(err.Error(), cloud.ErrCredentialsInvalid.Error()+": ")))
		return false, nil
	case errors.As(err, &ce) && (ce.Kind == cloud.KindUnauthorized || ce.Kind == cloud.KindInvalid || ce.Kind == cloud.KindNotFound):
		c.log.Warn("OTC refused a namespace login", "credentials", creds, "kind", ce.Kind.String(), "code", ce.Code, "message", ce.Message)
		c.waitForCredentials(ReasonCloudUnauthorized, fmt.Sprintf("OTC refused the login in Secret %q.", name))
		return false, nil
	case err != nil:
		c.log.Warn("namespace login failed", "credentials", creds)
		return false, c.cloudError(err)
	}
	// NOTE: the Secret keeps its name when its content changes: a login of another project would
	// not find the instance, and the object would report it gone or finalize without deleting it.
	project := cloud.ProjectOf(client)
	if was := c.st.CredentialsProject; c.st.ID != "" && was != "" && project != "" && project != was {
		c.waitForCredentials(ReasonCredentialsChanged, fmt.Sprintf(
			"The instance was found in OTC project %s with the login in Secret %q, which now logs in to project %s: an instance lives in one OTC project, so the controller waits. Restore the earlier login in the Secret.",
			was, name, project))
		return false, nil
	}
	c.creds, c.cloud, c.ownProject = creds, client, true
	c.st.CredentialsSecret = name
	if project != "" {
		c.st.CredentialsProject = project
	}
	return true, nil
}

func credentialsChanged(was, now string) string {
	login := func(secret string) string {
		if secret == "" {
			return "the controller's own OTC login"
		}
		return fmt.Sprintf("the OTC login in Secret %q", secret)
	}
	return fmt.Sprintf("The instance was found with %s, but this object would now use %s: an instance lives in one OTC project, so the controller waits. Restore the earlier login's Secret or credentialssecret.", login(was), login(now))
}

// waitForCredentials reports a login problem only the user can fix, on Ready and Synced.
func (c *call) waitForCredentials(reason, message string) {
	c.setSynced(metav1.ConditionFalse, reason, message)
	c.setReady(metav1.ConditionFalse, reason, "Waiting for an OTC login; see the Synced condition.")
}
