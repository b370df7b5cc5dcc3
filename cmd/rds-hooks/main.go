// Command rds-hooks serves the Metacontroller hooks of the Rds controller: POST /sync, /finalize and
// /customize, and GET /healthz, /readyz and /metrics. A second port (--logs-listen) serves the log
// Jobs: POST /v1/logs and nothing else (docs/logs.md).
//
// By default it manages the real OTC with the credentials in the OS_* variables (or OS_CLOUD and
// clouds.yaml); without credentials it exits with a clear message. `--cloud sim` embeds the OTC
// API simulator instead, for trying the hooks on a laptop.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/mcsps/rds-lambda-controller/internal/hookauth"
	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	"github.com/mcsps/rds-lambda-controller/internal/version"
	"github.com/mcsps/rds-lambda-controller/server"
	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/otc"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/view"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return // the usage is printed; asking for it is no failure
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
	simEndpoints  otcsim.EndpointFlags
	logLevel      slog.Level
	hookTimeout   time.Duration
	callTimeout   time.Duration
	requestTO     time.Duration
	resyncPending time.Duration
	resyncSteady  time.Duration
	viewMaxAge    time.Duration
	shutdownGrace time.Duration
	jobImage      string
	logsListen    string
	logsURL       string
	logsTTL       time.Duration
	sqlDrift      time.Duration
	dbCAFile      string
	paramsDrift   time.Duration
	passwordKey   string
	version       bool
	maxInFlight   int
	maxPerNS      int
	maxConns      int

	// Hook authentication (docs/tenancy.md).
	tlsCert, tlsKey string
	hookTokens      string
	insecureNoAuth  bool

	// Namespace credentials (docs/credentials.md).
	nsCredentials string
	nsSecret      string
	nsAuthURLs    string
	nsIdle        time.Duration
	clusterID     string
	adoption      string
}

// metacontrollerTimeout is Metacontroller's default webhook timeout (manifests/compositecontroller.yaml):
// a hook call must answer before it.
const metacontrollerTimeout = 10 * time.Second

