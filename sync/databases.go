package reconcile

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/dbusers"
	"github.com/mcsps/rds-lambda-controller/sync/hook"
	"github.com/mcsps/rds-lambda-controller/sync/pgusers"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// DatabasesConfig configures the databases step.
type DatabasesConfig struct {
	// DriftCheck is how often the databases and users are applied again although the spec did
	// not change, to repair changes made on the server behind the controller's back. Default 1h.
	DriftCheck time.Duration
	// Timeout bounds one whole apply (connecting and every statement). Default: Config.CallTimeout.
	Timeout time.Duration
	// ConnectTimeout bounds connecting and logging in, so that a server that cannot be reached
	// holds a hook call for little time. Default 2s.
	ConnectTimeout time.Duration
	// CA holds the certificates that sign OTC's database server certificates (the CA bundle OTC
	// offers for download, --db-ca-file). A session to a MySQL instance with SSL on, and with a CA
	// to every PostgreSQL instance, is TLS, and the server's certificate must chain to one of them
	// (VERIFY_CA, sslmode=verify-ca); nil: no MySQL server with SSL on is trusted (the name is not
	// checked, so the system's roots, which sign anyone's domain, prove nothing), and PostgreSQL's
	// sessions do not check the certificate (sslmode=prefer).
	CA *x509.CertPool
	// Apply, when set, makes the server match the desired state in place of the engine's SQL
	// layer (sqlLayers): tests wrap it. Default nil.
	Apply func(ctx context.Context, conn dbusers.Conn, d dbusers.Desired, managed dbusers.ManagedState) (dbusers.Result, error)
}

func (d DatabasesConfig) withDefaults(callTimeout time.Duration) DatabasesConfig {
	if d.DriftCheck <= 0 {
		d.DriftCheck = time.Hour
	}
	if d.Timeout <= 0 {
		d.Timeout = callTimeout
	}
	if d.ConnectTimeout <= 0 {
		d.ConnectTimeout = 2 * time.Second
	}
	return d
}

// Reasons of the DatabasesReady condition.
const (
	ReasonApplied                   = "Applied"
	ReasonEngineNotSupported        = "EngineNotSupported"
	ReasonStoringUserPasswords      = "StoringUserPasswords"
	ReasonUserPasswordSecretMissing = "UserPasswordSecretMissing"
	ReasonDatabaseUnreachable       = "DatabaseUnreachable"
	ReasonDatabaseLoginRefused      = "DatabaseLoginRefused"
	ReasonStatementRefused          = "StatementRefused"
	// ReasonDatabaseCertificateUntrusted: a verified session (MySQL with SSL on, PostgreSQL with
	// --db-ca-file) found a server whose certificate does not chain to the CAs of --db-ca-file, or
	// that cannot prove it holds the certificate's key, or (PostgreSQL) that offers no TLS
	// (docs/reference.md#ssl).
	ReasonDatabaseCertificateUntrusted = "DatabaseCertificateUntrusted"
	// ReasonDatabaseLoginUnsafe: the server asked for the root password in a form it could read
	// (in clear text, or encrypted with an RSA key it sent: a MySQL server without SSL that must
	// check it in full), or for none (docs/users.md).
	ReasonDatabaseLoginUnsafe = "DatabaseLoginUnsafe"
	ReasonUserOwnsObjects     = "UserOwnsObjects"
)

// The backoff of applies that did not reach the database server: the first retry waits
// unreachableFirst, each further one twice as long as the one before, at most unreachableMax.
//
// NOTE: status.databasesAndUsers.unreachable remembers the attempts. A status written by hand can
// erase them: then each sync tries once, bounded by DatabasesConfig.ConnectTimeout, as before the
// backoff; a recorded attempt in the future is not believed.
const (
	unreachableFirst = 30 * time.Second
	unreachableMax   = 10 * time.Minute
)

// unreachableBackoff is the wait after n attempts in a row that did not reach the server.
func unreachableBackoff(n int) time.Duration {
	d := unreachableFirst
	for i := 1; i < n && d < unreachableMax; i++ {
		d *= 2
	}
	return min(d, unreachableMax)
}

