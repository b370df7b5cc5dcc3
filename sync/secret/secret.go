// Package secret holds credentials in a type that does not print, log or marshal its value.
package secret

import "log/slog"

const redacted = "REDACTED"

// Value is a credential. Its zero value is empty. Only Reveal returns the text.
type Value struct{ v string }

// New wraps s.
func New(s string) Value { return Value{v: s} }

// Reveal returns the credential. Call it only where the credential is handed to its consumer.
func (s Value) Reveal() string { return s.v }

// Empty reports whether no credential is held.
func (s Value) Empty() bool { return s.v == "" }

// String keeps the value out of fmt output.
func (s Value) String() string { return redacted }

// GoString keeps the value out of %#v output.
func (s Value) GoString() string { return redacted }

// LogValue keeps the value out of slog output.
func (s Value) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalJSON keeps the value out of JSON documents.
func (s Value) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }
