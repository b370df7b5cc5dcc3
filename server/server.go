// Package server is the HTTP face of the hooks: it decodes Metacontroller's calls, hands them to the
// reconciler and encodes the answers. Nothing domain-specific lives here.
package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/semaphore"

	rdssync "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/hook"
)

// Reconciler is what the hooks call.
type Reconciler interface {
	Sync(ctx context.Context, req *hook.Request) (*hook.SyncResponse, error)
	Finalize(ctx context.Context, req *hook.Request) (*hook.FinalizeResponse, error)
}

// customizer is a Reconciler that answers customize calls itself (rdssync.Reconciler: it adds
// the Secret of the object's OTC login); for any other, the package's Customize answers.
type customizer interface {
	Customize(req *hook.CustomizeRequest) *hook.CustomizeResponse
}

// Options configure the handler.
type Options struct {
	Reconciler Reconciler
	Logger     *slog.Logger
	Metrics    *Metrics
	Gatherer   prometheus.Gatherer
	// HookTimeout bounds one hook call; it must stay under Metacontroller's webhook timeout (10 s
	// by default). Default 8s.
	HookTimeout time.Duration
	// MaxBodyBytes limits request bodies. Default 8 MiB.
	MaxBodyBytes int64
	// MaxInFlight is how many hook calls are served at once (reading, decoding and reconciling).
	// It bounds memory: each call may hold a body of MaxBodyBytes and its decoded form. Default 8.
	MaxInFlight int
	// MaxInFlightBytes bounds the bodies of the hook calls served at once, by their announced
	// size (MaxBodyBytes when unknown): many small calls run side by side, few large ones.
	// Default 32 MiB; never less than MaxBodyBytes.
	MaxInFlightBytes int64
	// InFlightWait is how long a hook call waits for a free slot before it answers 429 with
	// Retry-After: 1. Default 2s.
	InFlightWait time.Duration
}

// Server is the hooks' HTTP handler.
type Server struct {
	opts     Options
	engine   *gin.Engine
	draining atomic.Bool
	inflight chan struct{}       // a token per hook call being served
	bodies   *semaphore.Weighted // the body bytes of the calls being served
}

// New builds the handler.
func New(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.HookTimeout <= 0 {
		opts.HookTimeout = 8 * time.Second
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 8 << 20
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = 8
	}
	if opts.InFlightWait <= 0 {
		opts.InFlightWait = 2 * time.Second
	}
	if opts.MaxInFlightBytes <= 0 {
		opts.MaxInFlightBytes = 32 << 20
	}
	opts.MaxInFlightBytes = max(opts.MaxInFlightBytes, opts.MaxBodyBytes)
	if opts.Metrics == nil || opts.Gatherer == nil {
		reg := prometheus.NewRegistry()
		opts.Metrics, opts.Gatherer = NewMetrics(reg), reg
	}
	gin.SetMode(gin.ReleaseMode)
	s := &Server{
		opts: opts, engine: gin.New(),
		inflight: make(chan struct{}, opts.MaxInFlight), bodies: semaphore.NewWeighted(opts.MaxInFlightBytes),
	}
	s.engine.ContextWithFallback = true
	s.routes()
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.engine.ServeHTTP(w, r) }

// Drain makes /readyz answer 503 so that no new calls are routed here during shutdown.
func (s *Server) Drain() { s.draining.Store(true) }

func (s *Server) healthz(c *gin.Context) { c.String(http.StatusOK, "ok") }

func (s *Server) readyz(c *gin.Context) {
	if s.draining.Load() {
		c.String(http.StatusServiceUnavailable, "shutting down")
		return
	}
	c.String(http.StatusOK, "ok")
}

func (s *Server) metrics() gin.HandlerFunc {
	h := promhttp.HandlerFor(s.opts.Gatherer, promhttp.HandlerOpts{})
	return func(c *gin.Context) { h.ServeHTTP(c.Writer, c.Request) }
}