// nextAttempt is when the desired state with fingerprint may be applied again after attempts that
// did not reach the server, and whether that is still to come at now.
func nextAttempt(u *v1alpha1.DatabasesUnreachable, fingerprint string, now time.Time) (time.Time, bool) {
	if u == nil || u.Fingerprint != fingerprint || u.LastAttempt.After(now) {
		return time.Time{}, false
	}
	next := u.LastAttempt.Add(unreachableBackoff(u.Attempts))
	return next, now.Before(next)
}

// Keys of a user's Secret besides host, port, username, password, dsn and uri.
const KeyDatabase = "database"

// databasesInput is all that the databases decision reads: the spec, what status remembers of
// the last apply, the instance's status and the connection, the Secrets the users' passwords come
// from, the clock, and what the plan asked for: generated passwords and the apply's answer.
type databasesInput struct {
	spec *v1alpha1.RdsSpec
	// object is the Rds object's name, which the user Secrets' names start with.
	object string
	// rec is status.databasesAndUsers; readySet says DatabasesReady is set already.
	rec      *v1alpha1.DatabasesStatus
	readySet bool
	// instStatus is the instance's status in OTC.
	instStatus string
	// host, port and rootPassword are the connection's; host is "" without one.
	host         string
	port         int
	rootPassword secret.Value
	// verified says the session is TLS with a server verified with --db-ca-file (dbusers.VerifyCA):
	// a MySQL instance OTC reports SSL on for, a PostgreSQL one whenever the CA is configured.
	verified bool
	// related holds the Secrets the users' passwordsecretref name; secrets the observed children.
	related map[string]*corev1.Secret
	secrets map[string]*corev1.Secret
	// fresh holds a generated password for each user the plan asked one for (generate), by the
	// user's index; nil until generated.
	fresh map[int]secret.Value
	now   metav1.Time
	// driftCheck is how often the state is applied again although nothing changed.
	driftCheck time.Duration
	// answer is what the apply answered; nil until it was made.
	answer *applyAnswer
}

// applyAnswer is the answer of an apply (DatabasesConfig.Apply).
type applyAnswer struct {
	res dbusers.Result
	err error
}

// userAccount is a user Secret to render: its name, the user it is for and the password it holds.
type userAccount struct {
	secret   string
	user     v1alpha1.User
	password secret.Value
}

// databasesPlan is the decision of the databases step. A plan that asks for something (generate,
// apply) is made again with it; only a plan without them is applied.
type databasesPlan struct {
	// ready is the DatabasesReady outcome; nil keeps the condition as it is, unless dropReady
	// removes it.
	ready     *outcome
	dropReady bool
	// record is status.databasesAndUsers as the step leaves it.
	record *v1alpha1.DatabasesStatus
	// accounts are the user Secrets to render, in spec order. children() keeps the observed
	// Secrets of the others.
	accounts []userAccount
	// generate lists the users (by index) whose password is generated and not stored yet: the
	// step generates them and plans again.
	generate []int
	// apply is the desired state to apply; the plan is made again with the answer.
	apply *dbusers.Desired
	// within asks to be called again within that long (the next attempt after an unreachable
	// server), if positive.
	within time.Duration
	logs   []logLine
}

