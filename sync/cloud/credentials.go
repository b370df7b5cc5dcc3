package cloud

import (
	"context"
	"errors"
	"log/slog"
)

// ErrCredentialsInvalid marks a credential set that Clouds refuses without asking OTC: incomplete,
// or naming what a namespace may not use (OS_CLOUD, an identity endpoint outside the allowlist).
// Its text names variables, never their values.
var ErrCredentialsInvalid = errors.New("invalid OTC credentials")

// Credentials is an OTC login read from a Secret in an Rds object's namespace: the Secret's keys as
// OS_* variables (OS_USERNAME, OS_PASSWORD, OS_PROJECT_NAME, ...). Its LogValue shows where it came
// from and never a value.
type Credentials struct {
	// Namespace and Secret say where the login was read, for messages and logs; they are not part
	// of the login.
	Namespace string
	Secret    string
	// Env holds the login, keyed by OS_* variable name.
	Env map[string]string
}

// LogValue implements slog.LogValuer: the source, never the values.
func (c Credentials) LogValue() slog.Value {
	return slog.GroupValue(slog.String("namespace", c.Namespace), slog.String("secret", c.Secret))
}

// ProjectNamer is a client that knows the OTC project its login reaches (the project id): an
// instance lives in one project, so a login that now reaches another one cannot see it.
type ProjectNamer interface {
	Project() string
}

// ProjectOf is the project c's login reaches, or "" if c does not say.
func ProjectOf(c Core) string {
	if p, ok := c.(ProjectNamer); ok {
		return p.Project()
	}
	return ""
}

// Clouds hands out the client for a credential set: one client per set, logged in once per token
// lifetime and shared by every call that uses the same set. nil Credentials mean the controller's
// own login.
type Clouds interface {
	For(ctx context.Context, creds *Credentials) (Cloud, error)
}
