package reconcile

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/cloudtest"
	"github.com/mcsps/rds-lambda-controller/sync/dbusers"
	"github.com/mcsps/rds-lambda-controller/sync/hook"
	"github.com/mcsps/rds-lambda-controller/test/metacontroller"
)

// applyRecorder stands in for dbusers.Apply and records what it was asked to do.
type applyRecorder struct {
	calls []applyCall
	err   error
}

type applyCall struct {
	conn    dbusers.Conn
	d       dbusers.Desired
	managed dbusers.ManagedState
}

func (a *applyRecorder) apply(_ context.Context, conn dbusers.Conn, d dbusers.Desired, managed dbusers.ManagedState) (dbusers.Result, error) {
	a.calls = append(a.calls, applyCall{conn: conn, d: d, managed: managed})
	m := dbusers.ManagedState{Databases: d.Databases}
	for _, u := range d.Users {
		m.Users = append(m.Users, dbusers.ManagedUser{Name: u.Name, Host: dbusers.NormalizeHost(u.Host), PasswordDigest: "digest"})
	}
	if a.err != nil {
		return dbusers.Result{Managed: managed}, a.err
	}
	return dbusers.Result{Managed: m, Changes: []string{"created something"}}, nil
}

// pgSpec is usersSpec for PostgreSQL: no host, no GRANT strings, PostgreSQL's privileges.
func pgSpec() v1alpha1.RdsSpec {
	spec := usersSpec()
	spec.Datastoretype, spec.Datastoreversion, spec.Flavorref, spec.Port = "PostgreSQL", "15", "rds.pg.c2.medium", nil
	spec.Users = []v1alpha1.User{
		{Name: "app1", Password: "app1-Secret", Grants: []v1alpha1.DatabaseGrant{{Database: "project1", Privileges: []string{"ALL"}}}},
		{Name: "gen", Grants: []v1alpha1.DatabaseGrant{
			{Database: "project1", Schema: "public", Privileges: []string{"USAGE"}},
			{Database: "project1", Schema: "public", Table: "*", Privileges: []string{"SELECT"}},
		}},
	}
	return spec
}

func usersSpec() v1alpha1.RdsSpec {
	spec := sampleSpec()
	spec.Databases = []string{"project1"}
	spec.Users = []v1alpha1.User{
		{Name: "app1", Host: "10.9.3.%", Password: "app1-Secret", Privileges: []string{"GRANT ALL ON project1.* TO 'app1'@'10.9.3.%'"}},
		{Name: "gen", Grants: []v1alpha1.DatabaseGrant{{Database: "project1", Privileges: []string{"SELECT"}}}},
	}
	return spec
}

// dbEnv is one reconciler with a fake cloud (an ACTIVE instance) and a recording Apply.
type dbEnv struct {
	f     *cloudtest.Fake
	rec   *applyRecorder
	now   time.Time
	r     *Reconciler
	inst  *cloud.Instance
	drift time.Duration
	// last is the request of the last call, the observation feed applies an answer to.
	last *hook.Request
}

func newDBEnv() *dbEnv {
	e := &dbEnv{rec: &applyRecorder{}, now: t0, inst: activeInstance(), drift: time.Hour}
	e.f = &cloudtest.Fake{GetInstanceFn: func(context.Context, string) (*cloud.Instance, error) { return e.inst, nil }}
	e.r = New(Config{Cloud: e.f, Now: func() time.Time { return e.now }, Databases: DatabasesConfig{Apply: e.rec.apply, DriftCheck: e.drift}})
	return e
}

