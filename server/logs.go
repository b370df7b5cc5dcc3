package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/cloud"
	"github.com/mcsps/rds-lambda-controller/sync/logsapi"
)

// LogsReader is what the logs port calls (reconcile.Reconciler.ReadLogs).
type LogsReader interface {
	ReadLogs(ctx context.Context, token string, req logsapi.Request) (*logsapi.Response, error)
}

// CapabilityChecker is a LogsReader that can tell a capability it would serve without reading
// anything (reconcile.Reconciler.CheckCapability); the port then asks it before it reads a body.
type CapabilityChecker interface {
	CheckCapability(token string) error
}

// LogsOptions configure the logs port's handler.
type LogsOptions struct {
	Reader  LogsReader
	Logger  *slog.Logger
	Metrics *Metrics
	// Timeout bounds one read (the pages of one log). Default 60s.
	Timeout time.Duration
	// MaxBodyBytes limits request bodies. Default 32 KiB (a capability is a few KiB).
	MaxBodyBytes int64
	// MaxInFlight caps the reads served at once, each holding up to 2000 entries in memory; more
	// are answered 503 with Retry-After. Default 4.
	MaxInFlight int
}

// LogsServer serves the log Jobs on a port of its own: POST /v1/logs and nothing else. A Job
// presents its capability and gets one log of the one instance the capability names; no endpoint
// here reads an instance's details or changes anything.
type LogsServer struct {
	opts   LogsOptions
	engine *gin.Engine
	slots  chan struct{}
	// bodies bounds the request bodies being read at once (memory: bodies × MaxBodyBytes). A
	// body waits for its turn; only a read holds a slot (slots).
	bodies chan struct{}
	// refusals holds back the log lines of calls without a capability beyond one a second.
	refusals logEvery
}

// bodiesPerSlot is how many bodies may be read at once per slot: reading one is quick for a Job,
// and bodies are small, but any pod may connect and hold its body back.
const bodiesPerSlot = 16

// bodyWait is how long a request waits for its turn to send its body before it is answered 503.
const bodyWait = 5 * time.Second

// NewLogs builds the logs port's handler.
func NewLogs(opts LogsOptions) *LogsServer {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 60 * time.Second
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 32 << 10
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = 4
	}
	if opts.Metrics == nil {
		opts.Metrics = NewMetrics(prometheus.NewRegistry())
	}
	gin.SetMode(gin.ReleaseMode)
	s := &LogsServer{opts: opts, engine: gin.New(), slots: make(chan struct{}, opts.MaxInFlight),
		bodies: make(chan struct{}, bodiesPerSlot*opts.MaxInFlight)}
	s.engine.ContextWithFallback = true
	s.engine.HandleMethodNotAllowed = true
	// NOTE: no proxy is trusted: a Job must not choose the client address the refusals log.
	_ = s.engine.SetTrustedProxies(nil)
	s.engine.Use(gin.CustomRecoveryWithWriter(io.Discard, func(c *gin.Context, err any) {
		s.opts.Logger.Error("panic in logs handler", "panic", err)
		c.AbortWithStatusJSON(http.StatusInternalServerError, logsapi.Error{Error: "internal error"})
	}))
	s.engine.POST(logsapi.Path, s.read)
	s.engine.NoRoute(func(c *gin.Context) {
		c.AbortWithStatusJSON(http.StatusNotFound, logsapi.Error{Error: "not found: this port serves only POST " + logsapi.Path})
	})
	s.engine.NoMethod(func(c *gin.Context) {
		c.AbortWithStatusJSON(http.StatusMethodNotAllowed, logsapi.Error{Error: "method not allowed: this port serves only POST " + logsapi.Path})
	})
	return s
}

// ServeHTTP implements http.Handler.
func (s *LogsServer) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.engine.ServeHTTP(w, r) }

