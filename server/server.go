// Package server is the HTTP face of the hooks: it decodes Metacontroller's calls, hands them to the
// reconciler and encodes the answers. Nothing domain-specific lives here.
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
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	rdssync "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/hook"
)

// Reconciler is what the hooks call.
type Reconciler interface {
	Sync(ctx context.Context, req *hook.Request) (*hook.SyncResponse, error)
	Finalize(ctx context.Context, req *hook.Request) (*hook.FinalizeResponse, error)
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
}

// Server is the hooks' HTTP handler.
type Server struct {
	opts     Options
	engine   *gin.Engine
	draining atomic.Bool
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
	if opts.Metrics == nil || opts.Gatherer == nil {
		reg := prometheus.NewRegistry()
		opts.Metrics, opts.Gatherer = NewMetrics(reg), reg
	}
	gin.SetMode(gin.ReleaseMode)
	s := &Server{opts: opts, engine: gin.New()}
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

// recovery answers 500 for a panic and logs it, without the request body.
func (s *Server) recovery() gin.HandlerFunc {
	return gin.CustomRecoveryWithWriter(io.Discard, func(c *gin.Context, err any) {
		s.opts.Logger.Error("panic in handler", "path", c.FullPath(), "panic", err)
		c.AbortWithStatusJSON(http.StatusInternalServerError, gin.H{"error": "internal error"})
	})
}

// readBody reads a hook body under the size limit.
func (s *Server) readBody(c *gin.Context) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, s.opts.MaxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			c.AbortWithStatusJSON(http.StatusRequestEntityTooLarge, gin.H{"error": "request body exceeds " + strconv.FormatInt(s.opts.MaxBodyBytes, 10) + " bytes"})
			return nil, false
		}
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
		c.AbortWithStatusJSON(http.StatusBadRequest, gin.H{"error": err.Error()})
		return
	}
	c.JSON(http.StatusOK, rdssync.Customize(req))
	s.opts.Metrics.observeHook("customize", "ok", time.Since(start))
}
