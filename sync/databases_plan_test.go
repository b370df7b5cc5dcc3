package reconcile

import (
	"errors"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/dbusers"
	"github.com/mcsps/rds-lambda-controller/sync/pgusers"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// TestPlanDatabases decides the databases step from plain inputs: no cloud, no fake, no SQL server.
func TestPlanDatabases(t *testing.T) {
	now := metav1.NewTime(t0)
	root := secret.New("A12345678+")
	appSecret := UserSecretName("my-rds-single", "app1", "10.9.3.%")
	app := usersSpec().Users[0]
	gen := usersSpec().Users[1]
	stored := secret.New("stored-Gen-pw1")
	fresh := secret.New("fresh-Gen-pw1")
	accounts := func(genPassword secret.Value) []userAccount {
		return []userAccount{{secret: appSecret, user: app, password: secret.New("app1-Secret")}, {secret: genSecret, user: gen, password: genPassword}}
	}
	// desired is the state usersSpec asks for, with gen's stored password.
	desired := dbusers.Desired{
		Databases: []string{"project1"},
		Users: []dbusers.UserSpec{
			{Name: "app1", Host: "10.9.3.%", Password: secret.New("app1-Secret"), Grants: []dbusers.Grant{{Database: "project1", Privileges: []string{"ALL"}}}},
			{Name: "gen", Password: stored, Grants: []dbusers.Grant{{Database: "project1", Privileges: []string{"SELECT"}}}},
		},
		DigestKey: root,
	}
	fingerprint := dbusers.Fingerprint(desired)
	managed := dbusers.ManagedState{Databases: []string{"project1"}, Users: []dbusers.ManagedUser{{Name: "app1", Host: "10.9.3.%", PasswordDigest: "d1"}}}
	appliedAt := metav1.NewTime(t0.Add(-time.Minute))
	// record is what status remembers after an apply of desired a minute ago.
	record := func() *v1alpha1.DatabasesStatus {
		rec := databasesRecord("my-rds-single", managed)
		rec.Fingerprint, rec.LastApplied = fingerprint, &appliedAt
		return rec
	}

	// input is a call of usersSpec on an ACTIVE instance with an endpoint, gen's password stored,
	// nothing applied yet; each edit changes what a case is about.
	input := func(edits ...func(*databasesInput)) databasesInput {
		spec := usersSpec()
		in := databasesInput{
			spec: &spec, object: "my-rds-single", instStatus: cloud.StatusActive,
			host: "192.168.0.10", port: 3306, rootPassword: root,
			related: map[string]*corev1.Secret{},
			secrets: map[string]*corev1.Secret{genSecret: {Data: map[string][]byte{KeyPassword: []byte(stored.Reveal())}}},
			now:     now, driftCheck: time.Hour,
		}
		for _, edit := range edits {
			edit(&in)
		}
		return in
	}
	nothing := func(in *databasesInput) { in.spec.Databases, in.spec.Users = nil, nil }
	remembered := func(in *databasesInput) { in.rec = record() }
	readySet := func(in *databasesInput) { in.readySet = true }
	inState := func(status string) func(*databasesInput) { return func(in *databasesInput) { in.instStatus = status } }
	notStored := func(in *databasesInput) { delete(in.secrets, genSecret) }
	generated := func(in *databasesInput) { in.fresh = map[int]secret.Value{1: fresh} }
	answered := func(res dbusers.Result, err error) func(*databasesInput) {
		return func(in *databasesInput) { in.answer = &applyAnswer{res: res, err: err} }
	}
	postgres := func(in *databasesInput) { spec := pgSpec(); in.spec, in.port = &spec, 5432 }
	applied := ptr.To(databasesApplied())
	unreachable := errors.Join(dbusers.ErrUnreachable)
	refusedLogin := errors.Join(dbusers.ErrUnauthorized)
	fingerprint2 := dbusers.Fingerprint(dbusers.Desired{Databases: []string{"project1", "project2"}, Users: desired.Users, DigestKey: root})
	// unreachableRecord is a status whose last attempts did not reach the server.
	unreachableRecord := func(fp string, attempts int, last time.Time) *v1alpha1.DatabasesStatus {
		return withUnreachable(databasesRecord("my-rds-single", dbusers.ManagedState{}), fp, attempts, metav1.NewTime(last))
	}

	tests := []struct {
		reason string
		in     databasesInput
		want   databasesPlan
	}{
		{
			reason: "nothing declared, nothing remembered: no condition",
			in:     input(nothing),
			want:   databasesPlan{dropReady: true},
		},
		{
			reason: "nothing declared: the record keeps the databases but forgets the fingerprint",
			in: input(nothing, remembered, func(in *databasesInput) {
				in.rec.Users = nil
			}),
			want: databasesPlan{dropReady: true, record: &v1alpha1.DatabasesStatus{Databases: []string{"project1"}}},
		},
		{
			reason: "nothing declared but an account to drop: applied",
			in:     input(nothing, remembered, answered(dbusers.Result{}, nil)),
			want:   databasesPlan{ready: applied, record: &v1alpha1.DatabasesStatus{Fingerprint: dbusers.Fingerprint(dbusers.Desired{DigestKey: root}), LastApplied: &now}},
		},
		{
			reason: "SQL Server has no SQL layer: the sentence says why",
			in:     input(func(in *databasesInput) { in.spec.Datastoretype = v1alpha1.EngineSQLServer }),
			want: databasesPlan{ready: ptr.To(databasesNotReady(ReasonEngineNotSupported,
				"Databases and users are not supported for SQLServer, only for MySQL and PostgreSQL; nothing was applied."+
					" SQL Server's accounts are logins mapped to a user in each database, which users and grants do not express yet.", waitsForUser))},
		},
		{
			reason: "PostgreSQL: the same plan applies the spec's state through pgusers",
			in:     input(postgres),
			want: func() databasesPlan {
				spec := pgSpec()
				d, _ := desiredDatabases(pgAccounts{}, &spec, func(i int) secret.Value { return []secret.Value{secret.New("app1-Secret"), stored}[i] })
				d.DigestKey = root
				return databasesPlan{apply: &d, accounts: []userAccount{
					{secret: UserSecretName("my-rds-single", "app1", ""), user: spec.Users[0], password: secret.New("app1-Secret")},
					{secret: genSecret, user: spec.Users[1], password: stored},
				}}
			}(),
		},
		{
			reason: "PostgreSQL refuses GRANT strings, a host and MySQL's privileges before any SQL",
			in: input(postgres, func(in *databasesInput) {
				in.spec.Users[0].Host = "10.%"
				in.spec.Users[1].Privileges = []string{"GRANT SELECT ON project1.* TO gen"}
				in.spec.Users[1].Grants = []v1alpha1.DatabaseGrant{{Database: "project1", Schema: "public", Table: "*", Privileges: []string{"SHOW VIEW"}}}
			}),
			want: databasesPlan{ready: ptr.To(databasesNotReady(ReasonInvalidSpec,
				`spec.users[1].privileges[0]: invalid grant: GRANT strings are MySQL's format; for PostgreSQL write grants (database, schema, table, privileges). `+
					`spec.users[0]: host "10.%": PostgreSQL roles have no host (the addresses allowed to connect are the instance's security group's): leave host empty or %. `+
					`spec.users[1] gen: grants[0] ("every table of project1.public"): unknown privilege "SHOW VIEW": a table takes SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER or ALL.`,
				waitsForUser))},
		},
		{
			reason: "an invalid GRANT: nothing is generated, stored or executed",
			in: input(notStored, func(in *databasesInput) {
				in.spec.Users[0].Privileges = []string{"GRANT ALL ON *.* TO 'root'@'%'"}
			}),
			want: databasesPlan{ready: ptr.To(databasesNotReady(ReasonInvalidSpec,
				validateUsersMessage(t, func(s *v1alpha1.RdsSpec) { s.Users[0].Privileges = []string{"GRANT ALL ON *.* TO 'root'@'%'"} }), waitsForUser))},
		},
		{
			reason: "the instance is not ACTIVE: wait",
			in:     input(inState("BACKING UP")),
			want:   databasesPlan{ready: ptr.To(databasesNotReady(ReasonWaitingForInstance, "The databases and users are applied once the instance is ACTIVE.", settled))},
		},
		{
			reason: "the instance is not ACTIVE: the condition keeps what the last apply said",
			in:     input(inState("BACKING UP"), readySet, remembered),
			want:   databasesPlan{record: record()},
		},
		{
			reason: "no endpoint yet: wait",
			in:     input(func(in *databasesInput) { in.host = "" }),
			want:   databasesPlan{ready: ptr.To(databasesNotReady(ReasonWaitingForInstance, "The databases and users are applied once the instance is ACTIVE.", settled))},
		},
		{
			reason: "a password to generate: generate it first",
			in:     input(notStored),
			want:   databasesPlan{generate: []int{1}},
		},
		{
			reason: "a generated password is stored before it is used",
			in:     input(notStored, generated),
			want: databasesPlan{accounts: accounts(fresh), ready: ptr.To(databasesNotReady(ReasonStoringUserPasswords,
				"Storing generated user passwords in their Secrets before setting them.", storingSecret))},
		},
		{
			reason: "a referenced password Secret is missing: retry soon, the other users' Secrets are rendered",
			in: input(func(in *databasesInput) {
				in.spec.Users[1].Passwordsecretref = &v1alpha1.SecretKeyRef{Name: "gen-pw"}
			}),
			want: databasesPlan{accounts: accounts(secret.Value{})[:1], ready: ptr.To(databasesNotReady(ReasonUserPasswordSecretMissing,
				`The Secret "gen-pw" named in users[1].passwordsecretref was not found.`, retry))},
		},
		{
			reason: "a referenced password Secret without the key",
			in: input(func(in *databasesInput) {
				in.spec.Users[1].Passwordsecretref = &v1alpha1.SecretKeyRef{Name: "gen-pw", Key: "pw"}
				in.related["gen-pw"] = &corev1.Secret{Data: map[string][]byte{KeyPassword: []byte("x")}}
			}),
			want: databasesPlan{accounts: accounts(secret.Value{})[:1], ready: ptr.To(databasesNotReady(ReasonUserPasswordSecretMissing,
				`The Secret "gen-pw" named in users[1].passwordsecretref has no key "pw".`, retry))},
		},
		{
			reason: "every password known, nothing applied yet: apply",
			in:     input(),
			want:   databasesPlan{accounts: accounts(stored), apply: &desired},
		},
		{
			reason: "the state applied a minute ago: nothing to do",
			in:     input(remembered),
			want:   databasesPlan{accounts: accounts(stored), record: record(), ready: applied},
		},
		{
			reason: "the drift check is due: apply again",
			in:     input(remembered, func(in *databasesInput) { in.now = metav1.NewTime(appliedAt.Add(time.Hour)) }),
			want:   databasesPlan{accounts: accounts(stored), record: record(), apply: &desired},
		},
		{
			reason: "a changed spec: apply again",
			in:     input(remembered, func(in *databasesInput) { in.spec.Databases = append(in.spec.Databases, "project2") }),
			want: databasesPlan{accounts: accounts(stored), record: record(), apply: &dbusers.Desired{
				Databases: []string{"project1", "project2"}, Users: desired.Users, DigestKey: root,
			}},
		},
		{
			reason: "applied: the record, the fingerprint and the time",
			in:     input(answered(dbusers.Result{Managed: managed, Changes: []string{"created database project1"}}, nil)),
			want: databasesPlan{accounts: accounts(stored), ready: applied,
				record: &v1alpha1.DatabasesStatus{Databases: []string{"project1"}, Fingerprint: fingerprint, LastApplied: &now,
					Users: []v1alpha1.ManagedDatabaseUser{{Name: "app1", Host: "10.9.3.%", Secret: appSecret, PasswordDigest: "d1"}}},
				logs: []logLine{{slog.LevelInfo, "applied databases and users", []any{"changes", []string{"created database project1"}}}},
			},
		},
		{
			reason: "a failed apply keeps the fingerprint applied before; an unreachable server is tried again in 30 s",
			in: input(remembered, func(in *databasesInput) { in.spec.Databases = append(in.spec.Databases, "project2") },
				answered(dbusers.Result{Managed: managed}, unreachable)),
			want: databasesPlan{accounts: accounts(stored), record: withUnreachable(record(), fingerprint2, 1, now),
				ready:  ptr.To(databasesOutcome(unreachable, now.Add(30*time.Second))),
				within: 30 * time.Second,
				logs:   []logLine{{slog.LevelWarn, "applying databases and users failed", []any{"error", unreachable.Error()}}},
			},
		},
		{
			reason: "within the backoff: no attempt, the condition keeps what the attempt said, called again when it is due",
			in:     input(readySet, func(in *databasesInput) { in.rec = unreachableRecord(fingerprint, 1, now.Add(-10*time.Second)) }),
			want:   databasesPlan{accounts: accounts(stored), record: unreachableRecord(fingerprint, 1, now.Add(-10*time.Second)), within: 20 * time.Second},
		},
		{
			reason: "within the backoff, the condition lost: it says when the next attempt is",
			in:     input(func(in *databasesInput) { in.rec = unreachableRecord(fingerprint, 1, now.Add(-10*time.Second)) }),
			want: databasesPlan{accounts: accounts(stored), record: unreachableRecord(fingerprint, 1, now.Add(-10*time.Second)),
				ready: ptr.To(databasesOutcome(unreachable, now.Add(20*time.Second))), within: 20 * time.Second},
		},
		{
			reason: "the backoff passed: apply",
			in:     input(readySet, func(in *databasesInput) { in.rec = unreachableRecord(fingerprint, 1, now.Add(-30*time.Second)) }),
			want:   databasesPlan{accounts: accounts(stored), record: unreachableRecord(fingerprint, 1, now.Add(-30*time.Second)), apply: &desired},
		},
		{
			reason: "the backoff doubles: the third attempt in a row waits 2 minutes for the fourth",
			in: input(func(in *databasesInput) { in.rec = unreachableRecord(fingerprint, 2, now.Add(-time.Minute)) },
				answered(dbusers.Result{}, unreachable)),
			want: databasesPlan{accounts: accounts(stored), record: withUnreachable(databasesRecord("my-rds-single", dbusers.ManagedState{}), fingerprint, 3, now),
				ready: ptr.To(databasesOutcome(unreachable, now.Add(2*time.Minute))), within: 2 * time.Minute,
				logs: []logLine{{slog.LevelWarn, "applying databases and users failed", []any{"error", unreachable.Error()}}}},
		},
		{
			reason: "the backoff is capped at 10 minutes, and a forged count does not overflow",
			in: input(func(in *databasesInput) { in.rec = unreachableRecord(fingerprint, math.MaxInt, now.Add(-time.Hour)) },
				answered(dbusers.Result{}, unreachable)),
			want: databasesPlan{accounts: accounts(stored), record: withUnreachable(databasesRecord("my-rds-single", dbusers.ManagedState{}), fingerprint, 101, now),
				ready: ptr.To(databasesOutcome(unreachable, now.Add(10*time.Minute))), within: 10 * time.Minute,
				logs: []logLine{{slog.LevelWarn, "applying databases and users failed", []any{"error", unreachable.Error()}}}},
		},
		{
			reason: "a changed spec is tried at once, whatever the backoff of the state before",
			in: input(readySet, func(in *databasesInput) {
				in.rec = unreachableRecord(fingerprint, 5, now.Add(-time.Second))
				in.spec.Databases = append(in.spec.Databases, "project2")
			}),
			want: databasesPlan{accounts: accounts(stored), record: unreachableRecord(fingerprint, 5, now.Add(-time.Second)), apply: &dbusers.Desired{
				Databases: []string{"project1", "project2"}, Users: desired.Users, DigestKey: root,
			}},
		},
		{
			reason: "a last attempt in the future (a forged status) does not hold the apply",
			in:     input(readySet, func(in *databasesInput) { in.rec = unreachableRecord(fingerprint, 5, now.Add(time.Hour)) }),
			want:   databasesPlan{accounts: accounts(stored), record: unreachableRecord(fingerprint, 5, now.Add(time.Hour)), apply: &desired},
		},
		{
			reason: "an attempt that reaches the server forgets the backoff",
			in: input(func(in *databasesInput) { in.rec = unreachableRecord(fingerprint, 3, now.Add(-time.Hour)) },
				answered(dbusers.Result{Managed: managed}, nil)),
			want: databasesPlan{accounts: accounts(stored), ready: applied,
				record: &v1alpha1.DatabasesStatus{Databases: []string{"project1"}, Fingerprint: fingerprint, LastApplied: &now,
					Users: []v1alpha1.ManagedDatabaseUser{{Name: "app1", Host: "10.9.3.%", Secret: appSecret, PasswordDigest: "d1"}}},
			},
		},
		{
			reason: "a refused root login is not an unreachable server: no backoff",
			in: input(func(in *databasesInput) { in.rec = unreachableRecord(fingerprint, 3, now.Add(-time.Hour)) },
				answered(dbusers.Result{}, refusedLogin)),
			want: databasesPlan{accounts: accounts(stored), record: databasesRecord("my-rds-single", dbusers.ManagedState{}),
				ready: ptr.To(databasesOutcome(refusedLogin, time.Time{})),
				logs:  []logLine{{slog.LevelWarn, "applying databases and users failed", []any{"error", refusedLogin.Error()}}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			assert.Equal(t, tt.want, planDatabases(tt.in))
		})
	}
}

// withUnreachable is rec with a backoff after attempts that did not reach the server.
func withUnreachable(rec *v1alpha1.DatabasesStatus, fingerprint string, attempts int, last metav1.Time) *v1alpha1.DatabasesStatus {
	rec.Unreachable = &v1alpha1.DatabasesUnreachable{Fingerprint: fingerprint, Attempts: attempts, LastAttempt: last}
	return rec
}

// validateUsersMessage is the InvalidSpec message of usersSpec with edit.
func validateUsersMessage(t *testing.T, edit func(*v1alpha1.RdsSpec)) string {
	t.Helper()
	spec := usersSpec()
	edit(&spec)
	problems := validateUsers(&spec)
	assert.NotEmpty(t, problems)
	return joinSentences(problems)
}

// TestDatabasesOutcome maps each failure of an apply to a stable DatabasesReady and its class.
func TestDatabasesOutcome(t *testing.T) {
	refused := &dbusers.StatementError{Change: "create database project2", Number: 1044, Message: "Access denied"}
	tests := []struct {
		reason string
		err    error
		want   outcome
	}{
		{
			reason: "the spec cannot be applied: the user must change it",
			err:    &dbusers.ValidationError{Problems: []string{"user root is reserved"}},
			want:   databasesNotReady(ReasonInvalidSpec, "The databases and users cannot be applied: invalid database spec: user root is reserved.", waitsForUser),
		},
		{
			reason: "the root login is refused",
			err:    errors.Join(dbusers.ErrUnauthorized),
			want: databasesNotReady(ReasonDatabaseLoginRefused,
				"The database server refused the root login with the password of the connection Secret; the apply will be retried.", settled),
		},
		{
			reason: "the server cannot be reached: the sentence names the next attempt, which the backoff asks for",
			err:    errors.Join(dbusers.ErrUnreachable),
			want:   databasesNotReady(ReasonDatabaseUnreachable, "The database server could not be reached in time; the next attempt is at 2026-05-01T10:00:30Z.", settled),
		},
		{
			reason: "a refused statement names the change, never a password",
			err:    refused,
			want: databasesNotReady(ReasonStatementRefused,
				"The database server refused a change (create database project2: server error 1044: Access denied); the apply will be retried.", settled),
		},
		{
			reason: "a user that owns objects is not dropped: its own reason, which names it",
			err:    errors.Join(refused, &pgusers.OwnsObjectsError{Role: "old", Databases: []string{"shop"}}),
			want: databasesNotReady(ReasonUserOwnsObjects,
				"A user removed from the spec still owns objects and was not dropped (create database project2: server error 1044: Access denied\n"+
					"user old is not dropped: it owns objects in database shop; drop them or reassign them to another role, and the next apply drops it); the apply will be retried.", settled),
		},
		{
			reason: "anything else: backs off too, with no text of the error",
			err:    errors.New("driver: bad connection 10.0.0.1"),
			want:   databasesNotReady(ReasonDatabaseUnreachable, "Applying the databases and users failed unexpectedly; the next attempt is at 2026-05-01T10:00:30Z.", settled),
		},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			assert.Equal(t, tt.want, databasesOutcome(tt.err, time.Date(2026, 5, 1, 10, 0, 30, 0, time.UTC)))
		})
	}
}