func (s *LogsServer) read(c *gin.Context) {
	start := time.Now()
	outcome := "ok"
	defer func() { s.opts.Metrics.observeLogsRead(outcome, time.Since(start)) }()
	bodyRead := false
	fail := func(status int, out, msg string) {
		outcome = out
		if !bodyRead {
			closeUnread(c)
		}
		// NOTE: never the token or the body; the client's address helps to trace a refused Job. Any
		// pod can make refusals without a capability: those are logged at most once a second.
		n, ok := 0, true
		if out == "unauthorized" || out == "bad_request" {
			n, ok = s.refusals.tell(time.Now())
		}
		if ok {
			s.opts.Logger.Warn("log read refused", "outcome", out, "status", status, "client", c.ClientIP(), "reason", msg, "alsoRefusedSinceLastLine", n)
		}
		c.AbortWithStatusJSON(status, logsapi.Error{Error: msg})
	}

	// NOTE: any pod may reach this port. The capability, in the header, is checked before the body
	// is read, and the body waits for its turn (bodies), so a client without a capability costs
	// its headers only, and one that trickles its body holds no slot of the Jobs.
	token, ok := strings.CutPrefix(c.GetHeader("Authorization"), "Bearer ")
	if !ok || token == "" {
		fail(http.StatusUnauthorized, "unauthorized", "no capability: send the log Job's token as Authorization: Bearer <token>")
		return
	}
	if check, ok := s.opts.Reader.(CapabilityChecker); ok {
		var expired *reconcile.CapabilityExpiredError
		switch err := check.CheckCapability(token); {
		case err == nil:
		case errors.Is(err, reconcile.ErrLogsUnavailable):
			fail(http.StatusServiceUnavailable, "unavailable", err.Error())
			return
		case errors.As(err, &expired):
			fail(http.StatusUnauthorized, "expired", err.Error())
			return
		default:
			fail(http.StatusUnauthorized, "unauthorized", reconcile.ErrCapabilityInvalid.Error())
			return
		}
	}
	body, err := s.readBody(c)
	bodyRead = err == nil
	if errors.Is(err, errBodiesBusy) {
		c.Header("Retry-After", "2")
		fail(http.StatusServiceUnavailable, "busy", "the hooks are serving other log reads; try again shortly")
		return
	}
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			fail(http.StatusRequestEntityTooLarge, "bad_request", "request body exceeds "+strconv.FormatInt(s.opts.MaxBodyBytes, 10)+" bytes")
			return
		}
		fail(http.StatusBadRequest, "bad_request", "could not read request body")
		return
	}
	var req logsapi.Request
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		fail(http.StatusBadRequest, "bad_request", "the body is not a log request")
		return
	}
	if req.Type != logsapi.TypeError && req.Type != logsapi.TypeSlow {
		fail(http.StatusBadRequest, "bad_request", "type must be error or slow")
		return
	}
	if req.Token != "" && req.Token != token {
		fail(http.StatusBadRequest, "bad_request", "the body names another capability than the Authorization header")
		return
	}

	// NOTE: the slot is taken only once a whole, well-formed request with a token is here: any pod
	// may reach this port, and a client trickling its body (up to the server's ReadTimeout) must
	// not hold the slots of the Jobs.
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	default:
		c.Header("Retry-After", "2")
		fail(http.StatusServiceUnavailable, "busy", "the hooks are serving other log reads; try again shortly")
		return
	}

	ctx, cancel := context.WithTimeout(reconcile.WithLogger(c.Request.Context(), s.opts.Logger), s.opts.Timeout)
	defer cancel()
	resp, err := s.opts.Reader.ReadLogs(ctx, token, req)
	var (
		expired *reconcile.CapabilityExpiredError
		refused *reconcile.LogsRefusedError
		ce      *reconcile.LogsCloudError
	)
	switch {
	case err == nil:
		c.PureJSON(http.StatusOK, resp) // no HTML escaping: it would swell the entries
	case errors.Is(err, reconcile.ErrLogsUnavailable):
		fail(http.StatusServiceUnavailable, "unavailable", err.Error())
	case errors.Is(err, reconcile.ErrCapabilityBusy):
		c.Header("Retry-After", "2")
		fail(http.StatusTooManyRequests, "busy", err.Error())
	case errors.Is(err, reconcile.ErrCapabilityInvalid):
		fail(http.StatusUnauthorized, "unauthorized", err.Error())
	case errors.As(err, &expired):
		fail(http.StatusUnauthorized, "expired", err.Error())
	case errors.As(err, &refused):
		fail(http.StatusForbidden, "forbidden", err.Error())
	case errors.As(err, &ce) && ce.Kind == cloud.KindThrottled:
		retry := ce.RetryAfter
		if retry <= 0 {
			retry = 30 * time.Second
		}
		c.Header("Retry-After", strconv.Itoa(int(math.Ceil(retry.Seconds()))))
		fail(http.StatusTooManyRequests, "throttled", err.Error())
	case errors.As(err, &ce):
		fail(http.StatusBadGateway, "cloud_error", err.Error())
	default:
		s.opts.Logger.Error("log read failed", "error", err.Error())
		fail(http.StatusInternalServerError, "error", "internal error")
	}
}

var errBodiesBusy = errors.New("too many bodies being read")

// readBody reads a request's body once it is its turn (bodies), at most bodyWait after it arrived.
func (s *LogsServer) readBody(c *gin.Context) ([]byte, error) {
	wait := time.NewTimer(bodyWait)
	defer wait.Stop()
	select {
	case s.bodies <- struct{}{}:
		defer func() { <-s.bodies }()
	case <-wait.C:
		return nil, errBodiesBusy
	case <-c.Request.Context().Done():
		return nil, c.Request.Context().Err()
	}
	return io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, s.opts.MaxBodyBytes))
}