// planDatabases decides the databases step: whether there is anything to apply, whether it can be
// applied now (MySQL, valid users, the instance ACTIVE with an endpoint, every password known and
// stored), and whether it must be (the desired state differs from the one last applied, or the
// drift check is due), and what DatabasesReady says. It calls nothing.
func planDatabases(in databasesInput) databasesPlan {
	rec, spec := in.rec, in.spec
	p := databasesPlan{record: rec}
	if len(spec.Databases) == 0 && len(spec.Users) == 0 &&
		(rec == nil || (len(rec.Users) == 0 && (!spec.Prunedatabases || len(rec.Databases) == 0))) {
		// Nothing declared, and nothing left to drop. The record keeps the databases created
		// (prunedatabases may be set later) but forgets the fingerprint, so that declaring the
		// same state again applies it again.
		p.record = forgetApplied(rec)
		p.dropReady = true
		return p
	}
	layer := sqlLayers[spec.Datastoretype]
	if layer == nil {
		p.ready = ptr.To(databasesNotReady(ReasonEngineNotSupported, notSupported(spec.Datastoretype), waitsForUser))
		return p
	}
	if problems := validateUsers(spec); len(problems) > 0 {
		// Nothing is generated, stored or executed for a spec whose databases or users are invalid.
		p.ready = ptr.To(databasesNotReady(ReasonInvalidSpec, joinSentences(problems), waitsForUser))
		return p
	}
	if in.instStatus != cloud.StatusActive || in.host == "" || in.port == 0 {
		// The condition keeps what the last apply said; user Secrets are echoed by children().
		if !in.readySet {
			p.ready = ptr.To(databasesNotReady(ReasonWaitingForInstance, "The databases and users are applied once the instance is ACTIVE.", settled))
		}
		return p
	}

	passwords, ready := userPasswords(in, &p)
	if len(p.generate) > 0 || ready != nil {
		p.ready = ready
		return p
	}
	d, _ := desiredDatabases(layer, spec, func(i int) secret.Value { return passwords[i] }) // validated
	// The digests in status are keyed with the root password, which readers of status lack.
	d.DigestKey = in.rootPassword
	fingerprint := dbusers.Fingerprint(d)
	if rec != nil && rec.Fingerprint == fingerprint && rec.LastApplied != nil && in.now.Sub(rec.LastApplied.Time) < in.driftCheck {
		p.ready = ptr.To(databasesApplied())
		return p
	}
	if in.answer == nil {
		var u *v1alpha1.DatabasesUnreachable
		if rec != nil {
			u = rec.Unreachable
		}
		if next, held := nextAttempt(u, fingerprint, in.now.Time); held {
			// The condition keeps what the failed attempt said.
			if !in.readySet {
				p.ready = ptr.To(databasesOutcome(dbusers.ErrUnreachable, next))
			}
			p.within = next.Sub(in.now.Time)
			return p
		}
		p.apply = &d
		return p
	}

	res, err := in.answer.res, in.answer.err
	if len(res.Changes) > 0 {
		p.logs = append(p.logs, logLine{slog.LevelInfo, "applied databases and users", []any{"changes", res.Changes}})
	}
	next := databasesRecord(in.object, res.Managed)
	if rec != nil {
		next.Fingerprint, next.LastApplied = rec.Fingerprint, rec.LastApplied
	}
	if err == nil {
		next.Fingerprint, next.LastApplied = fingerprint, in.now.DeepCopy()
	}
	p.record = next
	if err != nil {
		p.logs = append(p.logs, logLine{slog.LevelWarn, "applying databases and users failed", []any{"error", err.Error()}})
		var retryAt time.Time
		if unreachable(err) {
			attempts := 1
			if rec != nil && rec.Unreachable != nil && rec.Unreachable.Fingerprint == fingerprint && !rec.Unreachable.LastAttempt.After(in.now.Time) {
				attempts = min(rec.Unreachable.Attempts, 100) + 1 // bounded: a forged count cannot overflow
			}
			next.Unreachable = &v1alpha1.DatabasesUnreachable{Fingerprint: fingerprint, Attempts: attempts, LastAttempt: in.now}
			retryAt = in.now.Add(unreachableBackoff(attempts))
			p.within = retryAt.Sub(in.now.Time)
		}
		p.ready = ptr.To(databasesOutcome(err, retryAt))
		return p
	}
	p.ready = ptr.To(databasesApplied())
	return p
}

// databasesStep is the databases step as the loop runs it (loop.go): it plans, has the passwords
// the plan asks for generated and plans again, has the desired state applied over SQL when the plan
// says so and plans on the answer, and renders the plan: status, DatabasesReady and the user
// Secrets. Both are actions outside the cloud (sqlAction, actSQL). It runs while the instance is
// ACTIVE and never changes the cloud, so it never stops the call; Synced stays about the instance.
type databasesStep struct {
	in databasesInput
	// parent is the object the user Secrets belong to; conn the connection they name.
	parent *v1alpha1.Rds
	conn   *connection
	p      databasesPlan
}

