// Command rds-logs prints an RDS instance's error and slow query logs for a time window. It is what
// the log Job of the hooks runs, so that `kubectl logs job/<name>` shows the logs; it logs in with
// the short-lived AK/SK in the Job's Secret, mounted as environment variables or as files.
//
// Usage:
//
//	rds-logs --instance <id> [--since 1h] [--lines 200] [--types error,slow] [--max-bytes 1048576]
//
// Credentials: OS_AUTH_URL, OS_PROJECT_ID (or OS_PROJECT_NAME), OS_REGION_NAME, OS_ACCESS_KEY,
// OS_SECRET_KEY and OS_SECURITY_TOKEN, from the environment or, with --credentials-dir, from files
// of those names. A failure prints one line to stderr and exits 1.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mcsps/rds-lambda-controller/internal/version"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/otc"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, err.Error()) // the usage; asking for it is no failure
			return
		}
		fmt.Fprintln(os.Stderr, "rds-logs: "+err.Error())
		os.Exit(1)
	}
}

// Log types, as the Rds spec names them.
const (
	TypeError = "error"
	TypeSlow  = "slow"
)

// Bounds of the options; the hooks validate the spec against the same ones.
const (
	MaxSince = 30 * 24 * time.Hour // OTC serves at most one month per query
	MaxLines = 2000                // OTC keeps the latest 2000 entries of each log
)

const (
	defaultSince    = time.Hour
	defaultLines    = 200
	defaultMaxBytes = 1 << 20
	// maxEntryBytes caps one printed entry: a single huge statement must not fill the output.
	maxEntryBytes = 4096
)

// config is what the flags say.
type config struct {
	instance string
	since    time.Duration
	until    time.Time
	lines    int
	types    []string
	maxBytes int
	timeout  time.Duration
	credDir  string
	version  bool
}

func parseFlags(args []string, getenv func(string) string) (config, error) {
	fs := flag.NewFlagSet("rds-logs", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are returned as one line
	var cfg config
	var types, until string
	fs.StringVar(&cfg.instance, "instance", getenv("RDS_INSTANCE_ID"), "OTC instance id (default $RDS_INSTANCE_ID)")
	fs.DurationVar(&cfg.since, "since", defaultSince, "how far back the window reaches")
	fs.StringVar(&until, "until", "", "end of the window, RFC 3339 (default now)")
	fs.IntVar(&cfg.lines, "lines", defaultLines, "the newest entries to print per log")
	fs.StringVar(&types, "types", TypeError+","+TypeSlow, "logs to print: error, slow")
	fs.IntVar(&cfg.maxBytes, "max-bytes", defaultMaxBytes, "cap on the whole output")
	fs.DurationVar(&cfg.timeout, "timeout", 2*time.Minute, "cap on the whole run")
	fs.StringVar(&cfg.credDir, "credentials-dir", getenv("RDS_LOGS_CREDENTIALS_DIR"), "directory with one file per OS_* variable (a mounted Secret)")
	fs.BoolVar(&cfg.version, "version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, usage(fs)
		}
		return cfg, fmt.Errorf("bad arguments: %w", err)
	}
	if cfg.version {
		return cfg, nil
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("bad arguments: unexpected %q", fs.Arg(0))
	}
	var problems []string
	if cfg.instance == "" {
		problems = append(problems, "--instance (or RDS_INSTANCE_ID) is required")
	}
	if cfg.since <= 0 || cfg.since > MaxSince {
		problems = append(problems, fmt.Sprintf("--since must be between 1s and %s", MaxSince))
	}
	if cfg.lines < 1 || cfg.lines > MaxLines {
		problems = append(problems, fmt.Sprintf("--lines must be between 1 and %d", MaxLines))
	}
	if cfg.maxBytes < 1024 {
		problems = append(problems, "--max-bytes must be at least 1024")
	}
	if until != "" {
		t, err := time.Parse(time.RFC3339, until)
		if err != nil {
			problems = append(problems, "--until must be an RFC 3339 time")
		}
		cfg.until = t
	}
	for _, t := range strings.Split(types, ",") {
		switch t = strings.TrimSpace(strings.ToLower(t)); t {
		case TypeError, TypeSlow:
			if !slices.Contains(cfg.types, t) {
				cfg.types = append(cfg.types, t)
			}
		case "":
		default:
			problems = append(problems, fmt.Sprintf("--types: unknown log type %q (want error, slow)", t))
		}
	}
	if len(cfg.types) == 0 && len(problems) == 0 {
		problems = append(problems, "--types names no log")
	}
	if len(problems) > 0 {
		return cfg, fmt.Errorf("bad arguments: %s", strings.Join(problems, "; "))
	}
	return cfg, nil
}

