package reconcile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

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

// credentialsInput is all that the decision about an object's OTC login reads: the spec's
// credentialssecret, the administrator's mode and default Secret, the namespace's login Secret as
// observed, what status remembers of the login the instance was found with, and the answer of the
// login once the plan asked for it.
type credentialsInput struct {
	cfg       CredentialsConfig
	namespace string
	// named is spec.credentialssecret.
	named string
	// related are the related Secrets Metacontroller passed (customize asked for the login's).
	related map[string]*corev1.Secret
	// id, secret and project are status.id, status.credentialsSecret and status.credentialsProject.
	id, secret, project string
	// login is what the login with the plan's credentials answered; nil until it was made.
	login *loginAnswer
}

// loginAnswer is the answer of a login: the OTC project it logs in to, or why it failed.
type loginAnswer struct {
	project string
	err     error
}

// credentialsPlan is the decision about an object's OTC login. A plan that asks for a login
// (login) is made again with its answer; only a plan without it is applied.
type credentialsPlan struct {
	// synced and ready are set when the call must stop and wait for the user.
	synced, ready *outcome
	// login is the namespace login to log in with; the plan is made again with its answer.
	login *cloud.Credentials
	// own says the call uses the controller's own login, and status forgets any other.
	own bool
	// secret and project are status.credentialsSecret and status.credentialsProject once the
	// namespace login was made ("" project: keep the recorded one).
	secret, project string
	// failed is a login error that is sorted like any cloud error (cloudError).
	failed error
	logs   []logLine
}

// stop reports whether the call stops at the plan: it waits for the user or failed.
func (p credentialsPlan) stop() bool { return p.synced != nil || p.failed != nil }

// planCredentials decides which OTC login serves the call: the Secret spec.credentialssecret names,
// else the namespace's default Secret, else (unless the mode requires one) the controller's own.
// A login other than the one the instance was found with is refused. It calls nothing.
//
// NOTE: an instance lives in one OTC project. Once found or created with one login, it is looked
// for with that login only (status.credentialsSecret): a fallback to another login would find
// nothing there, and the object would report its instance gone, or finalize would leave it
// behind, billed.
func planCredentials(in credentialsInput) credentialsPlan {
	var p credentialsPlan
	name, named := in.named, in.named != ""
	if !named {
		name = in.cfg.DefaultSecret
	}
	s := in.related[name]
	if s != nil && s.Namespace != in.namespace {
		// Metacontroller passes only what customize asked for, in this namespace; anything else is
		// never used.
		p.logs = append(p.logs, logLine{slog.LevelWarn, "ignored a related Secret from another namespace", []any{"secret", name, "namespace", s.Namespace}})
		s = nil
	}
	source := ""
	switch {
	case s != nil:
		source = name
	case named:
		return p.wait(ReasonWaitingForCredentials,
			fmt.Sprintf("The Secret %q named in credentialssecret was not found in namespace %s.", name, in.namespace))
	case in.secret != "":
		return p.wait(ReasonWaitingForCredentials,
			fmt.Sprintf("The instance was found with the OTC login in Secret %q, which is gone from namespace %s; restore it.", in.secret, in.namespace))
	case in.cfg.Mode == CredentialsRequired:
		return p.wait(ReasonCredentialsRequired,
			fmt.Sprintf("This controller requires an OTC login from the object's namespace: create the Secret %q in namespace %s or name one in credentialssecret.", name, in.namespace))
	}
	if in.id != "" && source != in.secret {
		return p.wait(ReasonCredentialsChanged, credentialsChanged(in.secret, source))
	}
	if s == nil {
		p.own = true // the controller's own login, the default client
		return p
	}
	creds := &cloud.Credentials{Namespace: in.namespace, Secret: name, Env: map[string]string{}}
	for k, v := range s.Data {
		if strings.HasPrefix(k, "OS_") {
			creds.Env[k] = string(v)
		}
	}
	if in.login == nil {
		p.login = creds
		return p
	}
	var ce *cloud.Error
	switch err := in.login.err; {
	case errors.Is(err, cloud.ErrCredentialsInvalid):
		return p.wait(ReasonCredentialsInvalid, fmt.Sprintf("The OTC login in Secret %q cannot be used: %s.", name, strings.TrimPrefix(err.Error(), cloud.ErrCredentialsInvalid.Error()+": ")))
	case errors.As(err, &ce) && (ce.Kind == cloud.KindUnauthorized || ce.Kind == cloud.KindInvalid || ce.Kind == cloud.KindNotFound):
		// NOTE: the code is an slog attribute: it is only logged, never decided on (otccodes_test.go).
		p.logs = append(p.logs, logLine{slog.LevelWarn, "OTC refused a namespace login", []any{"credentials", creds, "kind", ce.Kind.String(), slog.String("code", ce.Code), "message", ce.Message}})
		return p.wait(ReasonCloudUnauthorized, fmt.Sprintf("OTC refused the login in Secret %q.", name))
	case err != nil:
		p.logs = append(p.logs, logLine{slog.LevelWarn, "namespace login failed", []any{"credentials", creds}})
		p.failed = err
		return p
	}
	// NOTE: the Secret keeps its name when its content changes: a login of another project would
	// not find the instance, and the object would report it gone or finalize without deleting it.
	project := in.login.project
	if was := in.project; in.id != "" && was != "" && project != "" && project != was {
		return p.wait(ReasonCredentialsChanged, fmt.Sprintf(
			"The instance was found in OTC project %s with the login in Secret %q, which now logs in to project %s: an instance lives in one OTC project, so the controller waits. Restore the earlier login in the Secret.",
			was, name, project))
	}
	p.secret, p.project = name, project
	return p
}