// call runs Sync with the given status and observed Secrets (the connection Secret is added).
func (e *dbEnv) call(t *testing.T, spec v1alpha1.RdsSpec, st v1alpha1.RdsStatus, secrets ...*corev1.Secret) *hook.SyncResponse {
	t.Helper()
	if st.ID == "" {
		st.ID = "inst-1"
	}
	req := request(spec, st, append([]*corev1.Secret{storedSecret("A12345678+")}, secrets...)...)
	e.last = &hook.Request{Parent: req.Parent, Secrets: map[string]*corev1.Secret{}, Jobs: req.Jobs}
	e.last.Parent.Status = *req.Parent.Status.DeepCopy()
	for name, s := range req.Secrets {
		e.last.Secrets[name] = s.DeepCopy()
	}
	resp, err := e.r.Sync(context.Background(), req)
	require.NoError(t, err)
	return resp
}

// feed applies an answer to the observation of the last call, as Metacontroller does
// (test/metacontroller), and returns the next call's observed status and Secrets.
func (e *dbEnv) feed(t *testing.T, resp *hook.SyncResponse) (v1alpha1.RdsStatus, []*corev1.Secret) {
	t.Helper()
	mc := metacontroller.NewRds(e.last.Parent)
	mc.Secrets, mc.Jobs = maps.Clone(e.last.Secrets), maps.Clone(e.last.Jobs)
	require.NoError(t, mc.ApplyResponse(resp))
	return mc.Status(), slices.Collect(maps.Values(mc.Secrets))
}

func childSecret(resp *hook.SyncResponse, name string) *corev1.Secret {
	for _, ch := range resp.Children {
		if s, ok := ch.(*corev1.Secret); ok && s.Name == name {
			return s
		}
	}
	return nil
}

func TestDatabasesGeneratedPasswordIsStoredBeforeUse(t *testing.T) {
	e := newDBEnv()
	spec := usersSpec()

	first := e.call(t, spec, v1alpha1.RdsStatus{})
	assert.Empty(t, e.rec.calls, "a generated password is not used before its Secret is observed")
	cond := condition(t, first.Status, v1alpha1.ConditionDatabasesReady)
	assert.Equal(t, ReasonStoringUserPasswords, cond.Reason)
	assert.Equal(t, 2.0, first.ResyncAfterSeconds)
	gen := childSecret(first, genSecret)
	require.NotNil(t, gen, "the generated password's Secret is returned first")
	pw := string(gen.Data[KeyPassword])
	assert.Len(t, pw, genLength)
	assert.Equal(t, map[string]string{"host": "192.168.0.10", "port": "3306", "username": "gen", "database": "project1"},
		map[string]string{"host": string(gen.Data[KeyHost]), "port": string(gen.Data[KeyPort]), "username": string(gen.Data[KeyUsername]), "database": string(gen.Data[KeyDatabase])})
	app := childSecret(first, UserSecretName("my-rds-single", "app1", "10.9.3.%"))
	require.NotNil(t, app)
	assert.Equal(t, "app1-Secret", string(app.Data[KeyPassword]))

	lost := e.call(t, spec, v1alpha1.RdsStatus{})
	assert.Empty(t, e.rec.calls, "a lost response: the next call still waits for a stored Secret")
	assert.Equal(t, ReasonStoringUserPasswords, condition(t, lost.Status, v1alpha1.ConditionDatabasesReady).Reason)

	st, observed := e.feed(t, first)
	second := e.call(t, spec, st, observed...)
	require.Len(t, e.rec.calls, 1, "the stored password is applied in the next call")
	got := e.rec.calls[0]
	assert.Equal(t, "root", got.conn.User)
	assert.Equal(t, "A12345678+", got.conn.Password.Reveal(), "applied as root with the connection Secret's password")
	assert.Equal(t, "192.168.0.10", got.conn.Host)
	assert.Equal(t, 3306, got.conn.Port)
	require.Len(t, got.d.Users, 2)
	assert.Equal(t, pw, got.d.Users[1].Password.Reveal(), "the observed generated password, not a new one")
	assert.Equal(t, []dbusers.Grant{{Database: "project1", Privileges: []string{"ALL"}}}, got.d.Users[0].Grants)
	assert.Equal(t, pw, string(childSecret(second, genSecret).Data[KeyPassword]))
	cond = condition(t, second.Status, v1alpha1.ConditionDatabasesReady)
	assert.Equal(t, metav1.ConditionTrue, cond.Status)
	rec := second.Status.DatabasesAndUsers
	require.NotNil(t, rec)
	assert.NotEmpty(t, rec.Fingerprint)
	assert.Equal(t, []string{"project1"}, rec.Databases)
	assert.Equal(t, genSecret, rec.Users[1].Secret)

	st, observed = e.feed(t, second)
	third := e.call(t, spec, st, observed...)
	assert.Len(t, e.rec.calls, 1, "an identical call applies nothing")
	assert.Equal(t, second.Status, third.Status, "and writes the same status")
	assert.Equal(t, second.Children, third.Children)

	e.now = e.now.Add(e.drift)
	st, observed = e.feed(t, third)
	fourth := e.call(t, spec, st, observed...)
	assert.Len(t, e.rec.calls, 2, "the drift check applies again")
	assert.Equal(t, e.now, fourth.Status.DatabasesAndUsers.LastApplied.Time)
}

