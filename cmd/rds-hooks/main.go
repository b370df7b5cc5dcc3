// Command rds-hooks serves the Metacontroller hooks of the Rds controller: POST /sync, /finalize and
// /customize, and GET /healthz, /readyz and /metrics.
//
// By default it manages the real OTC with the credentials in the OS_* variables (or OS_CLOUD and
// clouds.yaml); without credentials it exits with a clear message. `--cloud sim` embeds the OTC
// API simulator instead, for trying the hooks on a laptop.
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
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/mcsps/rds-lambda-controller/server"
	rdssync "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/otc"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/view"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
	"github.com/mcsps/rds-lambda-controller/test/otcsim"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "rds-hooks:", err)
		os.Exit(1)
	}
}

// Cloud modes.
const (
	cloudOTC = "otc"
	cloudSim = "sim"
)

// config is what the flags and the environment say.
type config struct {
	listen        string
	cloud         string
	simListen     string
	logLevel      slog.Level
	hookTimeout   time.Duration
	callTimeout   time.Duration
	requestTO     time.Duration
	resyncPending time.Duration
	resyncSteady  time.Duration
	viewMaxAge    time.Duration
	shutdownGrace time.Duration
	jobImage      string
	sqlDrift      time.Duration
	passwordKey   string
}

// parseFlags reads the flags; each has an RDS_HOOKS_* variable as its default.
func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("rds-hooks", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: rds-hooks [flags]\n\n"+
			"Serves the Metacontroller hooks of the Rds controller. OTC credentials come from the OS_*\n"+
			"variables or OS_CLOUD (clouds.yaml); --cloud sim embeds the OTC API simulator instead.\n"+
			"Every flag can also be set as RDS_HOOKS_<FLAG> (upper case, - as _).\n\nFlags:\n")
		fs.PrintDefaults()
	}
	env := func(name, def string) string {
		if v := getenv("RDS_HOOKS_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))); v != "" {
			return v
		}
		return def
	}
	str := func(p *string, name, def, usage string) { fs.StringVar(p, name, env(name, def), usage) }
	dur := func(p *time.Duration, name string, def time.Duration, usage string) {
		*p = def
		if v := env(name, ""); v != "" {
			if d, err := time.ParseDuration(v); err == nil {
				*p = d
			}
		}
		fs.DurationVar(p, name, *p, usage)
	}

	str(&c.listen, "listen", "127.0.0.1:8080", "address to serve the hooks on (\":8080\" in a pod)")
	str(&c.cloud, "cloud", cloudOTC, "the cloud to manage: otc (credentials from OS_* or OS_CLOUD) or sim (embedded simulator)")
	str(&c.simListen, "sim-listen", "127.0.0.1:0", "with --cloud sim: where the embedded simulator listens")
	str(&c.passwordKey, "password-key", "", "secret key that makes generated passwords reproducible per object (default: derived from the OTC password or secret key)")
	str(&c.jobImage, "job-image", "ghcr.io/mcsps/rds-lambda-controller:latest", "image of the log Job (it runs /rds-logs)")
	dur(&c.hookTimeout, "hook-timeout", 8*time.Second, "deadline of one hook call; keep it under Metacontroller's webhook timeout (10s)")
	dur(&c.callTimeout, "call-timeout", 4*time.Second, "deadline of one OTC call inside a hook call")
	dur(&c.requestTO, "request-timeout", otc.DefaultRequestTimeout, "cap of one HTTP request to OTC, whatever the caller's deadline")
	dur(&c.resyncPending, "resync-pending", 10*time.Second, "how soon to look again while OTC works on a change")
	dur(&c.resyncSteady, "resync-steady", 5*time.Minute, "how soon to look again when nothing is in flight")
	dur(&c.viewMaxAge, "view-max-age", view.DefaultMaxAge, "bound on the staleness of the shared view of all instances that steady syncs read (docs/view.md); 0 reads every instance fresh")
	dur(&c.sqlDrift, "sql-drift-check", time.Hour, "how often databases, users and grants are applied again to repair changes made behind the controller's back")
	dur(&c.shutdownGrace, "shutdown-grace", 15*time.Second, "how long in-flight calls may finish after SIGTERM")
	if err := c.logLevel.UnmarshalText([]byte(env("log-level", "INFO"))); err != nil {
		return c, fmt.Errorf("RDS_HOOKS_LOG_LEVEL: %w", err)
	}
	fs.TextVar(&c.logLevel, "log-level", c.logLevel, "log level: DEBUG, INFO, WARN or ERROR")

	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if c.cloud != cloudOTC && c.cloud != cloudSim {
		return c, fmt.Errorf("--cloud must be %q or %q, not %q", cloudOTC, cloudSim, c.cloud)
	}
	if c.hookTimeout <= c.callTimeout {
		return c, fmt.Errorf("--hook-timeout (%s) must be longer than --call-timeout (%s)", c.hookTimeout, c.callTimeout)
	}
	return c, nil
}