func newDatabasesStep(c *call, inst *cloud.Instance) *databasesStep {
	s := &databasesStep{parent: c.parent, conn: c.conn, in: databasesInput{
		spec: c.spec, object: c.parent.Name, rec: c.st.DatabasesAndUsers,
		readySet:   c.out.has(v1alpha1.ConditionDatabasesReady),
		instStatus: inst.Status, related: c.req.Related, secrets: c.req.Secrets,
		now: c.now, driftCheck: c.r.cfg.Databases.DriftCheck,
	}}
	if c.conn != nil {
		s.in.host, s.in.port, s.in.rootPassword = c.conn.host, c.conn.port, c.conn.password
	}
	// NOTE: spec.ssl is MySQL's (OTC switches SSL for MySQL alone). A PostgreSQL instance offers
	// TLS whatever it says; without the CA pgusers asks for it unverified (sslmode=prefer).
	switch c.spec.Datastoretype {
	case v1alpha1.EngineMySQL:
		s.in.verified = inst.SSL != nil && *inst.SSL
	case v1alpha1.EnginePostgreSQL:
		s.in.verified = c.r.cfg.Databases.CA != nil
	}
	return s
}

func (s *databasesStep) plan() head {
	s.p = planDatabases(s.in)
	p := s.p
	h := head{logs: p.logs, within: p.within}
	if p.dropReady {
		h.tells = dropDatabasesReady
	}
	h.tells = append(h.tells, told(p.ready)...)
	switch spec := s.in.spec; {
	case len(p.generate) > 0:
		a := sqlAction{kind: sqlGeneratePasswords, seeds: map[int]string{}}
		for _, i := range p.generate {
			u := spec.Users[i]
			a.seeds[i] = "user\x00" + u.Name + "\x00" + sqlLayers[spec.Datastoretype].NormalizeHost(u.Host)
		}
		h.sql = &a
	case p.apply != nil:
		h.sql = &sqlAction{kind: sqlApply, engine: spec.Datastoretype, desired: *p.apply, managed: managedState(s.in.rec),
			conn: dbusers.Conn{Host: s.in.host, Port: s.in.port, User: rootUser(spec.Datastoretype), Password: s.in.rootPassword},
			tls:  s.in.verified}
	}
	return h
}

func (s *databasesStep) saw(need, seen) {} // it reads nothing of the cloud

func (s *databasesStep) answered(res acted, _ error) {
	if res.passwords != nil {
		s.in.fresh = res.passwords
	}
	if res.applied != nil {
		s.in.answer = res.applied
	}
}

func (s *databasesStep) render(a *answer) {
	a.st.DatabasesAndUsers = s.p.record
	for _, acc := range s.p.accounts {
		a.extra = append(a.extra, userSecret(s.parent, *s.conn, acc.secret, acc.user, acc.password))
	}
}

// forgetApplied is a copy of rec without when it was applied last.
func forgetApplied(rec *v1alpha1.DatabasesStatus) *v1alpha1.DatabasesStatus {
	if rec == nil {
		return nil
	}
	rec = rec.DeepCopy()
	rec.Fingerprint, rec.LastApplied, rec.Unreachable = "", nil, nil
	return rec
}

// databasesApplied is DatabasesReady once the server matches the spec.
func databasesApplied() outcome {
	return outcome{cond: v1alpha1.ConditionDatabasesReady, status: metav1.ConditionTrue, reason: ReasonApplied,
		message: "The databases and users match the spec.", class: settled}
}

// databasesNotReady is a DatabasesReady=False outcome.
func databasesNotReady(reason, message string, cl class) outcome {
	return outcome{cond: v1alpha1.ConditionDatabasesReady, status: metav1.ConditionFalse, reason: reason, message: message, class: cl}
}

// unreachable says that a failed apply did not reach the server (or failed unexpectedly): its
// retry waits for the backoff.
func unreachable(err error) bool {
	return !errors.Is(err, dbusers.ErrInvalid) && !errors.Is(err, dbusers.ErrUnauthorized) &&
		(errors.Is(err, dbusers.ErrUnreachable) || !errors.Is(err, dbusers.ErrRefused))
}

