// Command rds-logs prints an RDS instance's error and slow query logs for a time window. It is what
// the log Job of the hooks runs, so that `kubectl logs job/<name>` shows the logs. It holds no OTC
// credential: it presents the capability from the Job's Secret to the hooks' logs port, which reads
// the logs of the one instance the capability names (docs/logs.md).
//
// Usage:
//
//	rds-logs --instance <id> [--since 1h] [--lines 200] [--types error,slow] [--max-bytes 1048576]
//
// The capability comes from RDS_LOGS_TOKEN (the Job's Secret, as an environment variable) or from
// the file --token-file names (the Secret mounted as a volume); the logs port's URL from --url or
// RDS_LOGS_URL. A failure prints one line to stderr and exits 1; --help prints the usage and
// exits 0.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mcsps/rds-lambda-controller/internal/version"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/logsapi"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "rds-logs: "+err.Error())
		os.Exit(1)
	}
}

// Log types, as the Rds spec names them.
const (
	TypeError = logsapi.TypeError
	TypeSlow  = logsapi.TypeSlow
)

// Bounds of the options; the hooks validate the spec against the same ones.
const (
	MaxSince = logsapi.MaxSince
	MaxLines = logsapi.MaxLines
)

const (
	defaultSince    = time.Hour
	defaultLines    = 200
	defaultMaxBytes = 1 << 20
	// maxResponseBytes bounds one answer of the hooks: 2000 entries of a few KiB each.
	maxResponseBytes = 32 << 20
	// attempts is how often a read is tried while the hooks are busy, throttled or rolling out.
	attempts = 5
)

// config is what the flags say.
type config struct {
	instance  string
	since     time.Duration
	until     time.Time
	lines     int
	types     []string
	maxBytes  int
	timeout   time.Duration
	url       string
	tokenFile string
	version   bool
}

// errHelp carries the usage --help asked for.
type errHelp struct{ usage string }

func (e *errHelp) Error() string { return e.usage }

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
	fs.StringVar(&cfg.url, "url", getenv(logsapi.EnvURL), "the hooks' logs port (default $"+logsapi.EnvURL+")")
	fs.StringVar(&cfg.tokenFile, "token-file", getenv("RDS_LOGS_TOKEN_FILE"), "file holding the capability, e.g. the Job's Secret mounted as a volume (default $RDS_LOGS_TOKEN_FILE, else $"+logsapi.EnvToken+")")
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

// usage is the answer to --help: what the Job runs, what it needs, and the flags.
func usage(fs *flag.FlagSet) error {
	var b strings.Builder
	b.WriteString("usage: rds-logs --instance <id> [flags]\n\n" +
		"Prints an RDS instance's error and slow query logs; it is what the hooks' log Job runs.\n" +
		"It holds no OTC credential: it presents the capability from the Job's Secret ($" + logsapi.EnvToken + ",\n" +
		"or the file --token-file names) to the hooks' logs port ($" + logsapi.EnvURL + " or --url), which\n" +
		"reads the logs of the one instance the capability names, until it expires.\n\nFlags:\n")
	fs.SetOutput(&b)
	fs.PrintDefaults()
	return &errHelp{usage: b.String()}
}

