package dbusers

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors sort failures by what the caller should do about them. Test with errors.Is.
var (
	// ErrInvalid marks a spec (or a remembered ManagedState) that can never be applied: the user
	// must change it. Nothing was executed.
	ErrInvalid = errors.New("invalid database spec")
	// ErrUnreachable marks a server that could not be reached in time: retry later.
	ErrUnreachable = errors.New("database server unreachable")
	// ErrUnauthorized marks a login the server refused (wrong admin user or password).
	ErrUnauthorized = errors.New("database login refused")
	// ErrRefused marks a statement the server refused (a missing table for a table grant, a
	// password the server's policy rejects, missing rights of the admin user, ...).
	ErrRefused = errors.New("statement refused by the database server")
	// ErrUntrusted marks a TLS session whose server certificate does not chain to a trusted CA
	// (VerifyCA), or whose server did not prove it holds the certificate's key, or (PostgreSQL)
	// that the server refused (UntrustedServer): nothing was sent to the server.
	ErrUntrusted = errors.New("database server certificate not trusted")
	// ErrUnsafeLogin marks a server that asked for the admin's password in a form it could read
	// (in clear text; MySQL without TLS: encrypted with an RSA key the server sent, login.go), or
	// let the admin in without one (PostgreSQL's require_auth): the password was not sent.
	ErrUnsafeLogin = errors.New("database server asked for an unsafe login")
)

// ValidationError lists every problem found in a spec, in a stable order.
type ValidationError struct {
	Problems []string
}

func (e *ValidationError) Error() string {
	return ErrInvalid.Error() + ": " + strings.Join(e.Problems, "; ")
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

// GrantError is a GRANT statement or a structured Grant that is refused. Its message is stable:
// it depends only on the input.
type GrantError struct {
	Detail string
}

func (e *GrantError) Error() string { return "invalid grant: " + e.Detail }

// Is makes errors.Is(err, ErrInvalid) true.
func (e *GrantError) Is(target error) bool { return target == ErrInvalid }

func grantErrorf(format string, args ...any) error {
	return &GrantError{Detail: fmt.Sprintf(format, args...)}
}

// StatementError is one change the server refused. It never carries a password: for statements
// that hold one, only the error number, the SQLSTATE and a fixed text are kept.
type StatementError struct {
	// Change describes the change that failed, e.g. "grant SELECT on shop.orders to 'u'@'%'".
	Change string
	// Number is the server's error number, e.g. 1146 (MySQL).
	Number uint16
	// Code is the server's SQLSTATE instead of a number, e.g. 42P01 (PostgreSQL); empty for MySQL.
	Code string
	// Message is the server's message, or a fixed text for statements that carry a password.
	Message string
}

func (e *StatementError) Error() string {
	if e.Code != "" {
		return fmt.Sprintf("%s: server error %s: %s", e.Change, e.Code, e.Message)
	}
	return fmt.Sprintf("%s: server error %d: %s", e.Change, e.Number, e.Message)
}

// Is makes errors.Is(err, ErrRefused) true.
func (e *StatementError) Is(target error) bool { return target == ErrRefused }

// Errors is the failures of one Apply, in the order they happened. Its message is one line.
type Errors []error

func (es Errors) Error() string {
	msgs := make([]string, len(es))
	for i, err := range es {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "; ")
}

// Unwrap lets errors.Is and errors.As look at each failure.
func (es Errors) Unwrap() []error { return es }

// join returns nil, the only error, or all of them as Errors.
func join(errs []error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	default:
		return Errors(errs)
	}
}
