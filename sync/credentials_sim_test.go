package reconcile_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/otc"
	"github.com/mcsps/rds-lambda-controller/sync/hook"
	"github.com/mcsps/rds-lambda-controller/test/testutil"
)

// credsWorld is one controller, logged in to its own project, serving objects of two teams whose
// namespaces hold their own OTC logins (testutil.TwoProjects), through the real adapter and pool.
type credsWorld struct {
	t     *testing.T
	srv   *otcsim.MultiServer
	clock *otcsim.ManualClock
	r     *reconcile.Reconciler
	logs  *testutil.Buffer
}

func newCredsWorld(t *testing.T, mode string) *credsWorld {
	t.Helper()
	clock := otcsim.NewManualClock(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC))
	srv := testutil.TwoProjects(t, clock)
	env := srv.Env(testutil.ProjectController)
	base, err := otc.ConfigFromEnv(func(k string) string { return env[k] })
	require.NoError(t, err)
	base.RequestTimeout = 5 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	own, err := otc.New(ctx, base)
	require.NoError(t, err)
	pool, err := otc.NewPool(otc.PoolConfig{Base: base, Now: clock.Now})
	require.NoError(t, err)
	w := &credsWorld{t: t, srv: srv, clock: clock, logs: &testutil.Buffer{}}
	w.r = reconcile.New(reconcile.Config{Cloud: own, Clouds: pool, Credentials: reconcile.CredentialsConfig{Mode: mode}, Now: clock.Now})
	t.Cleanup(func() {
		for _, v := range []string{"Team-A-s3cret-pw", "Team-B-s3cret-pw", otcsim.DefaultPassword, "Wrong-passw0rd"} {
			assert.NotContains(t, w.logs.String(), v, "no credential in any log line")
		}
	})
	return w
}

// object is an Rds object in namespace ns; secrets are the related Secrets Metacontroller passes.
func (w *credsWorld) object(ns, name string, edit func(*v1alpha1.RdsSpec), secrets ...*corev1.Secret) *restoreWorld {
	rw := &restoreWorld{t: w.t, sim: w.srv.Sims[0], clock: w.clock, r: w.r}
	spec := restoreSpec()
	spec.Skipfinalbackup = true
	if edit != nil {
		edit(&spec)
	}
	rw.objectIn(ns, name, spec)
	for _, s := range secrets {
		rw.mc.Related[s.Name] = s
	}
	return rw
}

// loginSecret is a Secret in ns holding project i's login.
func (w *credsWorld) loginSecret(ns, name string, i int, edit func(map[string]string)) *corev1.Secret {
	env := w.srv.Env(i)
	if edit != nil {
		edit(env)
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string][]byte{}}
	for k, v := range env {
		s.Data[k] = []byte(v)
	}
	return s
}