// methodNotAllowed answers a known path called with the wrong method (gin has set Allow).
func (s *Server) methodNotAllowed(c *gin.Context) {
	c.AbortWithStatusJSON(http.StatusMethodNotAllowed, gin.H{
		"error": c.Request.Method + " is not allowed on " + c.Request.URL.Path + "; allowed: " + c.Writer.Header().Get("Allow"),
	})
}

// recovery answers 500 for a panic and logs it, without the request body.
func (s *Server) recovery() gin.HandlerFunc {
	return gin.CustomRecoveryWithWriter(io.Discard, func(c *gin.Context, err any) {
		s.opts.Logger.Error("panic in handler", "path", c.FullPath(), "panic", err)
		c.AbortWithStatusJSON(http.StatusInternalServerError, gin.H{"error": "internal error"})
	})
}

// limit serves at most MaxInFlight hook calls, with at most MaxInFlightBytes of bodies, at once,
// before their bodies are read: a call that finds no room within InFlightWait answers 429 with
// Retry-After: 1, which Metacontroller retries without an Event or a backoff. Memory then stays
// bounded however many calls arrive.
func (s *Server) limit(hook string) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		// HookTimeout counts from the call's arrival: time spent waiting here is part of it.
		call, cancelCall := context.WithTimeout(c.Request.Context(), s.opts.HookTimeout)
		defer cancelCall()
		c.Request = c.Request.WithContext(call)
		ctx, cancel := context.WithTimeout(call, s.opts.InFlightWait)
		defer cancel()
		select {
		case s.inflight <- struct{}{}:
		case <-ctx.Done():
			s.busy(c, hook, time.Since(start))
			return
		}
		defer func() { <-s.inflight }()
		size := c.Request.ContentLength
		if size < 0 || size > s.opts.MaxBodyBytes {
			size = s.opts.MaxBodyBytes // unknown, or refused with 413 once read
		}
		if err := s.bodies.Acquire(ctx, size); err != nil {
			s.busy(c, hook, time.Since(start))
			return
		}
		defer s.bodies.Release(size)
		c.Next()
	}
}

func (s *Server) busy(c *gin.Context, hook string, waited time.Duration) {
	s.opts.Metrics.observeHook(hook, "busy", waited)
	s.opts.Logger.Warn("too many hook calls in flight; asking Metacontroller to retry", "hook", hook, "maxInFlight", s.opts.MaxInFlight)
	c.Header("Retry-After", "1")
	c.AbortWithStatusJSON(http.StatusTooManyRequests, gin.H{"error": "too many calls in flight"})
}

// readBody reads a hook body under the size limit.
func (s *Server) readBody(c *gin.Context) ([]byte, bool) {
	// NOTE: a buffer of the announced size (never above the limit) is read into at once; growing
	// one by doubling, as io.ReadAll does, allocates about twice a large body.
	buf := bytes.NewBuffer(make([]byte, 0, min(max(c.Request.ContentLength, 0), s.opts.MaxBodyBytes)+bytes.MinRead))
	_, err := buf.ReadFrom(http.MaxBytesReader(c.Writer, c.Request.Body, s.opts.MaxBodyBytes))
	body := buf.Bytes()
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			// NOTE: Metacontroller sends the parent and all its children; a refused call is retried
			// forever, so say so in the log (without the body: it holds Secrets).
			s.opts.Logger.Warn("request body too large", "path", c.Request.URL.Path,
				"limitBytes", s.opts.MaxBodyBytes, "contentLength", c.Request.ContentLength)
			c.AbortWithStatusJSON(http.StatusRequestEntityTooLarge, gin.H{"error": "request body exceeds " + strconv.FormatInt(s.opts.MaxBodyBytes, 10) + " bytes"})
			return nil, false
		}
		s.opts.Logger.Warn("could not read request body", "path", c.Request.URL.Path, "error", err.Error())
		c.AbortWithStatusJSON(http.StatusBadRequest, gin.H{"error": "could not read request body"})
		return nil, false
	}
	return body, true
}