func TestDatabasesStep(t *testing.T) {
	applied := func(t *testing.T) v1alpha1.RdsStatus {
		// The status after a successful apply of usersSpec with app1's password only.
		e := newDBEnv()
		spec := usersSpec()
		spec.Users = spec.Users[:1]
		return *e.call(t, spec, v1alpha1.RdsStatus{}).Status
	}
	cases := map[string]struct {
		reason     string
		spec       func(*v1alpha1.RdsSpec)
		status     func(t *testing.T) v1alpha1.RdsStatus
		instance   func(*cloud.Instance)
		related    map[string]*corev1.Secret
		secrets    []*corev1.Secret
		applyErr   error
		wantApply  int
		wantReason string // of DatabasesReady; "" means no such condition
		wantSynced string
		check      func(t *testing.T, resp *hook.SyncResponse, calls []applyCall)
	}{
		"nothing declared": {
			reason:     "without databases and users the step does nothing and adds no condition",
			spec:       func(s *v1alpha1.RdsSpec) { s.Databases, s.Users = nil, nil },
			wantSynced: ReasonReconcileSuccess,
		},
		"SQL Server": {
			reason: "an engine without a SQL layer gets a clear condition and no action",
			spec: func(s *v1alpha1.RdsSpec) {
				s.Datastoretype, s.Datastoreversion, s.Flavorref, s.Port = "SQLServer", "2022_SE", "rds.mssql.se.s3.large.4", nil
			},
			instance: func(i *cloud.Instance) {
				i.Engine, i.Version, i.CompleteVersion, i.Flavor, i.Port = "SQLServer", "2022_SE", "2022_SE", "rds.mssql.se.s3.large.4", 1433
			},
			wantReason: ReasonEngineNotSupported,
			wantSynced: ReasonReconcileSuccess,
		},
		"PostgreSQL": {
			reason:   "PostgreSQL's databases and users are applied through the same step",
			spec:     func(s *v1alpha1.RdsSpec) { *s = pgSpec() },
			instance: postgresInstance("15", "rds.pg.c2.medium"),
			secrets: []*corev1.Secret{{ObjectMeta: metav1.ObjectMeta{Name: genSecret},
				Data: map[string][]byte{KeyPassword: []byte("stored-Gen-pw1")}}},
			wantApply:  1,
			wantReason: ReasonApplied,
			wantSynced: ReasonReconcileSuccess,
			check: func(t *testing.T, resp *hook.SyncResponse, calls []applyCall) {
				require.Len(t, calls, 1)
				assert.Equal(t, "root", calls[0].conn.User, "PostgreSQL's administrator on OTC")
				assert.Equal(t, 5432, calls[0].conn.Port)
				s := childSecret(resp, genSecret)
				require.NotNil(t, s)
				assert.Equal(t, "project1", string(s.Data[KeyDatabase]))
				assert.Equal(t, "postgresql://gen:stored-Gen-pw1@192.168.0.10:5432/project1?sslmode=require", string(s.Data[KeyURI]))
				assert.Equal(t, "host=192.168.0.10 port=5432 user='gen' password='stored-Gen-pw1' dbname='project1' sslmode=require", string(s.Data[KeyDSN]))
			},
		},
		"instance busy": {
			reason:     "nothing is applied unless the instance is ACTIVE",
			spec:       func(s *v1alpha1.RdsSpec) { s.Users = s.Users[:1] },
			instance:   func(i *cloud.Instance) { i.Status = "BACKING UP" },
			wantReason: ReasonWaitingForInstance,
			wantSynced: ReasonReconcileSuccess,
		},
		"instance busy keeps user Secrets": {
			reason:   "a user Secret not rendered in this call is echoed, or Metacontroller would delete it",
			instance: func(i *cloud.Instance) { i.Status = "BACKING UP" },
			secrets: []*corev1.Secret{{ObjectMeta: metav1.ObjectMeta{Name: genSecret},
				Data: map[string][]byte{KeyPassword: []byte("kept")}}},
			wantReason: ReasonWaitingForInstance,
			wantSynced: ReasonReconcileSuccess,
			check: func(t *testing.T, resp *hook.SyncResponse, _ []applyCall) {
				s := childSecret(resp, genSecret)
				require.NotNil(t, s)
				assert.Equal(t, "kept", string(s.Data[KeyPassword]))
			},
		},
		"password from a Secret": {
			reason: "passwordsecretref is read from the related Secrets",
			spec: func(s *v1alpha1.RdsSpec) {
				s.Users = s.Users[1:]
				s.Users[0].Passwordsecretref = &v1alpha1.SecretKeyRef{Name: "gen-pw", Key: "pw"}
			},
			related:    map[string]*corev1.Secret{"gen-pw": {Data: map[string][]byte{"pw": []byte("from-secret")}}},
			wantApply:  1,
			wantReason: ReasonApplied,
			wantSynced: ReasonReconcileSuccess,
			check: func(t *testing.T, resp *hook.SyncResponse, calls []applyCall) {
				assert.Equal(t, "from-secret", calls[0].d.Users[0].Password.Reveal())
				assert.Equal(t, "from-secret", string(childSecret(resp, genSecret).Data[KeyPassword]))
			},
		},
		"password Secret missing": {
			reason: "a missing referenced Secret stops the apply with a stable condition",
			spec: func(s *v1alpha1.RdsSpec) {
				s.Users[1].Passwordsecretref = &v1alpha1.SecretKeyRef{Name: "gen-pw"}
			},
			wantReason: ReasonUserPasswordSecretMissing,
			wantSynced: ReasonReconcileSuccess,
			check: func(t *testing.T, resp *hook.SyncResponse, _ []applyCall) {
				assert.Equal(t, `The Secret "gen-pw" named in users[1].passwordsecretref was not found.`,
					condition(t, resp.Status, v1alpha1.ConditionDatabasesReady).Message)
			},
		},
		"server unreachable": {
			reason:     "a SQL failure is a condition and a retry, never an error of the hook",
			spec:       func(s *v1alpha1.RdsSpec) { s.Users = s.Users[:1] },
			applyErr:   errors.Join(dbusers.ErrUnreachable),
			wantApply:  1,
			wantReason: ReasonDatabaseUnreachable,
			wantSynced: ReasonReconcileSuccess,
			check: func(t *testing.T, resp *hook.SyncResponse, _ []applyCall) {
				assert.Empty(t, resp.Status.DatabasesAndUsers.Fingerprint, "nothing was applied: a later call tries again")
				assert.Equal(t, 30.0, resp.ResyncAfterSeconds, "once the backoff passed (TestDatabasesUnreachableBacksOff)")
			},
		},
		"statement refused": {
			reason:     "a refused statement names the change, and keeps the state remembered so far",
			spec:       func(s *v1alpha1.RdsSpec) { s.Users = s.Users[:1]; s.Databases = []string{"project1", "project2"} },
			status:     applied,
			applyErr:   &dbusers.StatementError{Change: "grant SELECT on project1.t to 'app1'@'10.9.3.%'", Number: 1146, Message: "Table 'project1.t' doesn't exist"},
			wantApply:  1,
			wantReason: ReasonStatementRefused,
			wantSynced: ReasonReconcileSuccess,
			check: func(t *testing.T, resp *hook.SyncResponse, calls []applyCall) {
				assert.Contains(t, condition(t, resp.Status, v1alpha1.ConditionDatabasesReady).Message, "server error 1146")
				assert.Equal(t, []string{"project1"}, calls[0].managed.Databases, "the remembered state is passed on")
				assert.Equal(t, []string{"project1"}, resp.Status.DatabasesAndUsers.Databases)
				assert.NotEmpty(t, resp.Status.DatabasesAndUsers.Fingerprint, "the old fingerprint stays")
			},
		},
		"user removed": {
			reason:     "users that left the spec are still applied (dropped) while they are managed",
			spec:       func(s *v1alpha1.RdsSpec) { s.Users, s.Databases = nil, nil },
			status:     applied,
			wantApply:  1,
			wantReason: ReasonApplied,
			wantSynced: ReasonReconcileSuccess,
			check: func(t *testing.T, _ *hook.SyncResponse, calls []applyCall) {
				assert.Empty(t, calls[0].d.Users)
				assert.Len(t, calls[0].managed.Users, 1)
			},
		},
		"everything removed": {
			reason: "with nothing declared and no account to drop, the condition goes and the fingerprint is forgotten",
			spec:   func(s *v1alpha1.RdsSpec) { s.Users, s.Databases = nil, nil },
			status: func(t *testing.T) v1alpha1.RdsStatus {
				e := newDBEnv()
				spec := usersSpec()
				spec.Users = nil
				return *e.call(t, spec, v1alpha1.RdsStatus{}).Status
			},
			wantSynced: ReasonReconcileSuccess,
			check: func(t *testing.T, resp *hook.SyncResponse, _ []applyCall) {
				rec := resp.Status.DatabasesAndUsers
				require.NotNil(t, rec)
				assert.Empty(t, rec.Fingerprint, "declaring the same state again applies it again")
				assert.Equal(t, []string{"project1"}, rec.Databases, "created databases stay remembered for a later prune")
			},
		},
		"GRANT for another account": {
			reason:     "an invalid GRANT string makes the spec invalid: nothing is executed",
			spec:       func(s *v1alpha1.RdsSpec) { s.Users[0].Privileges = []string{"GRANT ALL ON *.* TO 'root'@'%'"} },
			wantSynced: ReasonReconcileSuccess, // the instance is still reported and reconciled
			wantReason: ReasonInvalidSpec,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := newDBEnv()
			e.rec.err = tc.applyErr
			spec := usersSpec()
			if tc.spec != nil {
				tc.spec(&spec)
			}
			if tc.instance != nil {
				tc.instance(e.inst)
			}
			st := v1alpha1.RdsStatus{}
			if tc.status != nil {
				st = tc.status(t)
			}
			req := request(spec, *st.DeepCopy(), append([]*corev1.Secret{storedSecret("A12345678+")}, tc.secrets...)...)
			req.Parent.Status.ID = "inst-1"
			for k, v := range tc.related {
				req.Related[k] = v
			}
			resp, err := e.r.Sync(context.Background(), req)
			require.NoError(t, err, tc.reason)
			assert.Len(t, e.rec.calls, tc.wantApply, tc.reason)
			assert.Equal(t, tc.wantSynced, condition(t, resp.Status, v1alpha1.ConditionSynced).Reason, tc.reason)
			got := getCondition(resp.Status, v1alpha1.ConditionDatabasesReady)
			if tc.wantReason == "" {
				assert.Nil(t, got, tc.reason)
			} else if assert.NotNil(t, got, tc.reason) {
				assert.Equal(t, tc.wantReason, got.Reason, tc.reason)
			}
			if tc.check != nil {
				tc.check(t, resp, e.rec.calls)
			}
		})
	}
}

