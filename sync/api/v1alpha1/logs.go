package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Log types a log request can print.
const (
	LogTypeError = "error"
	LogTypeSlow  = "slow"
)

// States of a log request.
const (
	// LogsStarting: the short-lived capability is being stored in the Job's Secret; the Job is
	// created once the Secret is observed.
	LogsStarting = "Starting"
	// LogsRunning: the Job has been created and has not finished.
	LogsRunning = "Running"
	// LogsSucceeded: the Job printed the logs; read them with kubectl logs until it is removed.
	LogsSucceeded = "Succeeded"
	// LogsFailed: the Job failed; its log says why.
	LogsFailed = "Failed"
)

// LogsRequest asks for the instance's error and slow query logs, printed by a Job.
type LogsRequest struct {
	// Request names the request: each new value runs the log Job once, e.g. a date or a ticket id.
	Request string `json:"request"`
	// Since is how far back the logs reach from when the Job runs, e.g. 30m or 6h (at most 720h).
	// Default 1h.
	Since string `json:"since,omitempty"`
	// Lines is how many of the newest entries of each log to print (1-2000). Default 200.
	Lines int `json:"lines,omitempty"`
	// Types are the logs to print: error, slow. Default both (error only for SQL Server, which has
	// no slow query log).
	Types []string `json:"types,omitempty"`
}

// LogsStatus is the latest log request the hooks handled, and where its output is.
type LogsStatus struct {
	// Request is the spec's logs.request that was handled; it never runs again.
	Request string `json:"request"`
	// Job is the name of the Job whose log holds the output: kubectl logs job/<job>.
	Job string `json:"job"`
	// State is Starting, Running, Succeeded or Failed.
	State string `json:"state"`
	// Since, Lines and Types are what the Job runs with, as the request asked when it was handled.
	Since string   `json:"since"`
	Lines int      `json:"lines"`
	Types []string `json:"types"`
	// CredentialExpires is when the log Job's capability expires (it reads the logs through the
	// hooks' logs port until then; docs/logs.md).
	CredentialExpires *metav1.Time `json:"credentialExpires,omitempty"`
	// Finished is when the Job was first seen finished.
	Finished *metav1.Time `json:"finished,omitempty"`
	// Message says what to do next, e.g. the kubectl command that shows the logs.
	Message string `json:"message,omitempty"`
	// Accepted is when the object's log requests of the last hour were accepted, this one
	// included: a new request waits while they reach the limit (docs/logs.md).
	Accepted []metav1.Time `json:"accepted,omitempty"`
}

// DeepCopy returns a copy that shares no memory with r.
func (r *LogsRequest) DeepCopy() *LogsRequest {
	if r == nil {
		return nil
	}
	out := *r
	out.Types = append([]string(nil), r.Types...)
	return &out
}

// DeepCopy returns a copy that shares no memory with s.
func (s *LogsStatus) DeepCopy() *LogsStatus {
	if s == nil {
		return nil
	}
	out := *s
	out.Types = append([]string(nil), s.Types...)
	if s.CredentialExpires != nil {
		t := *s.CredentialExpires
		out.CredentialExpires = &t
	}
	if s.Finished != nil {
		t := *s.Finished
		out.Finished = &t
	}
	out.Accepted = append([]metav1.Time(nil), s.Accepted...)
	return &out
}
