package reconcile

import (
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// TestPlanCredentials decides which OTC login serves a call from plain inputs: no cloud, no fake.
func TestPlanCredentials(t *testing.T) {
	login := func(ns, name string) *corev1.Secret {
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Data:       map[string][]byte{"OS_USERNAME": []byte("u"), "OS_PROJECT_NAME": []byte("eu-de_team"), "other": []byte("x")},
		}
	}
	creds := func(name string) *cloud.Credentials {
		return &cloud.Credentials{Namespace: "team", Secret: name, Env: map[string]string{"OS_USERNAME": "u", "OS_PROJECT_NAME": "eu-de_team"}}
	}
	wait := func(reason, message string) credentialsPlan {
		return credentialsPlan{}.wait(reason, message)
	}
	const (
		defaultName = DefaultCredentialsSecret
		gone        = `The instance was found with the OTC login in Secret "otc-credentials", which is gone from namespace team; restore it.`
	)
	// input is a call in namespace team, mode Optional, with no Secret and no instance yet; each
	// edit changes what a case is about.
	input := func(edits ...func(*credentialsInput)) credentialsInput {
		in := credentialsInput{cfg: CredentialsConfig{}.withDefaults(), namespace: "team", related: map[string]*corev1.Secret{}}
		for _, edit := range edits {
			edit(&in)
		}
		return in
	}
	required := func(in *credentialsInput) { in.cfg.Mode = CredentialsRequired }
	named := func(name string) func(*credentialsInput) { return func(in *credentialsInput) { in.named = name } }
	observed := func(s *corev1.Secret) func(*credentialsInput) {
		return func(in *credentialsInput) { in.related[s.Name] = s }
	}
	found := func(secret, project string) func(*credentialsInput) {
		return func(in *credentialsInput) { in.id, in.secret, in.project = "inst-1", secret, project }
	}
	answered := func(project string, err error) func(*credentialsInput) {
		return func(in *credentialsInput) { in.login = &loginAnswer{project: project, err: err} }
	}
	refused := &cloud.Error{Kind: cloud.KindUnauthorized, Code: "IAM.0001", Message: "refused"}
	tests := []struct {
		reason string
		in     credentialsInput
		want   credentialsPlan
	}{
		{reason: "no Secret, optional: the controller's own login", in: input(), want: credentialsPlan{own: true}},
		{
			reason: "no Secret, required: wait for one",
			in:     input(required),
			want: wait(ReasonCredentialsRequired,
				`This controller requires an OTC login from the object's namespace: create the Secret "otc-credentials" in namespace team or name one in credentialssecret.`),
		},
		{
			reason: "a named Secret that is not there",
			in:     input(named("mine")),
			want:   wait(ReasonWaitingForCredentials, `The Secret "mine" named in credentialssecret was not found in namespace team.`),
		},
		{
			reason: "the Secret the instance was found with is gone: no fallback to the controller's login",
			in:     input(found(defaultName, "")),
			want:   wait(ReasonWaitingForCredentials, gone),
		},
		{
			reason: "a Secret of another namespace is never used",
			in:     input(observed(login("other", defaultName))),
			want:   credentialsPlan{own: true, logs: []logLine{{slog.LevelWarn, "ignored a related Secret from another namespace", []any{"secret", defaultName, "namespace", "other"}}}},
		},
		{
			reason: "the namespace's default Secret: log in with its OS_ keys",
			in:     input(observed(login("team", defaultName))),
			want:   credentialsPlan{login: creds(defaultName)},
		},
		{
			reason: "the named Secret wins over the default",
			in:     input(named("mine"), observed(login("team", defaultName)), observed(login("team", "mine"))),
			want:   credentialsPlan{login: creds("mine")},
		},
		{
			reason: "a login appears for an instance found with the controller's own",
			in:     input(found("", ""), observed(login("team", defaultName))),
			want:   wait(ReasonCredentialsChanged, credentialsChanged("", defaultName)),
		},
		{
			reason: "the logged-in project is recorded",
			in:     input(observed(login("team", defaultName)), answered("p-1", nil)),
			want:   credentialsPlan{secret: defaultName, project: "p-1"},
		},
		{
			reason: "the same project again",
			in:     input(found(defaultName, "p-1"), observed(login("team", defaultName)), answered("p-1", nil)),
			want:   credentialsPlan{secret: defaultName, project: "p-1"},
		},
		{
			reason: "the Secret now logs in to another project",
			in:     input(found(defaultName, "p-1"), observed(login("team", defaultName)), answered("p-2", nil)),
			want: wait(ReasonCredentialsChanged,
				`The instance was found in OTC project p-1 with the login in Secret "otc-credentials", which now logs in to project p-2: an instance lives in one OTC project, so the controller waits. Restore the earlier login in the Secret.`),
		},
		{
			reason: "an incomplete login",
			in:     input(observed(login("team", defaultName)), answered("", fmt.Errorf("%w: OS_PASSWORD is missing", cloud.ErrCredentialsInvalid))),
			want:   wait(ReasonCredentialsInvalid, `The OTC login in Secret "otc-credentials" cannot be used: OS_PASSWORD is missing.`),
		},
		{
			reason: "OTC refuses the login",
			in:     input(observed(login("team", defaultName)), answered("", refused)),
			want: func() credentialsPlan {
				p := wait(ReasonCloudUnauthorized, `OTC refused the login in Secret "otc-credentials".`)
				p.logs = []logLine{{slog.LevelWarn, "OTC refused a namespace login", []any{"credentials", creds(defaultName), "kind", "Unauthorized", slog.String("code", "IAM.0001"), "message", "refused"}}}
				return p
			}(),
		},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			assert.Equal(t, tt.want, planCredentials(tt.in))
		})
	}

	t.Run("a failed login is sorted like any cloud error", func(t *testing.T) {
		err := errors.New("connection reset")
		p := planCredentials(input(observed(login("team", defaultName)), answered("", err)))
		assert.True(t, p.stop())
		assert.Equal(t, err, p.failed)
		assert.Nil(t, p.synced)
	})
	t.Run("the waits are stable sentences on Synced and Ready", func(t *testing.T) {
		p := planCredentials(input(required))
		assert.Equal(t, ptr.To(notReady(ReasonCredentialsRequired, "Waiting for an OTC login; see the Synced condition.", waitsForUser)), p.ready)
	})
}