// genSecret is the Secret of the generated user "gen" of the sample object.
var genSecret = UserSecretName("my-rds-single", "gen", "")

func TestUserSecretName(t *testing.T) {
	dns := regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	long := "a" + strings.Repeat("b", 240)
	cases := map[string]struct {
		reason, rds, user, host, want string
	}{
		"plain":      {reason: "a DNS-safe name keeps its label, with the hash", rds: "db", user: "app", host: "", want: "db-user-app-"},
		"host %":     {reason: "an explicit % is the default host", rds: "db", user: "app", host: "%", want: "db-user-app-"},
		"other host": {reason: "the same name at another host is another account", rds: "db", user: "app", host: "10.%", want: "db-user-app-"},
		"odd name":   {reason: "upper case and _ are mapped, with a hash to keep App and app apart", rds: "db", user: "My_App", want: "db-user-my-app-"},
		"all odd":    {reason: "a name with nothing DNS-safe is only the hash", rds: "db", user: "__", want: "db-user-"},
		"long":       {reason: "the name stays within 253 characters", rds: long, user: "app", want: "a"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := UserSecretName(tc.rds, tc.user, tc.host)
			assert.True(t, len(got) <= 253 && dns.MatchString(got), "%s: %q is not a Secret name", tc.reason, got)
			assert.True(t, len(got) >= len(tc.want) && got[:len(tc.want)] == tc.want, "%s: %q", tc.reason, got)
			assert.Equal(t, got, UserSecretName(tc.rds, tc.user, tc.host), "predictable")
		})
	}
	assert.NotEqual(t, UserSecretName("db", "App", ""), UserSecretName("db", "app", ""), "accounts differing in case get different Secrets")
	assert.NotEqual(t, UserSecretName("db", "app", "10.%"), UserSecretName("db", "app", "10.1.%"))
	assert.Equal(t, UserSecretName("db", "app", ""), UserSecretName("db", "app", "%"))
	assert.NotEqual(t, ConnectionSecretName("a-user-b"), UserSecretName("a", "b-connection", ""),
		"a user's Secret never takes another object's connection Secret")
	assert.NotEqual(t, UserSecretName("a-user-b", "c", ""), UserSecretName("a", "b-user-c", ""),
		"nor another object's user Secret")
}