// wait is the plan of a login problem only the user can fix, on Synced and Ready. The Secret is a
// related object, so Metacontroller calls again as soon as it changes.
func (p credentialsPlan) wait(reason, message string) credentialsPlan {
	p.synced = ptr.To(notSynced(reason, message, waitsForUser))
	p.ready = ptr.To(notReady(reason, "Waiting for an OTC login; see the Synced condition.", waitsForUser))
	return p
}

// credentials picks this call's OTC login and client (c.creds, c.cloud, c.ownProject) before any
// cloud call: it plans, logs in if the plan asks for it, and plans again. It reports false when
// the call must stop: it then has set a condition (or returns the error cloudError made of a failed
// login) and made no cloud call but for that login.
func (c *call) credentials(ctx context.Context) (bool, error) {
	if c.r.cfg.Clouds == nil {
		return true, nil
	}
	in := credentialsInput{
		cfg: c.r.cfg.Credentials, namespace: c.parent.Namespace, named: c.spec.Credentialssecret, related: c.req.Related,
		id: c.st.ID, secret: c.st.CredentialsSecret, project: c.st.CredentialsProject,
	}
	p := planCredentials(in)
	var client cloud.Cloud
	if p.login != nil {
		err := withDeadline(ctx, c.r.cfg.CallTimeout, func(ctx context.Context) (err error) {
			client, err = c.r.cloudFor(ctx, p.login)
			return err
		})
		in.login = &loginAnswer{err: err}
		if err == nil {
			in.login.project = cloud.ProjectOf(client)
		}
		creds := p.login
		p = planCredentials(in)
		if !p.stop() {
			c.creds, c.cloud, c.ownProject = creds, client, true
		}
	}
	logAll(ctx, c.log, p.logs)
	switch {
	case p.failed != nil:
		return false, c.cloudError(p.failed)
	case p.synced != nil:
		c.out.tellAll(p.synced, p.ready)
		return false, nil
	case p.own:
		c.st.CredentialsSecret, c.st.CredentialsProject = "", ""
	default:
		c.st.CredentialsSecret = p.secret
		if p.project != "" {
			c.st.CredentialsProject = p.project
		}
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

// cloudFor returns the client for a credential set; nil is the controller's own.
func (r *Reconciler) cloudFor(ctx context.Context, creds *cloud.Credentials) (cloud.Cloud, error) {
	if creds == nil || r.cfg.Clouds == nil {
		return r.cfg.Cloud, nil
	}
	return r.cfg.Clouds.For(ctx, creds)
}
