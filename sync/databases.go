package sync

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/dbusers"
	"github.com/mcsps/rds-lambda-controller/sync/hook"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// DatabasesConfig configures the databases step.
type DatabasesConfig struct {
	// DriftCheck is how often the databases and users are applied again although the spec did
	// not change, to repair changes made on the server behind the controller's back. Default 1h.
	DriftCheck time.Duration
	// Timeout bounds one whole apply (connecting and every statement). Default: Config.CallTimeout.
	Timeout time.Duration
	// Apply makes the server match the desired state. Default dbusers.Apply; tests wrap it.
	Apply func(ctx context.Context, conn dbusers.Conn, d dbusers.Desired, managed dbusers.ManagedState) (dbusers.Result, error)
}

func (d DatabasesConfig) withDefaults(callTimeout time.Duration) DatabasesConfig {
	if d.DriftCheck <= 0 {
		d.DriftCheck = time.Hour
	}
	if d.Timeout <= 0 {
		d.Timeout = callTimeout
	}
	if d.Apply == nil {
		d.Apply = dbusers.Apply
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
)

// Keys of a user's Secret besides host, port, username and password.
const KeyDatabase = "database"

// databases applies the spec's databases, users and grants over SQL while the instance is ACTIVE,
// and only when the desired state differs from the one last applied or the drift check is due.
// It never changes the cloud, so it never stops the call. Its outcome is the DatabasesReady
// condition; Synced stays about the instance.
func (c *call) databases(ctx context.Context, inst *cloud.Instance) (stop bool, err error) {
	rec := c.st.DatabasesAndUsers
	if len(c.spec.Databases) == 0 && len(c.spec.Users) == 0 &&
		(rec == nil || (len(rec.Users) == 0 && (!c.spec.Prunedatabases || len(rec.Databases) == 0))) {
		// Nothing declared, and nothing left to drop. The record keeps the databases created
		// (prunedatabases may be set later) but forgets the fingerprint, so that declaring the
		// same state again applies it again.
		c.reapplyDatabases()
		removeCondition(&c.st, v1alpha1.ConditionDatabasesReady)
		return false, nil
	}
	if c.spec.Datastoretype != v1alpha1.EngineMySQL {
		c.setDatabasesReady(metav1.ConditionFalse, ReasonEngineNotSupported,
			fmt.Sprintf("Databases and users are not supported yet for %s, only for MySQL; nothing was applied.", c.spec.Datastoretype))
		return false, nil
	}
	if problems := validateUsers(c.spec); len(problems) > 0 {
		// Nothing is generated, stored or executed for a spec whose databases or users are invalid.
		c.setDatabasesReady(metav1.ConditionFalse, ReasonInvalidSpec, joinSentences(problems))
		return false, nil
	}
	if inst.Status != cloud.StatusActive || c.conn == nil || c.conn.host == "" || c.conn.port == 0 {
		// The condition keeps what the last apply said; user Secrets are echoed by children().
		if getCondition(&c.st, v1alpha1.ConditionDatabasesReady) == nil {
			c.setDatabasesReady(metav1.ConditionFalse, ReasonWaitingForInstance, "The databases and users are applied once the instance is ACTIVE.")
		}
		return false, nil
	}

	passwords, ok, err := c.userPasswords()
	if err != nil || !ok {
		return false, err
	}
	d, _ := desiredDatabases(c.spec, func(i int) secret.Value { return passwords[i] }) // validated
	// The digests in status are keyed with the root password, which readers of status lack.
	d.DigestKey = c.conn.password
	fingerprint := dbusers.Fingerprint(d)
	if rec != nil && rec.Fingerprint == fingerprint && rec.LastApplied != nil && c.now.Sub(rec.LastApplied.Time) < c.r.cfg.Databases.DriftCheck {
		c.setDatabasesReady(metav1.ConditionTrue, ReasonApplied, "The databases and users match the spec.")
		return false, nil
	}

	conn := dbusers.Conn{
		Host: c.conn.host, Port: c.conn.port, User: rootUser(c.spec.Datastoretype), Password: c.conn.password,
		Timeout: c.r.cfg.CallTimeout,
	}
	actx, cancel := context.WithTimeout(ctx, c.r.cfg.Databases.Timeout)
	defer cancel()
	res, err := c.r.cfg.Databases.Apply(actx, conn, d, managedState(rec))
	if len(res.Changes) > 0 {
		c.log.Info("applied databases and users", "changes", res.Changes)
	}
	next := c.databasesRecord(res.Managed)
	if rec != nil {
		next.Fingerprint, next.LastApplied = rec.Fingerprint, rec.LastApplied
	}
	if err == nil {
		next.Fingerprint, next.LastApplied = fingerprint, c.now.DeepCopy()
	}
	c.st.DatabasesAndUsers = next
	if err != nil {
		c.databasesError(err)
		return false, nil
	}
	c.setDatabasesReady(metav1.ConditionTrue, ReasonApplied, "The databases and users match the spec.")
	return false, nil
}

// reapplyDatabases forgets when the databases and users were applied last, keeping what was
// created, so that the next call that can apply them does.
func (c *call) reapplyDatabases() {
	if rec := c.st.DatabasesAndUsers; rec != nil {
		rec.Fingerprint, rec.LastApplied = "", nil
	}
}

// databasesError sorts a failed apply into a stable condition and a retry, never later than an
// earlier step of the call asked for. Messages from the server are kept only for refused
// statements: they depend only on the statement (dbusers never lets a password into them).
func (c *call) databasesError(err error) {
	c.log.Warn("applying databases and users failed", "error", err.Error())
	switch {
	case errors.Is(err, dbusers.ErrInvalid):
		c.setDatabasesReady(metav1.ConditionFalse, ReasonInvalidSpec, "The databases and users cannot be applied: "+err.Error()+".")
	case errors.Is(err, dbusers.ErrUnauthorized):
		c.setDatabasesReady(metav1.ConditionFalse, ReasonDatabaseLoginRefused,
			"The database server refused the root login with the password of the connection Secret; the apply will be retried.")
	case errors.Is(err, dbusers.ErrUnreachable):
		c.setDatabasesReady(metav1.ConditionFalse, ReasonDatabaseUnreachable,
			"The database server could not be reached in time; the apply will be retried.")
		c.askClass(retry)
	case errors.Is(err, dbusers.ErrRefused):
		c.setDatabasesReady(metav1.ConditionFalse, ReasonStatementRefused,
			"The database server refused a change ("+err.Error()+"); the apply will be retried.")
	default:
		c.setDatabasesReady(metav1.ConditionFalse, ReasonDatabaseUnreachable,
			"Applying the databases and users failed unexpectedly; the apply will be retried.")
		c.askClass(retry)
	}
}

// userPasswords returns each spec user's password, and renders every user's Secret into
// c.extra. ok is false when a password cannot be used yet: a referenced Secret is missing, or a
// generated password is on its way to its Secret.
//
// NOTE: a generated password is used in SQL only once its Secret is observed in a later call:
// one that lived only in this call's memory would be lost with a lost response, leaving an
// account nobody knows the password of.
func (c *call) userPasswords() (passwords []secret.Value, ok bool, err error) {
	var missing []string
	storing := false
	for i, u := range c.spec.Users {
		name := UserSecretName(c.parent.Name, u.Name, u.Host)
		var pw secret.Value
		switch ref := u.Passwordsecretref; {
		case u.Password != "":
			pw = secret.New(u.Password)
		case ref != nil:
			key := ref.Key
			if key == "" {
				key = KeyPassword
			}
			s := c.req.Related[ref.Name]
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
			if pw, stored = observedPassword(c.req.Secrets[name]); !stored {
				gen, err := c.generatePassword("user\x00" + u.Name + "\x00" + dbusers.NormalizeHost(u.Host))
				if err != nil {
					return nil, false, err
				}
				pw, storing = secret.New(gen), true
			}
		}
		passwords = append(passwords, pw)
		if !pw.Empty() {
			c.extra = append(c.extra, c.userSecret(name, u, pw))
		}
	}
	switch {
	case len(missing) > 0:
		c.setDatabasesReady(metav1.ConditionFalse, ReasonUserPasswordSecretMissing, joinSentences(missing))
		c.askClass(retry)
		return nil, false, nil
	case storing:
		c.setDatabasesReady(metav1.ConditionFalse, ReasonStoringUserPasswords,
			"Storing generated user passwords in their Secrets before setting them.")
		c.askClass(storingSecret)
		return nil, false, nil
	}
	return passwords, true, nil
}

// userSecret renders the child Secret with one account's connection details. database is the
// first database the user is granted something on, if any.
func (c *call) userSecret(name string, u v1alpha1.User, pw secret.Value) *corev1.Secret {
	data := map[string][]byte{
		KeyHost:     []byte(c.conn.host),
		KeyPort:     []byte(strconv.Itoa(c.conn.port)),
		KeyUsername: []byte(u.Name),
		KeyPassword: []byte(pw.Reveal()),
	}
	if db := userDatabase(u); db != "" {
		data[KeyDatabase] = []byte(db)
	}
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.parent.Namespace, Labels: childLabels(c.parent)},
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}
}