func TestValidateUsers(t *testing.T) {
	cases := map[string]struct {
		reason string
		user   v1alpha1.User
		want   string // a substring of the only problem; "" means valid
	}{
		"original format": {reason: "the original operator's GRANT strings keep working",
			user: v1alpha1.User{Name: "app1", Host: "10.9.3.%", Password: "pw", Privileges: []string{"GRANT ALL PRIVILEGES ON project1.* TO 'app1'@'10.9.3.%';"}}},
		"structured": {reason: "the structured form",
			user: v1alpha1.User{Name: "app1", Grants: []v1alpha1.DatabaseGrant{{Database: "p", Table: "t", Privileges: []string{"select", "insert"}}}}},
		"other account": {reason: "a GRANT names exactly the user's own account",
			user: v1alpha1.User{Name: "app1", Privileges: []string{"GRANT ALL ON project1.* TO 'root'@'%'"}}, want: "spec.users[0].privileges[0]: invalid grant: the grant is for the account"},
		"global": {reason: "global grants are refused",
			user: v1alpha1.User{Name: "app1", Privileges: []string{"GRANT ALL ON *.* TO 'app1'@'%'"}}, want: "spec.users[0].privileges[0]: invalid grant"},
		"second statement": {reason: "an injected second statement is refused",
			user: v1alpha1.User{Name: "app1", Privileges: []string{"GRANT SELECT ON p.* TO 'app1'@'%'; DROP DATABASE mysql"}}, want: "spec.users[0].privileges[0]: invalid grant"},
		"injection in name": {reason: "names pass an allow-list",
			user: v1alpha1.User{Name: "a'; DROP USER root; --", Password: "x"}, want: "spec.users[0]: user name"},
		"injection in host": {reason: "hosts pass an allow-list",
			user: v1alpha1.User{Name: "a", Host: "%' OR 1=1 --", Password: "x"}, want: "spec.users[0]: host"},
		"admin privilege": {reason: "administrative privileges are refused in the structured form too, indexed as in spec",
			user: v1alpha1.User{Name: "a", Privileges: []string{"GRANT SELECT ON q.* TO a"}, Grants: []v1alpha1.DatabaseGrant{{Database: "p", Privileges: []string{"SUPER"}}}},
			want: `spec.users[0] 'a'@'%': grants[0] ("p.*"): privilege "SUPER" is a global or administrative privilege`},
		"both passwords": {reason: "password and passwordsecretref exclude each other",
			user: v1alpha1.User{Name: "a", Password: "x", Passwordsecretref: &v1alpha1.SecretKeyRef{Name: "s"}}, want: "password and passwordsecretref are both set"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := sampleSpec()
			spec.Users = []v1alpha1.User{tc.user}
			require.Empty(t, Validate(&spec), "the instance's spec stays valid: the databases step reports users")
			got := validateUsers(&spec)
			if tc.want == "" {
				assert.Empty(t, got, tc.reason)
				return
			}
			require.Len(t, got, 1, tc.reason)
			assert.Contains(t, got[0], tc.want, tc.reason)
		})
	}
}