// run serves until ctx ends (SIGTERM), then drains: /readyz turns 503, in-flight calls finish.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseFlags(args, getenv, stderr)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewJSONHandler(stdout, &slog.HandlerOptions{Level: cfg.logLevel}))

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	metrics := server.NewMetrics(reg)

	// The cloud: the real OTC unless --cloud sim, never a silent fallback.
	credentials := getenv
	if cfg.cloud == cloudSim {
		sim, err := startSim(cfg.simListen, logger)
		if err != nil {
			return err
		}
		defer sim.Close()
		env := sim.Env()
		credentials = func(k string) string { return env[k] }
		logger.Info("embedded OTC simulator listening", "url", sim.URL)
	}
	occfg, err := otc.ConfigFromEnv(credentials)
	if err != nil {
		return fmt.Errorf("%w (or run with --cloud sim to try the hooks against the embedded simulator)", err)
	}
	occfg.RequestTimeout = cfg.requestTO
	occfg.Observe = metrics.ObserveCloudCall
	loginCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	client, err := otc.New(loginCtx, occfg)
	cancel()
	if err != nil {
		return fmt.Errorf("log in to OTC: %w", err)
	}
	logger.Info("logged in to OTC", "region", client.Region(), "cloud", cfg.cloud)

	// NOTE: generated passwords derive from a stable secret, so that two calls for one object
	// answer the same password (sync/password.go).
	passwordKey := secret.New(cfg.passwordKey)
	if passwordKey.Empty() {
		passwordKey = occfg.StableSecret()
	}
	if passwordKey.Empty() {
		logger.Warn("no stable secret for generated passwords (token login): set --password-key")
	}
	// Steady syncs read one shared, paged listing of the project's instances (docs/view.md).
	var hooksCloud cloud.Cloud = client
	if cfg.viewMaxAge > 0 {
		hooksCloud = view.Wrap(client, view.Options{MaxAge: cfg.viewMaxAge, Logger: logger.With("component", "view")})
	}
	reconciler := rdssync.New(rdssync.Config{
		Cloud:         hooksCloud,
		PasswordKey:   passwordKey,
		CallTimeout:   cfg.callTimeout,
		ResyncPending: cfg.resyncPending,
		ResyncSteady:  cfg.resyncSteady,
		Databases:     rdssync.DatabasesConfig{DriftCheck: cfg.sqlDrift},
		JobImage:      cfg.jobImage,
	})
	handler := server.New(server.Options{
		Reconciler:  reconciler,
		Logger:      logger,
		Metrics:     metrics,
		Gatherer:    reg,
		HookTimeout: cfg.hookTimeout,
	})

	l, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      cfg.hookTimeout + 5*time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	logger.Info("rds-hooks listening", "addr", l.Addr().String())
	if cfg.cloud == cloudSim {
		printTryIt(stderr, l.Addr())
	}

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down", "grace", cfg.shutdownGrace.String())
	handler.Drain()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), cfg.shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	logger.Info("stopped")
	return nil
}

// startSim serves the OTC API simulator on addr, on the real clock, for trying the hooks locally.
func startSim(addr string, logger *slog.Logger) (*otcsim.Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("embedded simulator: %w", err)
	}
	return otcsim.Serve(l, otcsim.New(otcsim.Options{Logger: logger.With("component", "otcsim")})), nil
}

// printTryIt tells a person at a terminal how to talk to the hooks.
func printTryIt(w io.Writer, addr net.Addr) {
	base := "http://" + addr.String()
	fmt.Fprintf(w, `
rds-hooks is serving on %[1]s against the embedded OTC simulator.
Try it (README.md, "Try it with curl", walks through a whole lifecycle):

  curl -s %[1]s/healthz
  curl -s -XPOST %[1]s/sync -H 'Content-Type: application/json' -d @test/testdata/curl/sync-create.json | jq .status
  curl -s %[1]s/metrics | grep rds_hooks_

`, base)
}
