package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// ConditionDatabasesReady is True when the instance's databases and users match the spec. It is
// present only when the spec declares databases or users (or the controller still manages some).
const ConditionDatabasesReady = "DatabasesReady"

// DatabaseGrant is the structured form of a GRANT. MySQL: privileges on one database (Table
// empty: all its tables) or on one table of it. PostgreSQL: on the database itself, on a schema
// of it (Schema), on one table of a schema (Table; schema public when Schema is empty), or on
// every table of a schema (Table "*").
type DatabaseGrant struct {
	Database string `json:"database"`
	// Schema is PostgreSQL's; MySQL refuses it.
	Schema string `json:"schema,omitempty"`
	Table  string `json:"table,omitempty"`
	// Privileges such as SELECT, INSERT or ALL.
	Privileges []string `json:"privileges"`
}

// DatabasesStatus is what the hook last applied to the instance's databases and users. It holds
// no passwords: only digests of them, keyed with the root password.
type DatabasesStatus struct {
	// Fingerprint identifies the desired state last applied successfully; a spec (or password)
	// change changes it, and the next call applies again.
	Fingerprint string `json:"fingerprint,omitempty"`
	// LastApplied is when the state was last applied or checked for drift. It changes only when
	// the hook actually connected, never on every call.
	LastApplied *metav1.Time `json:"lastApplied,omitempty"`
	// Databases the controller created (only these may ever be pruned).
	Databases []string `json:"databases,omitempty"`
	// Users the controller created or adopted (only these are dropped when they leave the spec).
	Users []ManagedDatabaseUser `json:"users,omitempty"`
	// Unreachable remembers the attempts that found the server unreachable, so that the next one
	// waits (an exponential backoff); absent once an attempt reached the server.
	Unreachable *DatabasesUnreachable `json:"unreachable,omitempty"`
}

// DatabasesUnreachable is the backoff of attempts that did not reach the database server.
type DatabasesUnreachable struct {
	// Fingerprint identifies the desired state attempted: another one is tried at once.
	Fingerprint string `json:"fingerprint,omitempty"`
	// Attempts is how many attempts in a row did not reach the server.
	Attempts int `json:"attempts"`
	// LastAttempt is when the last of them was made.
	LastAttempt metav1.Time `json:"lastAttempt"`
}

// ManagedDatabaseUser is an account the controller manages.
type ManagedDatabaseUser struct {
	Name string `json:"name"`
	Host string `json:"host"`
	// Secret is the child Secret with the account's connection details.
	Secret string `json:"secret,omitempty"`
	// PasswordDigest is an HMAC-SHA256 of the password last set keyed with the root password, never the password.
	PasswordDigest string `json:"passwordDigest,omitempty"`
}

// DeepCopy returns a copy that shares no memory with s.
func (s *DatabasesStatus) DeepCopy() *DatabasesStatus {
	if s == nil {
		return nil
	}
	out := *s
	if s.LastApplied != nil {
		t := *s.LastApplied
		out.LastApplied = &t
	}
	out.Databases = append([]string(nil), s.Databases...)
	out.Users = append([]ManagedDatabaseUser(nil), s.Users...)
	if s.Unreachable != nil {
		u := *s.Unreachable
		out.Unreachable = &u
	}
	return &out
}
