// Command otcsim serves the OTC API simulator (IAM, RDS v3, VPC, Cloud Eye) on a local port, so
// that any gophertelekomcloud program can run against it. It prints the OS_* variables to export.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	"github.com/mcsps/rds-lambda-controller/internal/version"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return // the usage is printed; asking for it is no failure
		}
		fmt.Fprintln(os.Stderr, "otcsim:", err)
		os.Exit(1)
	}
}

// faultFlags collects repeated --fault values.
type faultFlags []otcsim.Fault

func (f *faultFlags) String() string {
	parts := make([]string, 0, len(*f))
	for _, x := range *f {
		parts = append(parts, x.String())
	}
	return strings.Join(parts, " ")
}

func (f *faultFlags) Set(v string) error {
	x, err := otcsim.ParseFault(v)
	if err != nil {
		return err
	}
	*f = append(*f, x)
	return nil
}

// endpointFlags collects repeated --endpoint values: [NAMESPACE/NAME=|NAME=|engine:ENGINE=]HOST:PORT.
type endpointFlags = otcsim.EndpointFlags

// config is what the flags say.
type config struct {
	listen      string
	opts        otcsim.Options
	faults      faultFlags
	manualClock bool
	logLevel    slog.Level
	version     bool
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("otcsim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: otcsim [flags]\n\nServes a simulated OTC (IAM, RDS v3, VPC, Cloud Eye) and prints the OS_* variables to export.\n\nFlags:")
		fs.PrintDefaults()
	}
	fs.StringVar(&c.listen, "listen", "127.0.0.1:8790", "address to listen on")
	fs.StringVar(&c.opts.BaseURL, "base-url", "", "URL clients reach the simulator at, used in the catalog (default: http://<request Host>)")
	fs.StringVar(&c.opts.Username, "username", otcsim.DefaultUsername, "IAM user name")
	fs.StringVar(&c.opts.Password, "password", otcsim.DefaultPassword, "IAM password")
	fs.StringVar(&c.opts.DomainName, "domain", otcsim.DefaultDomainName, "IAM domain (account) name")
	fs.StringVar(&c.opts.ProjectName, "project-name", otcsim.DefaultProjectName, "project name (its prefix before _ is the region)")
	fs.StringVar(&c.opts.ProjectID, "project-id", otcsim.DefaultProjectID, "project id (32 hex digits)")
	fs.StringVar(&c.opts.AccessKey, "access-key", "", "permanent access key accepted on AK/SK-signed requests")
	fs.StringVar(&c.opts.SecretKey, "secret-key", "", "secret key of --access-key")
	fs.Int64Var(&c.opts.Seed, "seed", 1, "seed of fault randomness and generated ids")
	fs.DurationVar(&c.opts.Latency, "latency", 0, "latency added to every call")
	fs.BoolVar(&c.opts.EnableControl, "control", false, "serve the /_sim control API")
	fs.BoolVar(&c.opts.UniqueNames, "unique-names", false, "refuse a create whose instance name is taken (409 DBS.200022); OTC itself allows duplicate names")
	fs.BoolVar(&c.manualClock, "manual-clock", false, "freeze the simulated clock; move it with POST /_sim/clock/advance (needs --control)")
	endpoints := endpointFlags{}
	fs.Var(endpoints, "endpoint", "back instances with a real database server: NAMESPACE/NAME=HOST:PORT for the instance of that Rds object (its owner tags), NAME=HOST:PORT for the OTC instance NAME, engine:ENGINE=HOST:PORT for every other instance of that engine (e.g. engine:PostgreSQL), HOST:PORT for every other instance (repeatable)")
	fs.Var(&c.faults, "fault", "inject a fault, OP:KIND[:key=value,...], e.g. 'CreateInstance:commit-drop:rate=0.5' (repeatable; kinds: status, throttle, latency, hang, commit-drop; keys: rate, count, status, retry-after, delay)")
	fs.TextVar(&c.logLevel, "log-level", slog.LevelInfo, "log level (DEBUG logs every request)")
	fs.BoolVar(&c.version, "version", false, "print the version and exit")

	d := otcsim.DefaultDurations()
	type durationFlag struct {
		name string
		p    *time.Duration
	}
	var all time.Duration
	fs.DurationVar(&all, "duration", 0, "how long every operation's transient state lasts, e.g. 1s for a fast run (0: each operation's default); a --duration-<operation> flag overrides it")
	durations := []durationFlag{{"latency", &c.opts.Latency}, {"duration", &all}}
	var ops []durationFlag
	for _, x := range []durationFlag{
		{"create", &d.Create}, {"delete", &d.Delete}, {"backup", &d.Backup}, {"resize", &d.Resize},
		{"enlarge", &d.Enlarge}, {"restart", &d.Restart}, {"single-to-ha", &d.SingleToHA},
		{"upgrade", &d.Upgrade}, {"restore", &d.Restore},
	} {
		fs.DurationVar(x.p, "duration-"+x.name, *x.p, "how long the "+x.name+" operation's transient state lasts (overrides --duration)")
		durations = append(durations, durationFlag{"duration-" + x.name, x.p})
		ops = append(ops, durationFlag{"duration-" + x.name, x.p})
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if all > 0 {
		for _, x := range ops {
			if !set[x.name] {
				*x.p = all
			}
		}
	}
	if c.version {
		return c, nil
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	for _, x := range durations {
		if *x.p < 0 {
			return c, fmt.Errorf("--%s %s: must not be negative", x.name, *x.p)
		}
	}
	if c.manualClock && !c.opts.EnableControl {
		return c, errors.New("--manual-clock needs --control to move the clock")
	}
	c.opts.Durations = d
	if len(endpoints) > 0 {
		c.opts.Endpoints = endpoints
	}
	return c, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if cfg.version {
		fmt.Fprintln(stdout, version.String("otcsim"))
		return nil
	}
	logger := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: cfg.logLevel}))
	cfg.opts.Logger = logger
	if cfg.manualClock {
		cfg.opts.Clock = otcsim.NewManualClock(time.Now().UTC().Truncate(time.Second))
	}

	l, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return err
	}
	sim := otcsim.New(cfg.opts)
	for _, f := range cfg.faults {
		sim.AddFault(f)
	}
	srv := &http.Server{Handler: sim.Handler(), ReadHeaderTimeout: 10 * time.Second}

	base := cfg.opts.BaseURL
	if base == "" {
		base = "http://" + reachable(l.Addr())
	}
	printExports(stdout, sim.Env(strings.TrimSuffix(base, "/")+"/v3"))
	logger.Info("otcsim listening", "addr", l.Addr().String(), "control", cfg.opts.EnableControl,
		"faults", cfg.faults.String(), "endpoints", endpointFlags(cfg.opts.Endpoints).String(), "manual_clock", cfg.manualClock,
		"unique_names", cfg.opts.UniqueNames)

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("otcsim shutting down")
	sim.Close() // release hanging requests
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// reachable turns a listen address into one a local client can dial (0.0.0.0 → 127.0.0.1).
func reachable(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

func printExports(w io.Writer, env map[string]string) {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "export %s=%q\n", k, env[k])
	}
}