// userDatabase is the database a user's Secret names: the first one (in spec order) of its
// GRANT strings, else of its structured grants.
func userDatabase(u v1alpha1.User) string {
	for _, stmt := range u.Privileges {
		if g, err := dbusers.ParseGrant(stmt, u.Name, u.Host); err == nil {
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
func (c *call) keepUserSecrets(children []any) []any {
	var names []string
	for _, u := range c.spec.Users {
		names = append(names, UserSecretName(c.parent.Name, u.Name, u.Host))
	}
	if rec := c.st.DatabasesAndUsers; rec != nil {
		for _, u := range rec.Users {
			names = append(names, UserSecretName(c.parent.Name, u.Name, u.Host))
		}
	}
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		observed := c.req.Secrets[name]
		if observed == nil || slices.ContainsFunc(children, func(ch any) bool {
			s, ok := ch.(*corev1.Secret)
			return ok && s.Name == name
		}) {
			continue
		}
		children = append(children, echoSecret(c.parent, observed))
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
func (c *call) databasesRecord(m dbusers.ManagedState) *v1alpha1.DatabasesStatus {
	rec := &v1alpha1.DatabasesStatus{Databases: slices.Clone(m.Databases)}
	for _, u := range m.Users {
		rec.Users = append(rec.Users, v1alpha1.ManagedDatabaseUser{
			Name: u.Name, Host: u.Host, Secret: UserSecretName(c.parent.Name, u.Name, u.Host), PasswordDigest: u.PasswordDigest,
		})
	}
	return rec
}

func (c *call) setDatabasesReady(status metav1.ConditionStatus, reason, message string) {
	c.setCondition(v1alpha1.ConditionDatabasesReady, status, reason, message)
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

// removeCondition drops the condition of type typ, if any.
func removeCondition(st *v1alpha1.RdsStatus, typ string) {
	st.Conditions = slices.DeleteFunc(st.Conditions, func(c v1alpha1.Condition) bool { return c.Type == typ })
}