// sync runs one sync call with the world's logger, as the server passes it.
func (w *credsWorld) sync(rw *restoreWorld) *hook.SyncResponse {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ctx = reconcile.WithLogger(ctx, slog.New(slog.NewJSONHandler(w.logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	return rw.syncCtx(ctx)
}

func (w *credsWorld) syncUntilActive(rw *restoreWorld) {
	w.t.Helper()
	for range 20 {
		w.sync(rw)
		if st := rw.status(); st.Status == otcsim.StatusActive && st.Operation == nil {
			return
		}
		w.clock.Advance(10 * time.Second)
	}
	w.t.Fatalf("not ACTIVE: %+v", rw.status())
}

func (w *credsWorld) calls() int {
	n := 0
	for _, s := range w.srv.Sims {
		for _, c := range s.CallCounts() {
			n += c
		}
	}
	return n
}

func (w *credsWorld) resetCounters() {
	for _, s := range w.srv.Sims {
		s.ResetCounters()
	}
}

func names(s *otcsim.Sim) []string {
	var out []string
	for _, in := range s.Instances() {
		out = append(out, in.Name)
	}
	return out
}

func TestNamespaceCredentialsEachTeamInItsOwnProject(t *testing.T) {
	w := newCredsWorld(t, reconcile.CredentialsOptional)
	simA, simB, own := w.srv.Sims[testutil.ProjectTeamA], w.srv.Sims[testutil.ProjectTeamB], w.srv.Sims[testutil.ProjectController]

	// An instance in team B's project carrying the name team A's object would create: team A's
	// object never sees it.
	decoy, err := simB.AddInstance(otcsim.InstanceSpec{Name: reconcile.InstanceName("local", "team-a", "db")})
	require.NoError(t, err)

	a := w.object("team-a", "db", nil, w.loginSecret("team-a", reconcile.DefaultCredentialsSecret, testutil.ProjectTeamA, nil))
	b := w.object("team-b", "db", func(s *v1alpha1.RdsSpec) { s.Credentialssecret = "team-b-otc" },
		w.loginSecret("team-b", "team-b-otc", testutil.ProjectTeamB, nil))
	w.syncUntilActive(a)
	w.syncUntilActive(b)

	assert.Equal(t, []string{reconcile.InstanceName("local", "team-a", "db")}, names(simA))
	assert.NotEqual(t, decoy, a.status().ID, "team A's object created its own instance in its own project")
	assert.ElementsMatch(t, []string{reconcile.InstanceName("local", "team-a", "db"), reconcile.InstanceName("local", "team-b", "db")}, names(simB))
	assert.Empty(t, names(own), "the controller's project is not used")
	assert.Equal(t, reconcile.DefaultCredentialsSecret, a.status().CredentialsSecret)
	assert.Equal(t, "team-b-otc", b.status().CredentialsSecret)
	assert.Equal(t, 1, simA.Calls(otcsim.OpCreateToken), "one login for all of team A's calls")
	assert.Equal(t, 1, simB.Calls(otcsim.OpCreateToken))
	assert.Equal(t, 1, simA.Calls(otcsim.OpCreateInstance))
	assert.Equal(t, 1, simB.Calls(otcsim.OpCreateInstance))

	// Deleting team A's object deletes its instance in its project; team B's decoy stays.
	for range 20 {
		if resp := a.finalize(); resp.Finalized {
			break
		}
		w.clock.Advance(10 * time.Second)
	}
	assert.Empty(t, names(simA))
	_, ok := simB.Instance(decoy)
	assert.True(t, ok, "team B's instance is untouched")
}

func TestNamespaceCredentialsRefusedWithoutACloudCall(t *testing.T) {
	for name, tc := range map[string]struct {
		mode    string
		edit    func(*v1alpha1.RdsSpec)
		secrets func(w *credsWorld) []*corev1.Secret
		reason  string
		message string
	}{
		"Required, no Secret": {
			mode: reconcile.CredentialsRequired, reason: reconcile.ReasonCredentialsRequired,
			message: `create the Secret "otc-credentials" in namespace team-a`,
		},
		"Required, a Secret of another namespace in related": {
			mode: reconcile.CredentialsRequired, reason: reconcile.ReasonCredentialsRequired,
			secrets: func(w *credsWorld) []*corev1.Secret {
				return []*corev1.Secret{w.loginSecret("team-b", reconcile.DefaultCredentialsSecret, testutil.ProjectTeamB, nil)}
			},
		},
		"a named Secret that is missing is waited for, with no fallback": {
			mode: reconcile.CredentialsOptional, reason: reconcile.ReasonWaitingForCredentials,
			edit:    func(s *v1alpha1.RdsSpec) { s.Credentialssecret = "mine" },
			message: `The Secret "mine" named in credentialssecret was not found in namespace team-a.`,
		},
		"OS_CLOUD": {
			mode: reconcile.CredentialsOptional, reason: reconcile.ReasonCredentialsInvalid, message: "OS_CLOUD is not allowed",
			secrets: func(w *credsWorld) []*corev1.Secret {
				return []*corev1.Secret{w.loginSecret("team-a", reconcile.DefaultCredentialsSecret, testutil.ProjectTeamA,
					func(env map[string]string) { env["OS_CLOUD"] = "otc" })}
			},
		},
		"a foreign OS_AUTH_URL": {
			mode: reconcile.CredentialsOptional, reason: reconcile.ReasonCredentialsInvalid, message: "OS_AUTH_URL is not one of the identity endpoints",
			secrets: func(w *credsWorld) []*corev1.Secret {
				return []*corev1.Secret{w.loginSecret("team-a", reconcile.DefaultCredentialsSecret, testutil.ProjectTeamA,
					func(env map[string]string) { env["OS_AUTH_URL"] = "http://169.254.169.254/v3" })}
			},
		},
		"an incomplete login": {
			mode: reconcile.CredentialsOptional, reason: reconcile.ReasonCredentialsInvalid, message: "OS_PASSWORD not set",
			secrets: func(w *credsWorld) []*corev1.Secret {
				return []*corev1.Secret{w.loginSecret("team-a", reconcile.DefaultCredentialsSecret, testutil.ProjectTeamA,
					func(env map[string]string) { delete(env, "OS_PASSWORD") })}
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			w := newCredsWorld(t, tc.mode)
			var secrets []*corev1.Secret
			if tc.secrets != nil {
				secrets = tc.secrets(w)
			}
			rw := w.object("team-a", "db", tc.edit, secrets...)
			w.resetCounters()
			resp := w.sync(rw)
			resp2 := w.sync(rw)
			assert.Zero(t, w.calls(), "no cloud call at all")
			synced := rw.synced()
			assert.Equal(t, metav1.ConditionFalse, synced.Status)
			assert.Equal(t, tc.reason, synced.Reason)
			assert.Contains(t, synced.Message, tc.message)
			assert.Equal(t, resp.Status.Conditions, resp2.Status.Conditions, "a stable condition")
			assert.Empty(t, resp.Status.ID)
			assert.Equal(t, (5 * time.Minute).Seconds(), resp.ResyncAfterSeconds, "the steady resync: the Secret is watched")
		})
	}
}

func TestNamespaceCredentialsRefusedLogin(t *testing.T) {
	w := newCredsWorld(t, reconcile.CredentialsOptional)
	rw := w.object("team-a", "db", nil, w.loginSecret("team-a", reconcile.DefaultCredentialsSecret, testutil.ProjectTeamA,
		func(env map[string]string) { env["OS_PASSWORD"] = "Wrong-passw0rd" }))
	w.resetCounters()
	first := w.sync(rw)
	for range 3 {
		w.clock.Advance(time.Minute)
		w.sync(rw)
	}
	synced := rw.synced()
	assert.Equal(t, reconcile.ReasonCloudUnauthorized, synced.Reason)
	assert.Equal(t, `OTC refused the login in Secret "otc-credentials".`, synced.Message)
	assert.Equal(t, first.Status.Conditions, rw.status().Conditions, "stable")
	assert.Equal(t, 1, w.srv.Sims[testutil.ProjectTeamA].Calls(otcsim.OpCreateToken), "the refused login is not repeated on every call")
	assert.Equal(t, 1, w.calls())
	assert.NotContains(t, w.logs.String(), "Wrong-passw0rd")
	assert.Contains(t, w.logs.String(), `"credentials":{"namespace":"team-a","secret":"otc-credentials"}`, "the log says whose login, not what")
}

func TestNamespaceCredentialsOneLoginAcrossObjects(t *testing.T) {
	w := newCredsWorld(t, reconcile.CredentialsOptional)
	secret := w.loginSecret("team-a", reconcile.DefaultCredentialsSecret, testutil.ProjectTeamA, nil)
	for _, name := range []string{"one", "two", "three"} {
		w.syncUntilActive(w.object("team-a", name, nil, secret))
	}
	assert.Len(t, w.srv.Sims[testutil.ProjectTeamA].Instances(), 3)
	assert.Equal(t, 1, w.srv.Sims[testutil.ProjectTeamA].Calls(otcsim.OpCreateToken), "one login for three objects' calls")
}

func TestNamespaceCredentialsInstanceStaysWithItsLogin(t *testing.T) {
	w := newCredsWorld(t, reconcile.CredentialsOptional)
	rw := w.object("team-a", "db", nil) // no Secret: the controller's own login
	w.syncUntilActive(rw)
	require.Len(t, w.srv.Sims[testutil.ProjectController].Instances(), 1)
	assert.Empty(t, rw.status().CredentialsSecret)

	// The team adds its own Secret: the instance is in the controller's project, so the object
	// waits rather than look for it elsewhere (and report it gone).
	rw.mc.Related[reconcile.DefaultCredentialsSecret] = w.loginSecret("team-a", reconcile.DefaultCredentialsSecret, testutil.ProjectTeamA, nil)
	w.resetCounters()
	w.sync(rw)
	assert.Zero(t, w.calls())
	assert.Equal(t, reconcile.ReasonCredentialsChanged, rw.synced().Reason)
	assert.Contains(t, rw.synced().Message, `found with the controller's own OTC login, but this object would now use the OTC login in Secret "otc-credentials"`)

	// Finalize waits as well: it would find nothing in team A's project and leave the instance.
	resp := rw.finalize()
	assert.False(t, resp.Finalized)
	assert.Zero(t, w.calls())
	assert.Len(t, w.srv.Sims[testutil.ProjectController].Instances(), 1)
}

func TestNamespaceCredentialsSecretGone(t *testing.T) {
	w := newCredsWorld(t, reconcile.CredentialsOptional)
	rw := w.object("team-a", "db", nil, w.loginSecret("team-a", reconcile.DefaultCredentialsSecret, testutil.ProjectTeamA, nil))
	w.syncUntilActive(rw)

	delete(rw.mc.Related, reconcile.DefaultCredentialsSecret)
	w.resetCounters()
	w.sync(rw)
	assert.Zero(t, w.calls(), "no fallback to the controller's login")
	assert.Equal(t, reconcile.ReasonWaitingForCredentials, rw.synced().Reason)

	resp := rw.finalize()
	assert.False(t, resp.Finalized, "the instance cannot be deleted without its login: wait")
	assert.Len(t, w.srv.Sims[testutil.ProjectTeamA].Instances(), 1)
}

// An object without a login cannot look for its instance, and nothing in the request proves it
// never made one (status.id and the connection Secret are the tenant's to erase; found in review,
// issue #17): it waits, says why and how to let it go by hand.
func TestNamespaceCredentialsFinalizeWithoutALoginWaits(t *testing.T) {
	w := newCredsWorld(t, reconcile.CredentialsRequired)
	rw := w.object("team-a", "db", nil)
	w.sync(rw)
	require.Equal(t, reconcile.ReasonCredentialsRequired, rw.synced().Reason)
	w.resetCounters()
	resp := rw.finalize()
	assert.False(t, resp.Finalized, "without a login nothing shows that no instance exists: the object waits")
	assert.Zero(t, w.calls())
	assert.Equal(t, reconcile.ReasonCredentialsRequired, rw.synced().Reason, "Synced names the login to provide")
	ready := conditionOf(*rw.status(), v1alpha1.ConditionReady)
	assert.Equal(t, reconcile.ReasonDeletionWaitsForCredentials, ready.Reason)
	assert.Contains(t, ready.Message, "remove its finalizer metacontroller.io/compositecontroller-rds-controller by hand")
	again := rw.finalize()
	assert.False(t, again.Finalized)
	assert.Equal(t, ready, conditionOf(*rw.status(), v1alpha1.ConditionReady), "the same condition, the same transition time")
}

func TestCustomizeAsksForTheLoginSecret(t *testing.T) {
	w := newCredsWorld(t, reconcile.CredentialsOptional)
	rw := w.object("team-a", "db", nil)
	rule := func(resp *hook.CustomizeResponse) []string {
		for _, r := range resp.RelatedResources {
			if r.Resource == "secrets" && r.Namespace == "team-a" {
				return r.Names
			}
		}
		return nil
	}
	assert.Equal(t, []string{reconcile.DefaultCredentialsSecret}, rule(w.r.Customize(&hook.CustomizeRequest{Parent: rw.mc.Rds()})))
	rw.edit(func(s *v1alpha1.RdsSpec) { s.Credentialssecret = "mine" })
	assert.Equal(t, []string{"mine"}, rule(w.r.Customize(&hook.CustomizeRequest{Parent: rw.mc.Rds()})))

	// Without a pool the controller's own login serves every object and no Secret is asked for.
	plain := reconcile.New(reconcile.Config{})
	assert.Empty(t, plain.Customize(&hook.CustomizeRequest{Parent: rw.mc.Rds()}).RelatedResources)
}