// databasesOutcome sorts a failed apply into a stable DatabasesReady and a retry, never later
// than an earlier step of the call asked for; an unreachable server is tried again at next, which
// the sentence names. Messages from the server are kept only for refused statements: they depend
// only on the statement (dbusers never lets a password into them).
func databasesOutcome(err error, next time.Time) outcome {
	at := next.UTC().Format(time.RFC3339)
	switch {
	case errors.Is(err, dbusers.ErrInvalid):
		return databasesNotReady(ReasonInvalidSpec, "The databases and users cannot be applied: "+err.Error()+".", waitsForUser)
	case errors.Is(err, dbusers.ErrUnauthorized):
		return databasesNotReady(ReasonDatabaseLoginRefused,
			"The database server refused the root login with the password of the connection Secret; the apply will be retried.", settled)
	case errors.Is(err, dbusers.ErrUntrusted):
		return databasesNotReady(ReasonDatabaseCertificateUntrusted,
			"The database server did not prove that it holds a certificate signed by a CA of the controller's --db-ca-file, or it offers no TLS, and nothing was sent to it: "+
				"either --db-ca-file does not hold OTC's CA bundle, or something other than the instance answers at its address; the next attempt is at "+at+".", settled)
	case errors.Is(err, dbusers.ErrUnsafeLogin):
		return databasesNotReady(ReasonDatabaseLoginUnsafe,
			"The database server asked for the root password in a form it could read (in clear text, or encrypted with a key it sent itself), or for none, and the password was not sent to it. "+
				"A MySQL server without SSL does so when it must check the password in full (caching_sha2_password): turn ssl on; no other OTC server does. The next attempt is at "+at+".", settled)
	case errors.Is(err, dbusers.ErrUnreachable):
		return databasesNotReady(ReasonDatabaseUnreachable,
			"The database server could not be reached in time; the next attempt is at "+at+".", settled)
	case errors.Is(err, pgusers.ErrOwnsObjects):
		// Before ErrRefused, which it is too: the user, not the server, must act.
		return databasesNotReady(ReasonUserOwnsObjects,
			"A user removed from the spec still owns objects and was not dropped ("+err.Error()+"); the apply will be retried.", settled)
	case errors.Is(err, dbusers.ErrRefused):
		return databasesNotReady(ReasonStatementRefused,
			"The database server refused a change ("+err.Error()+"); the apply will be retried.", settled)
	}
	return databasesNotReady(ReasonDatabaseUnreachable,
		"Applying the databases and users failed unexpectedly; the next attempt is at "+at+".", settled)
}

// userPasswords finds each spec user's password and lists the user Secrets to render in p (every
// user with a password). It returns the DatabasesReady outcome when a password cannot be used yet:
// a referenced Secret is missing, or a generated password is on its way to its Secret. A user
// whose password is generated and not stored yet, and has no fresh one, is listed in p.generate.
//
// NOTE: a generated password is used in SQL only once its Secret is observed in a later call:
// one that lived only in this call's memory would be lost with a lost response, leaving an
// account nobody knows the password of.
func userPasswords(in databasesInput, p *databasesPlan) (passwords []secret.Value, wait *outcome) {
	var missing []string
	storing := false
	for i, u := range in.spec.Users {
		name := UserSecretName(in.object, u.Name, u.Host)
		var pw secret.Value
		switch ref := u.Passwordsecretref; {
		case u.Password != "":
			pw = secret.New(u.Password)
		case ref != nil:
			key := ref.Key
			if key == "" {
				key = KeyPassword
			}
			s := in.related[ref.Name]
			switch {
			case s == nil:
				missing = append(missing, fmt.Sprintf("The Secret %q named in users[%d].passwordsecretref was not found.", ref.Name, i))
			case len(s.Data[key]) == 0:
				missing = append(missing, fmt.Sprintf("The Secret %q named in users[%d].passwordsecretref has no key %q.", ref.Name, i, key))
			default:
				pw = secret.New(string(s.Data[key]))
			}
		default:
			var stored bool
			if pw, stored = observedPassword(in.secrets[name]); !stored {
				fresh, ok := in.fresh[i]
				if !ok {
					p.generate = append(p.generate, i)
				}
				pw, storing = fresh, true
			}
		}
		passwords = append(passwords, pw)
		if !pw.Empty() {
			p.accounts = append(p.accounts, userAccount{secret: name, user: u, password: pw})
		}
	}
	switch {
	case len(p.generate) > 0:
		p.accounts = nil
		return nil, nil
	case len(missing) > 0:
		return nil, ptr.To(databasesNotReady(ReasonUserPasswordSecretMissing, joinSentences(missing), retry))
	case storing:
		return nil, ptr.To(databasesNotReady(ReasonStoringUserPasswords,
			"Storing generated user passwords in their Secrets before setting them.", storingSecret))
	}
	return passwords, nil
}

