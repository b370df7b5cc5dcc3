package cloud

import (
	"context"
	"time"
)

// Logs reads an instance's error and slow logs (for the log Job, through the hooks' logs port).
type Logs interface {
	// ListErrorLogs returns the instance's error log entries in [q.Start, q.End], newest first, at
	// most q.Max of them, following OTC's pages. total is how many entries OTC holds for the window.
	ListErrorLogs(ctx context.Context, instanceID string, q LogQuery) (entries []ErrorLogEntry, total int, err error)
	// ListSlowLogs is ListErrorLogs for the slow query log (MySQL and PostgreSQL only).
	ListSlowLogs(ctx context.Context, instanceID string, q LogQuery) (entries []SlowLogEntry, total int, err error)
}

// LogQuery selects log entries.
type LogQuery struct {
	Start, End time.Time
	// Max caps the entries returned; 0 means no cap beyond what OTC keeps (2000).
	Max int
}

// ErrorLogEntry is one line of an instance's error log. The JSON names are what the hooks' logs
// port answers (sync/logsapi).
type ErrorLogEntry struct {
	Time    string `json:"time"` // as OTC writes it, e.g. 2018-12-04T14:24:42 (UTC)
	Level   string `json:"level"`
	Content string `json:"content"`
}

// SlowLogEntry is one slow statement. OTC reports every field as text.
type SlowLogEntry struct {
	StartTime    string `json:"startTime"`              // e.g. 2018-08-06T10:41:14 (UTC)
	Duration     string `json:"duration"`               // e.g. "1.04899 s"
	LockTime     string `json:"lockTime,omitempty"`     // MySQL only
	RowsSent     string `json:"rowsSent,omitempty"`     // MySQL only
	RowsExamined string `json:"rowsExamined,omitempty"` // MySQL only
	Count        string `json:"count"`
	Type         string `json:"type"` // INSERT, UPDATE, SELECT, DELETE or CREATE
	Database     string `json:"database"`
	User         string `json:"user"`
	ClientIP     string `json:"clientIP"` // masked by OTC, e.g. 192.*.*.1
	Query        string `json:"query"`
}