// usage is the answer to --help: what the Job runs, the credentials it needs, and the flags.
func usage(fs *flag.FlagSet) error {
	var b strings.Builder
	b.WriteString("usage: rds-logs --instance <id> [flags]\n\n" +
		"Prints an RDS instance's error and slow query logs; it is what the hooks' log Job runs.\n" +
		"Credentials: OS_AUTH_URL, OS_PROJECT_ID (or OS_PROJECT_NAME), OS_REGION_NAME, OS_ACCESS_KEY,\n" +
		"OS_SECRET_KEY and OS_SECURITY_TOKEN, from the environment or from files in --credentials-dir.\n\nFlags:\n")
	fs.SetOutput(&b)
	fs.PrintDefaults()
	return helpError(strings.TrimRight(b.String(), "\n"))
}

// helpError is the usage, answered to --help: an error that ends the run, but no failure.
type helpError string

func (e helpError) Error() string { return string(e) }
func (e helpError) Unwrap() error { return flag.ErrHelp }

// credentialsEnv reads the OS_* variables from files in dir when it is set (a Secret mounted as a
// volume), else from the environment.
func credentialsEnv(dir string, getenv func(string) string) func(string) string {
	if dir == "" {
		return getenv
	}
	return func(k string) string {
		if !strings.HasPrefix(k, "OS_") {
			return ""
		}
		b, err := os.ReadFile(filepath.Join(dir, k))
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseFlags(args, getenv)
	if err != nil {
		return err
	}
	if cfg.version {
		fmt.Fprintln(stdout, version.String("rds-logs"))
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()

	env := credentialsEnv(cfg.credDir, getenv)
	if env("OS_ACCESS_KEY") == "" {
		return errors.New("no credentials: OS_ACCESS_KEY is not set (is the Job's Secret mounted?)")
	}
	occ, err := otc.ConfigFromEnv(env)
	if err != nil {
		return err
	}
	client, err := otc.New(ctx, occ)
	if err != nil {
		return fmt.Errorf("cannot log in to OTC: %s", describe(err))
	}

	end := cfg.until
	if end.IsZero() {
		end = time.Now()
	}
	q := cloud.LogQuery{Start: end.Add(-cfg.since).UTC().Truncate(time.Second), End: end.UTC().Truncate(time.Second), Max: cfg.lines}
	out := &boundedWriter{w: stdout, left: cfg.maxBytes}
	p := printer{w: out, instance: cfg.instance, q: q}
	for _, t := range cfg.types {
		switch t {
		case TypeError:
			entries, total, err := client.ListErrorLogs(ctx, cfg.instance, q)
			if err != nil {
				return fmt.Errorf("cannot read the error log: %s", describe(err))
			}
			p.errorLog(entries, total)
		case TypeSlow:
			entries, total, err := client.ListSlowLogs(ctx, cfg.instance, q)
			if err != nil {
				return fmt.Errorf("cannot read the slow query log: %s", describe(err))
			}
			p.slowLog(entries, total)
		}
	}
	if out.truncated {
		fmt.Fprintf(stdout, "... output cut at %d bytes\n", cfg.maxBytes)
	}
	return out.err
}

// describe is a cloud error as one sentence for a person reading the Job's log.
func describe(err error) string {
	var ce *cloud.Error
	if !errors.As(err, &ce) {
		return err.Error()
	}
	var s string
	switch ce.Kind {
	case cloud.KindUnauthorized:
		s = "OTC refused the credentials; they may have expired (ask again with a new request)"
	case cloud.KindNotFound:
		s = "OTC does not know the instance"
	case cloud.KindThrottled:
		s = "OTC is throttling requests; try again later"
	case cloud.KindUnavailable:
		s = "OTC did not answer"
	default:
		s = "OTC refused the request"
	}
	if ce.Message != "" {
		s += ": " + ce.Message
	}
	if ce.Code != "" {
		s += " (" + ce.Code + ")"
	}
	return s
}

// printer writes the logs as plain text, oldest entry first.
type printer struct {
	w        io.Writer
	instance string
	q        cloud.LogQuery
}

func (p printer) header(what string, shown, total int) {
	fmt.Fprintf(p.w, "== %s of instance %s from %s to %s: ", what, p.instance,
		p.q.Start.Format(time.RFC3339), p.q.End.Format(time.RFC3339))
	switch {
	case total == 0:
		fmt.Fprintln(p.w, "no entries ==")
	case shown < total:
		fmt.Fprintf(p.w, "the newest %d of %d entries ==\n", shown, total)
	case total == 1:
		fmt.Fprintln(p.w, "1 entry ==")
	default:
		fmt.Fprintf(p.w, "%d entries ==\n", total)
	}
}

func (p printer) errorLog(entries []cloud.ErrorLogEntry, total int) {
	p.header("error log", len(entries), total)
	// NOTE: OTC lists newest first; sorting by the time (a fixed-width UTC text) instead of just
	// reversing keeps the output in order whatever order the entries come in.
	slices.SortStableFunc(entries, func(a, b cloud.ErrorLogEntry) int { return strings.Compare(a.Time, b.Time) })
	for _, e := range entries {
		fmt.Fprintf(p.w, "%s  %-7s  %s\n", clean(e.Time), clean(e.Level), clean(e.Content))
	}
	fmt.Fprintln(p.w)
}

func (p printer) slowLog(entries []cloud.SlowLogEntry, total int) {
	p.header("slow query log", len(entries), total)
	slices.SortStableFunc(entries, func(a, b cloud.SlowLogEntry) int { return strings.Compare(a.StartTime, b.StartTime) })
	for _, e := range entries {
		line := fmt.Sprintf("%s  %s  %s  db=%s user=%s client=%s", clean(e.StartTime), clean(e.Duration), clean(e.Type),
			clean(e.Database), clean(e.User), clean(e.ClientIP))
		if e.RowsSent != "" || e.RowsExamined != "" { // MySQL only
			line += fmt.Sprintf(" rows_sent=%s rows_examined=%s lock=%s", clean(e.RowsSent), clean(e.RowsExamined), clean(e.LockTime))
		}
		// One write per entry: the bounded output never ends inside one.
		fmt.Fprintf(p.w, "%s\n    %s\n", line, clean(e.Query))
	}
	fmt.Fprintln(p.w)
}

// clean makes text from the database safe to print on one line of a terminal: control characters
// (escape sequences, carriage returns) become spaces or are dropped, and it is cut at maxEntryBytes.
func clean(s string) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= maxEntryBytes {
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

// boundedWriter passes writes through until the next one would pass the cap; that one and all after
// it are dropped. The printer writes whole entries, so the output ends with a whole entry.
type boundedWriter struct {
	w         io.Writer
	left      int
	truncated bool
	err       error
}

func (b *boundedWriter) Write(p []byte) (int, error) {
	if b.truncated || b.err != nil {
		return len(p), nil
	}
	if len(p) > b.left {
		b.truncated = true
		return len(p), nil
	}
	n, err := b.w.Write(p)
	b.left -= n
	if err != nil {
		b.err = fmt.Errorf("cannot write the output: %w", err)
	}
	return len(p), nil
}