// envName is the variable that sets a flag: RDS_HOOKS_<FLAG>, upper case, - as _.
func envName(flagName string) string {
	return "RDS_HOOKS_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// setting names a flag and its variable, for messages.
func setting(flagName string) string { return "--" + flagName + " (" + envName(flagName) + ")" }

// parseFlags reads the flags; each has an RDS_HOOKS_* variable as its default. A value that does not
// parse, in a flag or a variable, is refused naming it.
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
	// applyEnv below sets every flag declared on fs (with these helpers or fs.IntVar, fs.BoolVar, ...)
	// from its variable, through the flag's own parser, and checkFlags refuses durations of 0: a new
	// flag is validated in both forms without more code.
	str := func(p *string, name, def, usage string) { fs.StringVar(p, name, def, usage) }
	dur := func(p *time.Duration, name string, def time.Duration, usage string) {
		fs.DurationVar(p, name, def, usage)
	}
	str(&c.listen, "listen", "127.0.0.1:8080", "address to serve the hooks on (\":8080\" in a pod)")
	str(&c.cloud, "cloud", cloudOTC, "the cloud to manage: otc (credentials from OS_* or OS_CLOUD) or sim (embedded simulator)")
	str(&c.simListen, "sim-listen", "127.0.0.1:0", "with --cloud sim: where the embedded simulator listens")
	str(&c.passwordKey, "password-key", "", "secret key that makes generated passwords reproducible per object (default: derived from the OTC password or secret key)")
	str(&c.clusterID, "cluster-id", "", "this cluster's name in the ownership tags and instance names of the instances it creates: 1-32 of [a-z0-9-], unique among the clusters sharing an OTC project, never changed (required with --cloud otc; default \"local\" with --cloud sim)")
	str(&c.adoption, "adoption", string(reconcile.AdoptUnowned), "which instances spec.instanceid may adopt: Unowned (no ownership tags, or released by an Rds of the same namespace), SameNamespace (only released by an Rds of the same namespace) or Never")
	str(&c.jobImage, "job-image", "ghcr.io/mcsps/rds-lambda-controller:"+version.Version, "image of the log Job (it runs /rds-logs)")
	str(&c.logsListen, "logs-listen", "127.0.0.1:8081", "address to serve the log Jobs on, POST /v1/logs only (\":8081\" in a pod)")
	str(&c.logsURL, "logs-url", reconcile.DefaultLogsURL, "where log Jobs reach --logs-listen (the hooks' Service)")
	dur(&c.logsTTL, "logs-ttl", 15*time.Minute, "lifetime of a log Job's capability; longer than the Job's 5m deadline")
	dur(&c.hookTimeout, "hook-timeout", 8*time.Second, "deadline of one hook call; under Metacontroller's webhook timeout (10s)")
	dur(&c.callTimeout, "call-timeout", 4*time.Second, "deadline of one OTC call inside a hook call")
	dur(&c.requestTO, "request-timeout", otc.DefaultRequestTimeout, "cap of one HTTP request to OTC, whatever the caller's deadline")
	dur(&c.resyncPending, "resync-pending", 10*time.Second, "how soon to look again while OTC works on a change")
	dur(&c.resyncSteady, "resync-steady", 5*time.Minute, "how soon to look again when nothing is in flight")
	dur(&c.viewMaxAge, "view-max-age", view.DefaultMaxAge, "bound on the staleness of the shared view of all instances that steady syncs read (docs/view.md); 0 reads every instance fresh")
	dur(&c.sqlDrift, "sql-drift-check", time.Hour, "how often databases, users and grants are applied again to repair changes made behind the controller's back")
	str(&c.dbCAFile, "db-ca-file", "", "PEM bundle of the CAs that sign OTC's database server certificates (downloaded from the RDS console): the SQL session to a MySQL instance with SSL on, and to every PostgreSQL instance, verifies the server with it (unset: no MySQL server with SSL on is trusted, PostgreSQL's certificates are not checked; the system's roots are not used, as the name is not checked)")
	dur(&c.paramsDrift, "parameters-drift-check", reconcile.DefaultParametersDriftCheck, "how often a steady object's engine parameters are read from OTC to set back a value changed elsewhere (docs/parameters.md)")
	dur(&c.shutdownGrace, "shutdown-grace", 15*time.Second, "how long in-flight calls may finish after SIGTERM")
	str(&c.nsCredentials, "namespace-credentials", reconcile.CredentialsOptional,
		"OTC logins from the objects' namespaces: Optional (a namespace's Secret when there is one, else the controller's own login) or Required (the controller's own login serves no Rds)")
	str(&c.nsSecret, "namespace-credentials-secret", reconcile.DefaultCredentialsSecret, "name of a namespace's default Secret with its OTC login (OS_* keys)")
	str(&c.nsAuthURLs, "namespace-credentials-auth-urls", "", "comma-separated identity endpoints a namespace's OS_AUTH_URL may name (default: the controller's own)")
	dur(&c.nsIdle, "namespace-credentials-idle", otc.DefaultPoolIdle, "how long a namespace's logged-in OTC client is kept unused")
	fs.IntVar(&c.maxInFlight, "max-inflight", 8, "hook calls served at once (with at most 32 MiB of bodies); more wait up to 2s, then get 429 Retry-After: 1")
	fs.IntVar(&c.maxPerNS, "max-inflight-per-namespace", 0, "of --max-inflight, how many the objects of one namespace may hold at once (default half, rounded up)")
	fs.IntVar(&c.maxConns, "max-conns-per-client", 32, "connections one client address may hold open to each port; more are closed at once")
	str(&c.tlsCert, "tls-cert-file", "", "PEM serving certificate of the hooks (re-read when it changes); with --tls-key-file and --hook-tokens, required unless --insecure-no-auth")
	str(&c.tlsKey, "tls-key-file", "", "PEM private key of --tls-cert-file")
	str(&c.hookTokens, "hook-tokens", "", "file, or directory of files, each holding one bearer token a hook call may present (Metacontroller's; re-read when they change)")
	fs.BoolVar(&c.insecureNoAuth, "insecure-no-auth", false, "serve the hooks over plain HTTP to any caller, without a credential: for a laptop (make run), never a cluster")
	c.logLevel = slog.LevelInfo
	fs.TextVar(&c.logLevel, "log-level", c.logLevel, "log level: DEBUG, INFO, WARN or ERROR")
	c.simEndpoints = otcsim.EndpointFlags{}
	fs.Var(fieldsValue{c.simEndpoints}, "sim-endpoint", "with --cloud sim: back instances with a real database server, [NAMESPACE/NAME=|INSTANCE-NAME=|engine:ENGINE=]HOST:PORT (engine:PostgreSQL=HOST:PORT: every PostgreSQL instance; HOST:PORT alone: every instance); repeatable, or space-separated in the variable")
	fs.BoolVar(&c.version, "version", false, "print the version and exit")

	envErr := applyEnv(fs, getenv)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.version {
		return c, nil
	}
	if err := errors.Join(envErr, checkFlags(fs)); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if len(c.simEndpoints) > 0 && c.cloud != cloudSim {
		return c, errors.New("--sim-endpoint needs --cloud sim")
	}
	if c.cloud != cloudOTC && c.cloud != cloudSim {
		return c, fmt.Errorf("%s must be %q or %q, not %q", setting("cloud"), cloudOTC, cloudSim, c.cloud)
	}
	for _, a := range []struct{ name, addr string }{{"listen", c.listen}, {"sim-listen", c.simListen}, {"logs-listen", c.logsListen}} {
		if _, _, err := net.SplitHostPort(a.addr); err != nil {
			return c, fmt.Errorf("%s %q: want HOST:PORT or :PORT", setting(a.name), a.addr)
		}
	}
	if c.jobImage == "" || strings.ContainsAny(c.jobImage, " \t\n") {
		return c, fmt.Errorf("%s %q: want an image reference", setting("job-image"), c.jobImage)
	}
	if c.hookTimeout >= metacontrollerTimeout {
		return c, fmt.Errorf("%s %s: must be under Metacontroller's webhook timeout (%s), or Metacontroller gives up before the answer", setting("hook-timeout"), c.hookTimeout, metacontrollerTimeout)
	}
	if u, err := url.Parse(c.logsURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return c, fmt.Errorf("%s %q: want the http(s) URL log Jobs reach the logs port at", setting("logs-url"), c.logsURL)
	}
	if c.nsCredentials != reconcile.CredentialsOptional && c.nsCredentials != reconcile.CredentialsRequired {
		return c, fmt.Errorf("%s must be %q or %q, not %q", setting("namespace-credentials"), reconcile.CredentialsOptional, reconcile.CredentialsRequired, c.nsCredentials)
	}
	if errs := validation.IsDNS1123Subdomain(c.nsSecret); len(errs) > 0 {
		return c, fmt.Errorf("%s %q: not a Secret name: %s", setting("namespace-credentials-secret"), c.nsSecret, strings.Join(errs, "; "))
	}
	for _, a := range strings.Split(c.nsAuthURLs, ",") {
		if u, err := url.Parse(strings.TrimSpace(a)); a != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
			return c, fmt.Errorf("%s %q: want comma-separated http(s) URLs", setting("namespace-credentials-auth-urls"), a)
		}
	}
	if c.logsTTL <= 5*time.Minute {
		return c, fmt.Errorf("--logs-ttl (%s) must be longer than the log Job's deadline (5m)", c.logsTTL)
	}
	if c.maxInFlight < 1 {
		return c, fmt.Errorf("--max-inflight must be at least 1, not %d", c.maxInFlight)
	}
	if c.maxPerNS < 0 || c.maxPerNS > c.maxInFlight {
		return c, fmt.Errorf("%s must be between 1 and --max-inflight (%d), or 0 for half of it, not %d", setting("max-inflight-per-namespace"), c.maxInFlight, c.maxPerNS)
	}
	if c.maxConns < 1 {
		return c, fmt.Errorf("%s must be at least 1, not %d", setting("max-conns-per-client"), c.maxConns)
	}
	switch auth := c.tlsCert != "" || c.tlsKey != "" || c.hookTokens != ""; {
	case c.insecureNoAuth && auth:
		return c, fmt.Errorf("%s contradicts %s, %s and %s: choose one", setting("insecure-no-auth"), setting("tls-cert-file"), setting("tls-key-file"), setting("hook-tokens"))
	case !c.insecureNoAuth && (c.tlsCert == "" || c.tlsKey == "" || c.hookTokens == ""):
		return c, errors.New("the hooks answer only Metacontroller: set " + setting("tls-cert-file") + ", " + setting("tls-key-file") + " and " +
			setting("hook-tokens") + " (go run ./cmd/rds-hooks-secrets makes them; docs/tenancy.md), or --insecure-no-auth to serve them to anyone on a laptop")
	}
	if c.clusterID == "" && c.cloud == cloudSim {
		c.clusterID = "local"
	}
	switch {
	case c.clusterID == "":
		return c, errors.New("--cluster-id (RDS_HOOKS_CLUSTER_ID) is required with --cloud otc: " +
			"choose a name for this cluster (e.g. its own name), 1-32 of [a-z0-9-], unique among the clusters that share an OTC project, and never change it: " +
			"it is written into the ownership tags and names of every instance the controller creates")
	case !reconcile.ClusterIDPattern.MatchString(c.clusterID):
		return c, fmt.Errorf("%s %q is not 1-32 of [a-z0-9-]", setting("cluster-id"), c.clusterID)
	}
	if !slices.Contains(reconcile.AdoptionPolicies, reconcile.AdoptionPolicy(c.adoption)) {
		return c, fmt.Errorf("%s must be one of %v, not %q", setting("adoption"), reconcile.AdoptionPolicies, c.adoption)
	}
	if c.hookTimeout <= c.callTimeout {
		return c, fmt.Errorf("--hook-timeout (%s) must be longer than --call-timeout (%s)", c.hookTimeout, c.callTimeout)
	}
	return c, nil
}

