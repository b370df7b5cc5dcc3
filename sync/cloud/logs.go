package cloud

import (
	"context"
	"time"

	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// Logs reads an instance's error and slow logs, and issues the short-lived credentials the log Job
// runs with.
type Logs interface {
	// CreateTemporaryCredential issues a temporary AK/SK with its security token, valid for ttl
	// (OTC accepts 15 minutes to 24 hours), for the project this client serves. It cannot be revoked:
	// it ends when it expires.
	CreateTemporaryCredential(ctx context.Context, ttl time.Duration) (*TemporaryCredential, error)
	// ListErrorLogs returns the instance's error log entries in [q.Start, q.End], newest first, at
	// most q.Max of them, following OTC's pages. total is how many entries OTC holds for the window.
	ListErrorLogs(ctx context.Context, instanceID string, q LogQuery) (entries []ErrorLogEntry, total int, err error)
	// ListSlowLogs is ListErrorLogs for the slow query log (MySQL and PostgreSQL only).
	ListSlowLogs(ctx context.Context, instanceID string, q LogQuery) (entries []SlowLogEntry, total int, err error)
}

// TemporaryCredential is a temporary AK/SK and where to use it.
type TemporaryCredential struct {
	AccessKey     string
	SecretKey     secret.Value
	SecurityToken secret.Value
	ExpiresAt     time.Time

	// AuthURL, ProjectID and Region are what a client needs besides the keys to log in with them.
	AuthURL   string
	ProjectID string
	Region    string
}

// LogQuery selects log entries.
type LogQuery struct {
	Start, End time.Time
	// Max caps the entries returned; 0 means no cap beyond what OTC keeps (2000).
	Max int
}

// ErrorLogEntry is one line of an instance's error log.
type ErrorLogEntry struct {
	Time    string // as OTC writes it, e.g. 2018-12-04T14:24:42 (UTC)
	Level   string
	Content string
}

// SlowLogEntry is one slow statement. OTC reports every field as text.
type SlowLogEntry struct {
	StartTime    string // e.g. 2018-08-06T10:41:14 (UTC)
	Duration     string // e.g. "1.04899 s"
	LockTime     string // MySQL only
	RowsSent     string // MySQL only
	RowsExamined string // MySQL only
	Count        string
	Type         string // INSERT, UPDATE, SELECT, DELETE or CREATE
	Database     string
	User         string
	ClientIP     string // masked by OTC, e.g. 192.*.*.1
	Query        string
}