// token is the capability: from --token-file when set, else from the environment.
func (cfg config) token(getenv func(string) string) (string, error) {
	if cfg.tokenFile == "" {
		if t := strings.TrimSpace(getenv(logsapi.EnvToken)); t != "" {
			return t, nil
		}
		return "", errors.New("no capability: " + logsapi.EnvToken + " is not set (is the Job's Secret mounted?)")
	}
	b, err := os.ReadFile(cfg.tokenFile)
	if err != nil {
		return "", errors.New("no capability: cannot read --token-file (is the Job's Secret mounted?)")
	}
	return strings.TrimSpace(string(b)), nil
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseFlags(args, getenv)
	var help *errHelp
	if errors.As(err, &help) {
		_, err := io.WriteString(stdout, help.usage)
		return err
	}
	if err != nil {
		return err
	}
	if cfg.version {
		fmt.Fprintln(stdout, version.String("rds-logs"))
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()

	token, err := cfg.token(getenv)
	if err != nil {
		return err
	}
	u, err := url.Parse(cfg.url)
	if cfg.url == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("no logs port: --url (or " + logsapi.EnvURL + ") must name the hooks' logs port (is the Job's Secret mounted?)")
	}
	hooks := &hooksClient{url: strings.TrimRight(cfg.url, "/") + logsapi.Path, token: token, http: &http.Client{}}

	end := cfg.until
	if end.IsZero() {
		end = time.Now()
	}
	out := &boundedWriter{w: stdout, left: cfg.maxBytes}
	for _, t := range cfg.types {
		resp, err := hooks.read(ctx, logsapi.Request{
			Instance: cfg.instance, Type: t, Since: cfg.since.String(), Until: end.UTC(), Lines: cfg.lines,
		})
		if err != nil {
			return err
		}
		p := printer{w: out, instance: cfg.instance, q: cloud.LogQuery{Start: resp.Start, End: resp.End}}
		switch t {
		case TypeError:
			p.errorLog(resp.Errors, resp.Total)
		case TypeSlow:
			p.slowLog(resp.Slow, resp.Total)
		}
	}
	if out.truncated {
		fmt.Fprintf(stdout, "... output cut at %d bytes\n", cfg.maxBytes)
	}
	return out.err
}

// hooksClient reads logs from the hooks' logs port with the capability.
type hooksClient struct {
	url, token string
	http       *http.Client
}

// logName is how the output names a log type.
func logName(t string) string {
	if t == TypeSlow {
		return "slow query log"
	}
	return "error log"
}

// read asks for one log; it tries again while the hooks are busy, throttled or out of reach.
func (h *hooksClient) read(ctx context.Context, req logsapi.Request) (*logsapi.Response, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		resp, wait, err := h.once(ctx, body, req)
		if err == nil || wait <= 0 || attempt == attempts {
			return resp, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(wait):
		}
	}
}

// once makes one request; wait > 0 says the error may pass if tried again after it.
func (h *hooksClient) once(ctx context.Context, body []byte, req logsapi.Request) (*logsapi.Response, time.Duration, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return nil, 0, errors.New("no logs port: the URL is not usable")
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer "+h.token)
	resp, err := h.http.Do(r)
	if err != nil {
		cause := err
		var ue *url.Error
		if errors.As(err, &ue) {
			cause = ue.Err // without the URL
		}
		return nil, 2 * time.Second, fmt.Errorf("cannot reach the hooks' logs port (does a NetworkPolicy block it?): %s", cause)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil || len(data) > maxResponseBytes {
		return nil, 0, fmt.Errorf("cannot read the %s: the hooks' answer was cut or too large", logName(req.Type))
	}
	if resp.StatusCode != http.StatusOK {
		var e logsapi.Error
		if json.Unmarshal(data, &e) != nil || e.Error == "" {
			e.Error = "HTTP " + strconv.Itoa(resp.StatusCode)
		}
		switch resp.StatusCode {
		case http.StatusUnauthorized:
			return nil, 0, errors.New("the hooks refused the capability: " + e.Error)
		case http.StatusForbidden:
			return nil, 0, errors.New("the hooks refused the request: " + e.Error)
		case http.StatusTooManyRequests, http.StatusServiceUnavailable:
			wait := 2 * time.Second
			if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
				wait = min(time.Duration(s)*time.Second, 30*time.Second)
			}
			return nil, wait, fmt.Errorf("cannot read the %s: %s", logName(req.Type), e.Error)
		default:
			return nil, 0, fmt.Errorf("cannot read the %s: %s", logName(req.Type), e.Error)
		}
	}
	var out logsapi.Response
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, 0, fmt.Errorf("cannot read the %s: the hooks' answer is not a log", logName(req.Type))
	}
	if out.Instance != req.Instance || out.Type != req.Type {
		return nil, 0, fmt.Errorf("cannot read the %s: the hooks answered for another instance or log", logName(req.Type))
	}
	return &out, 0, nil
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

// clean makes text from the database safe to print on one line (logsapi.Clean; the hooks clean
// what they send too).
func clean(s string) string { return logsapi.Clean(s) }

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