// applyEnv sets every flag but --version from its RDS_HOOKS_* variable, if that is set, and
// returns one error naming each variable whose value the flag refuses.
func applyEnv(fs *flag.FlagSet, getenv func(string) string) error {
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == "version" {
			return
		}
		name := envName(f.Name)
		if v := getenv(name); v != "" {
			if err := f.Value.Set(v); err != nil {
				if _, ok := durationOf(f); ok {
					err = errors.New("want a duration such as 500ms, 8s or 5m") // the flag package says "parse error"
				}
				errs = append(errs, fmt.Errorf("%s=%q: %w", name, v, err))
			}
		}
	})
	return errors.Join(errs...)
}

// fieldsValue sets a repeatable flag from a space-separated list, so that its variable can hold
// several values.
type fieldsValue struct{ flag.Value }

func (f fieldsValue) String() string {
	if f.Value == nil { // the flag package asks a zero value for its default
		return ""
	}
	return f.Value.String()
}

func (f fieldsValue) Set(v string) error {
	for _, field := range strings.Fields(v) {
		if err := f.Value.Set(field); err != nil {
			return err
		}
	}
	return nil
}

// durationOf returns the value of a duration flag.
func durationOf(f *flag.Flag) (time.Duration, bool) {
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return 0, false
	}
	d, ok := g.Get().(time.Duration)
	return d, ok
}