// hookCall is the shared shape of sync and finalize: decode, reconcile under a deadline, encode.
func (s *Server) hookCall(name string, run func(ctx context.Context, req *hook.Request) (any, error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		outcome := "ok"
		defer func() { s.opts.Metrics.observeHook(name, outcome, time.Since(start)) }()

		body, ok := s.readBody(c)
		if !ok {
			outcome = "bad_request"
			return
		}
		req, err := hook.DecodeRequest(body)
		if err != nil {
			outcome = "bad_request"
			s.opts.Logger.Warn("bad hook request", "hook", name, "error", err.Error())
			c.AbortWithStatusJSON(http.StatusBadRequest, gin.H{"error": err.Error()})
			return
		}
		p := &req.Parent
		log := s.opts.Logger.With("hook", name, "rds", p.Namespace+"/"+p.Name, "uid", string(p.UID), "generation", p.Generation)
		ctx, cancel := context.WithTimeout(rdssync.WithLogger(c.Request.Context(), log), s.opts.HookTimeout)
		defer cancel()

		resp, err := run(ctx, req)
		var throttled *rdssync.ThrottledError
		switch {
		case errors.As(err, &throttled):
			outcome = "throttled"
			secs := int(math.Ceil(throttled.RetryAfter.Seconds()))
			log.Info("OTC throttled; asking Metacontroller to retry later", "retryAfterSeconds", secs)
			c.Header("Retry-After", strconv.Itoa(secs))
			c.AbortWithStatusJSON(http.StatusTooManyRequests, gin.H{"error": "OTC is throttling requests"})
			return
		case errors.Is(err, rdssync.ErrCallInFlight):
			// Another call for this object is still running: Metacontroller retries a 429 after
			// Retry-After without an Event or a backoff; a 500 would be both.
			outcome = "in_flight"
			c.Header("Retry-After", "1")
			c.AbortWithStatusJSON(http.StatusTooManyRequests, gin.H{"error": "another call for this object is in flight"})
			return
		case err != nil:
			outcome = "error"
			log.Error("hook failed", "error", err.Error())
			c.AbortWithStatusJSON(http.StatusInternalServerError, gin.H{"error": "internal error"})
			return
		}
		out, err := json.Marshal(resp)
		if err != nil {
			outcome = "error"
			log.Error("encode response", "error", err.Error())
			c.AbortWithStatusJSON(http.StatusInternalServerError, gin.H{"error": "internal error"})
			return
		}
		log.Debug("hook answered", "duration", time.Since(start))
		c.Data(http.StatusOK, "application/json", out)
	}
}

func (s *Server) sync() gin.HandlerFunc {
	return s.hookCall("sync", func(ctx context.Context, req *hook.Request) (any, error) {
		return s.opts.Reconciler.Sync(ctx, req)
	})
}

func (s *Server) finalize() gin.HandlerFunc {
	return s.hookCall("finalize", func(ctx context.Context, req *hook.Request) (any, error) {
		return s.opts.Reconciler.Finalize(ctx, req)
	})
}

func (s *Server) customize(c *gin.Context) {
	start := time.Now()
	body, ok := s.readBody(c)
	if !ok {
		s.opts.Metrics.observeHook("customize", "bad_request", time.Since(start))
		return
	}
	req, err := hook.DecodeCustomizeRequest(body)
	if err != nil {
		s.opts.Metrics.observeHook("customize", "bad_request", time.Since(start))
		s.opts.Logger.Warn("bad hook request", "hook", "customize", "error", err.Error())
		c.AbortWithStatusJSON(http.StatusBadRequest, gin.H{"error": err.Error()})
		return
	}
	answer := rdssync.Customize
	if cz, ok := s.opts.Reconciler.(customizer); ok {
		answer = cz.Customize
	}
	// An invalid spec is reported by the sync call; here it asks only for what its valid references
	// name, which the finalize call may still need (customize.go in this package).
	resp := answer(req)
	resp.RelatedResources = validRules(resp.RelatedResources)
	c.JSON(http.StatusOK, resp)
	s.opts.Metrics.observeHook("customize", "ok", time.Since(start))
}
