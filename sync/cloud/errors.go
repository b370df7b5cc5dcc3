package cloud

import (
	"errors"
	"fmt"
	"time"
)

// Kind sorts cloud errors by what the caller should do about them.
type Kind int

const (
	// KindUnknown is an error we cannot classify: retry with backoff.
	KindUnknown Kind = iota
	// KindNotFound: the thing does not exist.
	KindNotFound
	// KindBusy: the instance is doing something else or is in a state that refuses the operation;
	// try again later.
	KindBusy
	// KindInvalid: OTC refused the request's content; the user must change the spec.
	KindInvalid
	// KindConflict: the thing exists already (e.g. a duplicate name).
	KindConflict
	// KindThrottled: OTC asked us to slow down.
	KindThrottled
	// KindUnavailable: OTC did not answer in time or answered with a server error.
	KindUnavailable
	// KindUnauthorized: our credentials were refused.
	KindUnauthorized
)

var kindNames = map[Kind]string{
	KindUnknown:      "Unknown",
	KindNotFound:     "NotFound",
	KindBusy:         "Busy",
	KindInvalid:      "Invalid",
	KindConflict:     "Conflict",
	KindThrottled:    "Throttled",
	KindUnavailable:  "Unavailable",
	KindUnauthorized: "Unauthorized",
}

func (k Kind) String() string { return kindNames[k] }

// Error is a cloud error translated at the adapter's boundary. Its text is short and stable:
// the operation, the OTC error code and a one-line message, never URLs or raw bodies.
//
// The adapter owns OTC's error codes: it sorts each into a Kind and gives the codes it knows a
// Sentence of our own. Callers decide by Kind and show Explain or Refusal; they read Code only to
// log it. Whoever builds an Error by hand (a fake, a test) sets Sentence explicitly, as the
// adapter would: this package does not know the codes, so a coded Error without a Sentence reads
// as a code nobody knows.
type Error struct {
	Kind Kind
	// Op is our name of the operation, e.g. "CreateInstance".
	Op string
	// Code is OTC's error code, e.g. DBS.200019, when the answer had one.
	Code string
	// Sentence is the adapter's own words for Code, e.g. "the flavor does not exist" for DBS.200053:
	// short, stable and never OTC's text. It is empty for a code the adapter has no words for and
	// for an error without a code.
	Sentence string
	// Message is a one-line message: OTC's error_msg when the answer had an error code, else a
	// sentence of the adapter's own that depends only on the request and the HTTP status.
	Message string
	// Detail is the text of OTC's answer (or of the transport's error) that Message leaves out,
	// for logs only: it may change on every call (request ids), so it never goes into status and
	// Error leaves it out.
	Detail string
	// RetryAfter is how long OTC asked us to wait, for KindThrottled.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	s := e.Op + ": " + e.Kind.String()
	if e.Code != "" {
		s += " (" + e.Code + ")"
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Explain completes lead (e.g. "OTC refused the request") with what the adapter says about the
// error, in words that stay the same while the error does:
//
//   - a code with a Sentence: "<lead>: <sentence> (<code>)", the code being for support;
//   - a code without one: "<lead> (code <code>)", never OTC's message, whose wording is OTC's to
//     change and may hold request ids;
//   - no code: "<lead>: <message>", the message then being the adapter's own words (the adapter's
//     contract: text from an OTC answer comes only with OTC's code), or lead alone without one.
func (e *Error) Explain(lead string) string {
	switch {
	case e.Code == "" && e.Message != "":
		return lead + ": " + e.Message
	case e.Code == "":
		return lead
	case e.Sentence != "":
		return lead + ": " + e.Sentence + " (" + e.Code + ")"
	default:
		return lead + " (code " + e.Code + ")"
	}
}

// Refusal is the sentence a condition shows for a request OTC refused, e.g.
// "OTC refused the request: the flavor does not exist (DBS.200053)." (see Explain).
func (e *Error) Refusal() string {
	return e.Explain("OTC refused the request") + "."
}

// Is lets errors.Is(err, cloud.ErrNotFound) match any error of the same kind.
func (e *Error) Is(target error) bool {
	var t *Error
	if !errors.As(target, &t) {
		return false
	}
	return t.Op == "" && t.Code == "" && t.Kind == e.Kind
}

// Sentinels for errors.Is.
var (
	ErrNotFound     = &Error{Kind: KindNotFound}
	ErrBusy         = &Error{Kind: KindBusy}
	ErrInvalid      = &Error{Kind: KindInvalid}
	ErrConflict     = &Error{Kind: KindConflict}
	ErrThrottled    = &Error{Kind: KindThrottled}
	ErrUnavailable  = &Error{Kind: KindUnavailable}
	ErrUnauthorized = &Error{Kind: KindUnauthorized}
)

// KindOf returns the kind of err, KindUnknown for errors that are not *Error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindUnknown
}

// Errorf builds an *Error, for adapters and fakes. It sets no Sentence: an error of the adapter's
// own has no code, and one with a code needs the Sentence the adapter would give it.
func Errorf(kind Kind, op, code, format string, args ...any) *Error {
	return &Error{Kind: kind, Op: op, Code: code, Message: fmt.Sprintf(format, args...)}
}
