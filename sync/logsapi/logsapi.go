// Package logsapi is what a log Job (cmd/rds-logs) and the hooks' logs port (server.NewLogs) say to
// each other: one request reads one log of one instance, with the capability the Job's Secret holds.
// It imports no HTTP and no cloud SDK, so that rds-logs stays a small program without OTC access.
package logsapi

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// Path is the only endpoint of the logs port: POST a Request, with the capability as
// "Authorization: Bearer <token>", which the port checks before it reads the body.
const Path = "/v1/logs"

// The variables of the log Job's Secret (the Job reads it with envFrom).
const (
	// EnvToken holds the capability: a sealed token only the hooks can open. It is no OTC
	// credential.
	EnvToken = "RDS_LOGS_TOKEN"
	// EnvURL is where the hooks' logs port answers, e.g. http://rds-hooks.rds-system.svc:8081.
	EnvURL = "RDS_LOGS_URL"
)

// Log types, as the Rds spec names them.
const (
	TypeError = "error"
	TypeSlow  = "slow"
)

// Bounds of a read; the hooks validate the spec against the same ones.
const (
	MaxSince = 30 * 24 * time.Hour // OTC serves at most one month per query
	MaxLines = 2000                // OTC keeps the latest 2000 entries of each log
	// MaxEntryBytes caps one field of an entry: a single huge statement must not fill the output.
	MaxEntryBytes = 4096
)

// Request reads one log. Every field may only narrow what the capability allows.
type Request struct {
	// Token, when set, must be the capability of the Authorization header (older Jobs sent both).
	Token string `json:"token,omitempty"`
	// Instance is the instance the Job was told to read (its --instance); it must be the
	// capability's.
	Instance string `json:"instance"`
	// Type is error or slow.
	Type string `json:"type"`
	// Since is how far back the window reaches from Until, a Go duration (default: the
	// capability's).
	Since string `json:"since,omitempty"`
	// Until ends the window (default, and at most: the hooks' now).
	Until time.Time `json:"until,omitzero"`
	// Lines caps the entries (default, and at most: the capability's).
	Lines int `json:"lines,omitempty"`
}

// Response is one log of the window, newest entries first as OTC lists them; every text field
// went through Clean.
type Response struct {
	Instance string    `json:"instance"`
	Type     string    `json:"type"`
	Start    time.Time `json:"start"`
	End      time.Time `json:"end"`
	// Total is how many entries OTC holds for the window; len(Errors or Slow) may be fewer.
	Total  int                   `json:"total"`
	Errors []cloud.ErrorLogEntry `json:"errors,omitempty"`
	Slow   []cloud.SlowLogEntry  `json:"slow,omitempty"`
}

// Error is the body of every answer but 200: one sentence for the Job's log.
type Error struct {
	Error string `json:"error"`
}

// Clean makes text from the database safe to print on one line of a terminal: control characters
// (escape sequences, carriage returns) become spaces or are dropped, and it is cut after
// MaxEntryBytes with " [...]". Clean(Clean(s)) == Clean(s), so the hooks clean what they send (which
// bounds each answer) and rds-logs cleans what it prints.
func Clean(s string) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= MaxEntryBytes {
			b.WriteString(" [...]")
			break
		}
		switch {
		case r == '\n' || r == '\t' || r == '\r':
			b.WriteByte(' ')
		case r == utf8.RuneError, unicode.IsControl(r):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// CleanErrorLog cleans every field of the entries in place.
func CleanErrorLog(entries []cloud.ErrorLogEntry) {
	for i := range entries {
		e := &entries[i]
		e.Time, e.Level, e.Content = Clean(e.Time), Clean(e.Level), Clean(e.Content)
	}
}

// CleanSlowLog cleans every field of the entries in place.
func CleanSlowLog(entries []cloud.SlowLogEntry) {
	for i := range entries {
		e := &entries[i]
		for _, f := range []*string{&e.StartTime, &e.Duration, &e.LockTime, &e.RowsSent, &e.RowsExamined, &e.Count,
			&e.Type, &e.Database, &e.User, &e.ClientIP, &e.Query} {
			*f = Clean(*f)
		}
	}
}