func TestCustomizeAsksForUserSecrets(t *testing.T) {
	req := &hook.CustomizeRequest{}
	req.Parent.Namespace = "rds1"
	req.Parent.Spec.Users = []v1alpha1.User{
		{Name: "a", Passwordsecretref: &v1alpha1.SecretKeyRef{Name: "pw-a"}},
		{Name: "b", Passwordsecretref: &v1alpha1.SecretKeyRef{Name: "pw-a"}},
		{Name: "c"},
	}
	resp := Customize(req)
	require.Len(t, resp.RelatedResources, 1)
	assert.Equal(t, []string{"pw-a"}, resp.RelatedResources[0].Names)
	assert.Equal(t, "rds1", resp.RelatedResources[0].Namespace)
}

func TestFinalizeKeepsUserSecrets(t *testing.T) {
	spec := usersSpec()
	spec.Deletionpolicy = v1alpha1.DeletionPolicyRetain
	userSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: genSecret}, Data: map[string][]byte{KeyPassword: []byte("kept")}}
	req := request(spec, v1alpha1.RdsStatus{ID: "inst-1"}, storedSecret("A12345678+"), userSecret)
	resp, err := newReconciler(&cloudtest.Fake{}).Finalize(context.Background(), req)
	require.NoError(t, err)
	var names []string
	for _, ch := range resp.Children {
		names = append(names, ch.(*corev1.Secret).Name)
	}
	assert.Equal(t, []string{"my-rds-single-connection", genSecret}, names)
}