// userSecret renders the child Secret with one account's connection details. database is the
// first database the user is granted something on, if any.
func userSecret(parent *v1alpha1.Rds, conn connection, name string, u v1alpha1.User, pw secret.Value) *corev1.Secret {
	data := map[string][]byte{
		KeyHost:     []byte(conn.host),
		KeyPort:     []byte(strconv.Itoa(conn.port)),
		KeyUsername: []byte(u.Name),
		KeyPassword: []byte(pw.Reveal()),
	}
	db := ""
	if layer := sqlLayers[parent.Spec.Datastoretype]; layer != nil {
		if db = userDatabase(layer, u); db != "" {
			data[KeyDatabase] = []byte(db)
		}
	}
	dsn, uri := connectionStrings(parent.Spec.Datastoretype, conn.host, conn.port, u.Name, pw.Reveal(), db)
	data[KeyDSN], data[KeyURI] = []byte(dsn), []byte(uri)
	if conn.readers != "" { // replicas.go: OTC replicates the accounts to the read replicas
		data[KeyReaderHosts] = []byte(conn.readers)
	}
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: parent.Namespace, Labels: childLabels(parent)},
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}
}

// userDatabase is the database a user's Secret names: the first one (in spec order) of its
// GRANT strings, else of its structured grants.
func userDatabase(layer SQLAccounts, u v1alpha1.User) string {
	for _, stmt := range u.Privileges {
		if g, err := layer.ParseGrant(stmt, u.Name, u.Host); err == nil {
			return g.Database
		}
	}
	for _, g := range u.Grants {
		return g.Database
	}
	return ""
}

// keepUserSecrets appends the observed Secrets of the spec's users and of the accounts still
// managed (not dropped yet) that this call did not render: a child left out is deleted, and a
// generated password with it. Called by children(), so finalize keeps them too.
func keepUserSecrets(req *hook.Request, st *v1alpha1.RdsStatus, children []any) []any {
	var names []string
	for _, u := range req.Parent.Spec.Users {
		names = append(names, UserSecretName(req.Parent.Name, u.Name, u.Host))
	}
	if rec := st.DatabasesAndUsers; rec != nil {
		for _, u := range rec.Users {
			names = append(names, UserSecretName(req.Parent.Name, u.Name, u.Host))
		}
	}
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		observed := req.Secrets[name]
		if observed == nil || slices.ContainsFunc(children, func(ch any) bool {
			s, ok := ch.(*corev1.Secret)
			return ok && s.Name == name
		}) {
			continue
		}
		children = append(children, echoSecret(&req.Parent, observed))
	}
	return children
}

// managedState is the remembered state in dbusers' terms.
func managedState(rec *v1alpha1.DatabasesStatus) dbusers.ManagedState {
	var m dbusers.ManagedState
	if rec == nil {
		return m
	}
	m.Databases = slices.Clone(rec.Databases)
	for _, u := range rec.Users {
		m.Users = append(m.Users, dbusers.ManagedUser{Name: u.Name, Host: u.Host, PasswordDigest: u.PasswordDigest})
	}
	return m
}

// databasesRecord is the status record of a managed state (without fingerprint and time).
func databasesRecord(object string, m dbusers.ManagedState) *v1alpha1.DatabasesStatus {
	rec := &v1alpha1.DatabasesStatus{Databases: slices.Clone(m.Databases)}
	for _, u := range m.Users {
		rec.Users = append(rec.Users, v1alpha1.ManagedDatabaseUser{
			Name: u.Name, Host: u.Host, Secret: UserSecretName(object, u.Name, u.Host), PasswordDigest: u.PasswordDigest,
		})
	}
	return rec
}

// userSecretRules names the Secrets of the users' passwordsecretref for the customize hook.
func userSecretRules(req *hook.CustomizeRequest) []hook.ResourceRule {
	var names []string
	for _, u := range req.Parent.Spec.Users {
		if ref := u.Passwordsecretref; ref != nil && ref.Name != "" {
			names = append(names, ref.Name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	slices.Sort(names)
	return []hook.ResourceRule{{APIVersion: "v1", Resource: "secrets", Namespace: req.Parent.Namespace, Names: slices.Compact(names)}}
}
