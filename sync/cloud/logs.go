package cloud

// Logs reads an instance's error and slow logs, and issues and revokes the short-lived credentials
// the log Job runs with.
type Logs interface{}