func TestDatabasesFailureIsStable(t *testing.T) {
	for name, applyErr := range map[string]error{
		"unreachable": fmt.Errorf("connect to 192.168.0.10:3306: %w: timed out", dbusers.ErrUnreachable),
		"login":       fmt.Errorf("connect to 192.168.0.10:3306 as \"root\": %w: server error 1045", dbusers.ErrUnauthorized),
		"refused":     dbusers.Errors{&dbusers.StatementError{Change: "create database x", Number: 1007, Message: "exists"}, &dbusers.StatementError{Change: "drop user 'a'@'%'", Number: 1396, Message: "failed"}},
	} {
		t.Run(name, func(t *testing.T) {
			e := newDBEnv()
			e.rec.err = applyErr
			spec := usersSpec()
			spec.Users = spec.Users[:1]
			first := e.call(t, spec, v1alpha1.RdsStatus{})
			// An unreachable server is tried again once its backoff passed; a call before that
			// answers the same status without trying (TestDatabasesUnreachableBacksOff).
			if name == "unreachable" {
				e.now = e.now.Add(10 * time.Second)
				second := e.call(t, spec, *first.Status)
				assert.Len(t, e.rec.calls, 1, "not tried again within the backoff")
				assert.Equal(t, first.Status, second.Status, "the same failure writes the same status: no sync loop")
				return
			}
			e.now = e.now.Add(time.Minute)
			second := e.call(t, spec, *first.Status)
			assert.Len(t, e.rec.calls, 2, "a failed apply is retried on the next call")
			assert.Equal(t, first.Status, second.Status, "the same failure writes the same status: no sync loop")
			assert.Equal(t, metav1.ConditionFalse, condition(t, second.Status, v1alpha1.ConditionDatabasesReady).Status)
		})
	}
}