// zeroMeansOff are the duration flags whose 0 switches a feature off.
var zeroMeansOff = map[string]bool{"view-max-age": true}

// checkFlags refuses a duration flag of 0 or less (no deadline, period or grace is meant so), but
// for the flags whose 0 means off, which refuse only a negative value.
func checkFlags(fs *flag.FlagSet) error {
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		d, ok := durationOf(f)
		switch {
		case !ok:
		case zeroMeansOff[f.Name] && d < 0:
			errs = append(errs, fmt.Errorf("%s %s: must be 0 (off) or more", setting(f.Name), d))
		case !zeroMeansOff[f.Name] && d <= 0:
			errs = append(errs, fmt.Errorf("%s %s: must be more than 0", setting(f.Name), d))
		}
	})
	return errors.Join(errs...)
}

// run serves until ctx ends (SIGTERM), then drains: /readyz turns 503, in-flight calls finish.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseFlags(args, getenv, stderr)
	if err != nil {
		return err
	}
	if cfg.version {
		fmt.Fprintln(stdout, version.String("rds-hooks"))
		return nil
	}
	logger := slog.New(slog.NewJSONHandler(stdout, &slog.HandlerOptions{Level: cfg.logLevel}))

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	metrics := server.NewMetrics(reg)

	// The cloud: the real OTC unless --cloud sim, never a silent fallback.
	credentials := getenv
	if cfg.cloud == cloudSim {
		sim, err := startSim(cfg.simListen, cfg.simEndpoints, logger)
		if err != nil {
			return err
		}
		defer sim.Close()
		env := sim.Env()
		credentials = func(k string) string { return env[k] }
		logger.Info("embedded OTC simulator listening", "url", sim.URL, "endpoints", cfg.simEndpoints.String())
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
		return fmt.Errorf("log in to OTC at %s: %w", loginURL(occfg), err)
	}
	logger.Info("logged in to OTC", "region", client.Region(), "cloud", cfg.cloud, "cluster_id", cfg.clusterID, "adoption", cfg.adoption)

	// The clients for the logins in the objects' namespaces: never the controller's own, which
	// serves only objects without one (and none with --namespace-credentials Required).
	var authURLs []string
	for _, u := range strings.Split(cfg.nsAuthURLs, ",") {
		if u = strings.TrimSpace(u); u != "" {
			authURLs = append(authURLs, u)
		}
	}
	// Each credential set's client gets a shared view of its own project, like the controller's own.
	inView := func(c cloud.Cloud) cloud.Cloud { return c }
	if cfg.viewMaxAge > 0 {
		inView = func(c cloud.Cloud) cloud.Cloud {
			return view.Wrap(c, view.Options{MaxAge: cfg.viewMaxAge, Logger: logger.With("component", "view")})
		}
	}
	pool, err := otc.NewPool(otc.PoolConfig{Base: occfg, AuthURLs: authURLs, Idle: cfg.nsIdle, Wrap: inView})
	if err != nil {
		return fmt.Errorf("namespace credentials: %w", err)
	}

	// NOTE: generated passwords derive from a stable secret, so that two calls for one object
	// answer the same password (sync/password.go).
	passwordKey := secret.New(cfg.passwordKey)
	if passwordKey.Empty() {
		passwordKey = occfg.StableSecret()
	}
	if passwordKey.Empty() {
		logger.Warn("no stable secret for generated passwords and log Job capabilities (token login): set --password-key; log requests are refused until then")
	}
	dbCA, err := loadCA(cfg.dbCAFile)
	if err != nil {
		return err
	}
	// Steady syncs read one shared, paged listing of the project's instances (docs/view.md).
	hooksCloud := inView(client)
	reconciler := reconcile.New(reconcile.Config{
		Cloud:         hooksCloud,
		Clouds:        pool,
		Credentials:   reconcile.CredentialsConfig{Mode: cfg.nsCredentials, DefaultSecret: cfg.nsSecret},
		PasswordKey:   passwordKey,
		CallTimeout:   cfg.callTimeout,
		ResyncPending: cfg.resyncPending,
		ResyncSteady:  cfg.resyncSteady,
		Databases:     reconcile.DatabasesConfig{DriftCheck: cfg.sqlDrift, CA: dbCA},

		ParametersDriftCheck: cfg.paramsDrift,
		JobImage:             cfg.jobImage,
		LogsURL:              cfg.logsURL,

		LogsCapabilityTTL: cfg.logsTTL,
		ClusterID:         cfg.clusterID,
		Adoption:          reconcile.AdoptionPolicy(cfg.adoption),
	})
	var (
		tokens  *hookauth.Tokens
		serving *hookauth.Certificate
	)
	if cfg.insecureNoAuth {
		logger.Warn("THE HOOKS ARE NOT AUTHENTICATED (--insecure-no-auth): anyone who reaches " + cfg.listen +
			" can create, copy and delete databases; plain HTTP, for a laptop only, never a cluster")
	} else {
		if tokens, err = hookauth.NewTokens(cfg.hookTokens, logger); err != nil {
			return fmt.Errorf("%s: %w", setting("hook-tokens"), err)
		}
		if serving, err = hookauth.NewCertificate(cfg.tlsCert, cfg.tlsKey, logger); err != nil {
			return fmt.Errorf("%s: %w", setting("tls-cert-file"), err)
		}
	}
	opts := server.Options{
		Reconciler:              reconciler,
		Logger:                  logger,
		Metrics:                 metrics,
		Gatherer:                reg,
		HookTimeout:             cfg.hookTimeout,
		MaxInFlight:             cfg.maxInFlight,
		MaxInFlightPerNamespace: cfg.maxPerNS,
		Insecure:                cfg.insecureNoAuth,
	}
	if tokens != nil {
		opts.Auth = tokens
	}
	handler := server.New(opts)

	l, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return err
	}
	ll, err := net.Listen("tcp", cfg.logsListen)
	if err != nil {
		l.Close()
		return fmt.Errorf("--logs-listen: %w", err)
	}
	l, ll = server.LimitPerClient(l, cfg.maxConns), server.LimitPerClient(ll, cfg.maxConns)
	if serving != nil {
		l = tls.NewListener(l, serving.TLSConfig())
	}
	const logsReadTimeout = 60 * time.Second
	logsSrv := &http.Server{
		Handler: server.NewLogs(server.LogsOptions{
			Reader: reconciler, Logger: logger.With("port", "logs"), Metrics: metrics, Timeout: logsReadTimeout,
		}),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      logsReadTimeout + 15*time.Second,
		IdleTimeout:       time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      cfg.hookTimeout + 5*time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	logger.Info("rds-hooks listening", "addr", l.Addr().String(), "logsAddr", ll.Addr().String(),
		"tls", serving != nil, "authenticated", tokens != nil)
	if cfg.cloud == cloudSim && cfg.insecureNoAuth {
		printTryIt(stderr, l.Addr())
	}

	errc, logsErrc := make(chan error, 1), make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	go func() { logsErrc <- logsSrv.Serve(ll) }()
	var served error
	select {
	case served = <-errc:
		errc <- served
	case served = <-logsErrc:
		logsErrc <- served
	case <-ctx.Done():
	}
	if served != nil {
		logger.Error("a listener failed; shutting down", "error", served.Error())
	} else {
		logger.Info("shutting down", "grace", cfg.shutdownGrace.String())
	}
	handler.Drain()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), cfg.shutdownGrace)
	defer cancel()
	// Both ports drain in parallel: in-flight hook calls and log reads finish within the grace.
	shutdownErrs := make(chan error, 2)
	go func() { shutdownErrs <- srv.Shutdown(shutdownCtx) }()
	go func() { shutdownErrs <- logsSrv.Shutdown(shutdownCtx) }()
	for range 2 {
		if err := <-shutdownErrs; err != nil {
			return fmt.Errorf("shutdown: %w", err)
		}
	}
	for _, c := range []chan error{errc, logsErrc} {
		if err := <-c; !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	}
	logger.Info("stopped")
	return nil
}

// loginURL names where a login went: the auth URL, or the clouds.yaml entry it came from.
func loginURL(c otc.Config) string {
	if c.AuthURL == "" && c.Cloud != "" {
		return "the auth URL of cloud " + strconv.Quote(c.Cloud)
	}
	return c.AuthURL
}

// startSim serves the OTC API simulator on addr, on the real clock, for trying the hooks locally;
// endpoints back its instances with real database servers (make run DB=HOST:PORT).
func startSim(addr string, endpoints map[string]string, logger *slog.Logger) (*otcsim.Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("embedded simulator: %w", err)
	}
	// The control API (/_sim) lets a person pin metrics, fail instances, ... (docs/autopilot.md).
	sim := otcsim.New(otcsim.Options{Logger: logger.With("component", "otcsim"), Endpoints: endpoints, EnableControl: true})
	return otcsim.Serve(l, sim), nil
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

// loadCA reads a PEM bundle of CA certificates; "" is none (nil: no server is trusted).
func loadCA(path string) (*x509.CertPool, error) {
	if path == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--db-ca-file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--db-ca-file %s holds no PEM certificate", path)
	}
	return pool, nil
}