// An unreachable database endpoint (a server that accepts and never answers) costs one short
// connection attempt, then nothing until the backoff passes: a second sync right after makes no
// attempt and answers at once, and resyncAfterSeconds follows the backoff (security review #17,
// attack 8: ten such objects held hook slots for 4 s on every sync).
func TestDatabasesUnreachableBacksOff(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c) // never answered
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			_ = c.Close()
		}
	})

	e := newDBEnv()
	e.inst.PrivateIPs, e.inst.Port = []string{"127.0.0.1"}, l.Addr().(*net.TCPAddr).Port
	attempts := 0
	e.r = New(Config{Cloud: e.f, Now: func() time.Time { return e.now }, Databases: DatabasesConfig{
		Apply: func(ctx context.Context, conn dbusers.Conn, d dbusers.Desired, m dbusers.ManagedState) (dbusers.Result, error) {
			attempts++
			return dbusers.Apply(ctx, conn, d, m)
		},
	}})
	spec := usersSpec()
	spec.Users = spec.Users[:1]
	spec.Port = ptr.To(intstr.FromInt32(int32(e.inst.Port)))
	st := v1alpha1.RdsStatus{ID: "inst-1"}

	start := time.Now()
	first := e.call(t, spec, st)
	took := time.Since(start)
	require.Equal(t, 1, attempts)
	assert.Less(t, took, 3*time.Second, "the connection attempt has a short deadline of its own")
	ready := condition(t, first.Status, v1alpha1.ConditionDatabasesReady)
	assert.Equal(t, ReasonDatabaseUnreachable, ready.Reason)
	assert.Equal(t, 30.0, first.ResyncAfterSeconds, "called again when the next attempt is due")

	st, _ = e.feed(t, first)
	e.now = e.now.Add(time.Second)
	start = time.Now()
	second := e.call(t, spec, st)
	assert.Less(t, time.Since(start), time.Second, "no attempt: the answer is quick")
	assert.Equal(t, 1, attempts, "no connection attempt within the backoff")
	assert.Equal(t, first.Status, second.Status, "the same status: no sync loop")
	assert.Equal(t, 29.0, second.ResyncAfterSeconds)

	// The backoff passed: one more attempt, and the next waits twice as long.
	st, _ = e.feed(t, second)
	e.now = e.now.Add(29 * time.Second)
	third := e.call(t, spec, st)
	assert.Equal(t, 2, attempts)
	assert.Equal(t, 60.0, third.ResyncAfterSeconds)

	// A spec change of databases tries at once.
	st, _ = e.feed(t, third)
	e.now = e.now.Add(time.Second)
	spec.Databases = append(spec.Databases, "project2")
	e.call(t, spec, st)
	assert.Equal(t, 3, attempts, "a changed spec is tried at once")
}
