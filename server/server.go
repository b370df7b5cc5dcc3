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
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/semaphore"

	reconcile "github.com/mcsps/rds-lambda-controller/sync"
	"github.com/mcsps/rds-lambda-controller/sync/hook"
)

// Reconciler is what the hooks call.
type Reconciler interface {
	Sync(ctx context.Context, req *hook.Request) (*hook.SyncResponse, error)
	Finalize(ctx context.Context, req *hook.Request) (*hook.FinalizeResponse, error)
}

// customizer is a Reconciler that answers customize calls itself (reconcile.Reconciler: it adds
// the Secret of the object's OTC login); for any other, the package's Customize answers.
type customizer interface {
	Customize(req *hook.CustomizeRequest) *hook.CustomizeResponse
}

// Authenticator says whether a hook call presents Metacontroller's credential: the value of its
// Authorization header (*hookauth.Tokens).
type Authenticator interface {
	Check(authorization string) bool
}

// Options configure the handler.
type Options struct {
	Reconciler Reconciler
	Logger     *slog.Logger
	Metrics    *Metrics
	Gatherer   prometheus.Gatherer
	// Auth admits the hook calls (sync, finalize, customize) that present Metacontroller's
	// credential; the others get 401 before their body is read. Without Auth every hook call gets
	// 401, unless Insecure.
	Auth Authenticator
	// Insecure serves the hooks to any caller, without a credential: for a laptop (make run), never
	// a cluster.
	Insecure bool
	// HookTimeout bounds one hook call; it must stay under Metacontroller's webhook timeout (10 s
	// by default). Default 8s.
	HookTimeout time.Duration
	// BodyTimeout bounds the reading of a hook call's body: a caller that trickles it is answered
	// 408 and holds no slot meanwhile. Default 3s.
	BodyTimeout time.Duration
	// MaxBodyBytes limits request bodies. Default 8 MiB.
	MaxBodyBytes int64
	// MaxInFlight is how many hook calls are served (reconciled) at once. Default 8.
	MaxInFlight int
	// MaxInFlightPerNamespace is how many of them the objects of one namespace may hold at once.
	// Default half of MaxInFlight, rounded up.
	MaxInFlightPerNamespace int
	// MaxInFlightBytes bounds the bodies of the hook calls read or served at once, by their
	// announced size (MaxBodyBytes when unknown): many small calls run side by side, few large
	// ones. The calls of one namespace, served or waiting for a slot, hold at most half of it (but
	// always one call). Default 32 MiB; never less than MaxBodyBytes.
	MaxInFlightBytes int64
	// InFlightWait is how long a hook call waits for room for its body, and then for a slot, before
	// it answers 429 with Retry-After: 1. Default 2s.
	InFlightWait time.Duration
}

// Server is the hooks' HTTP handler.
type Server struct {
	opts     Options
	engine   *gin.Engine
	draining atomic.Bool
	slots    *fairSlots          // the hook calls being served, by namespace
	refusals logEvery            // the log lines of refused calls: any pod can make many
	bodies   *semaphore.Weighted // the body bytes of the calls being read or served
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
	if opts.MaxInFlightPerNamespace <= 0 {
		opts.MaxInFlightPerNamespace = (opts.MaxInFlight + 1) / 2
	}
	if opts.BodyTimeout <= 0 {
		opts.BodyTimeout = 3 * time.Second
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
		slots:  newFairSlots(opts.MaxInFlight, opts.MaxInFlightPerNamespace, opts.MaxInFlightBytes/2),
		bodies: semaphore.NewWeighted(opts.MaxInFlightBytes),
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

// authenticate answers 401 to a hook call without Metacontroller's credential, before anything
// else: its body is not read, no slot is taken, nothing is called. The log names the caller's
// address, never what it presented.
func (s *Server) authenticate(hook string) gin.HandlerFunc {
	return func(c *gin.Context) {
		if s.opts.Insecure || (s.opts.Auth != nil && s.opts.Auth.Check(c.GetHeader("Authorization"))) {
			c.Next()
			return
		}
		s.opts.Metrics.observeHook(hook, "unauthorized", 0)
		if n, ok := s.refusals.tell(time.Now()); ok {
			s.opts.Logger.Warn("hook call refused: no valid credential", "hook", hook, "client", c.Request.RemoteAddr,
				"authorization", presented(c.GetHeader("Authorization")), "alsoRefusedSinceLastLine", n)
		}
		c.Header("WWW-Authenticate", `Bearer realm="rds-hooks"`)
		closeUnread(c)
		c.AbortWithStatusJSON(http.StatusUnauthorized, gin.H{"error": "unauthorized: only Metacontroller may call the hooks"})
	}
}

// logEvery lets a kind of log line through at most once a second, counting those it held back.
type logEvery struct {
	mu         sync.Mutex
	last       time.Time
	suppressed int
}

// tell says whether to log now, and how many lines were held back since the last one.
func (l *logEvery) tell(now time.Time) (int, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.last) < time.Second {
		l.suppressed++
		return 0, false
	}
	n := l.suppressed
	l.last, l.suppressed = now, 0
	return n, true
}

// closeUnread ends an HTTP/1 connection whose request body is left unread: without it the server
// would read on, as slowly as the caller sends, to keep the connection before it answers. HTTP/2
// (Metacontroller's one connection for all its calls) resets only the stream, so the connection
// stays.
func closeUnread(c *gin.Context) {
	if c.Request.ProtoMajor == 1 {
		c.Header("Connection", "close")
	}
}

// presented says what kind of credential a refused call sent, never its value.
func presented(h string) string {
	switch {
	case h == "":
		return "none"
	case strings.HasPrefix(h, "Bearer "):
		return "wrong bearer token"
	default:
		return "not a bearer token"
	}
}

// body reads a hook call's body in turn: room for it among MaxInFlightBytes (waiting at most
// InFlightWait, then 429), then the bytes under BodyTimeout (then 408). The call's deadline,
// HookTimeout, counts from its arrival: the time spent here is part of it.
func (s *Server) body(ctx context.Context, c *gin.Context, hook string, start time.Time) (body []byte, release func(), ok bool) {
	size := c.Request.ContentLength
	if size < 0 || size > s.opts.MaxBodyBytes {
		size = s.opts.MaxBodyBytes // unknown, or refused with 413 once read
	}
	if !s.bodies.TryAcquire(size) { // NOTE: no timer for a call that need not wait
		ctx, cancel := context.WithTimeout(ctx, s.opts.InFlightWait)
		defer cancel()
		if err := s.bodies.Acquire(ctx, size); err != nil {
			closeUnread(c)
			s.busy(c, hook, time.Since(start))
			return nil, nil, false
		}
	}
	buf, pooled := bodyBuffer(c.Request.ContentLength, s.opts.MaxBodyBytes)
	release = func() {
		if pooled != nil {
			bodyBuffers.Put(pooled)
		}
		s.bodies.Release(size)
	}
	rc := http.NewResponseController(c.Writer)
	// NOTE: a server that cannot set deadlines (httptest's recorder) still has its ReadTimeout.
	if rc.SetReadDeadline(time.Now().Add(s.opts.BodyTimeout)) == nil {
		defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	}
	body, ok = s.readBody(c, buf)
	if !ok {
		release()
		return nil, nil, false
	}
	return body, release, true
}

// slot waits for a slot of the namespace's share, at most InFlightWait, then answers 429; at once
// when the namespace's bodies, served or waiting, would exceed half of MaxInFlightBytes.
func (s *Server) slot(ctx context.Context, c *gin.Context, hook, namespace string, size int64, start time.Time) (func(), bool) {
	release, ok, wait := s.slots.tryAcquire(namespace, size)
	if wait { // NOTE: no timer for a call that need not wait
		ctx, cancel := context.WithTimeout(ctx, s.opts.InFlightWait)
		defer cancel()
		release, ok = s.slots.acquire(ctx, namespace, size)
	}
	if !ok {
		s.busy(c, hook, time.Since(start))
	}
	return release, ok
}

func (s *Server) busy(c *gin.Context, hook string, waited time.Duration) {
	s.opts.Metrics.observeHook(hook, "busy", waited)
	s.opts.Logger.Warn("too many hook calls in flight; asking Metacontroller to retry", "hook", hook,
		"maxInFlight", s.opts.MaxInFlight, "maxInFlightPerNamespace", s.opts.MaxInFlightPerNamespace)
	c.Header("Retry-After", "1")
	c.AbortWithStatusJSON(http.StatusTooManyRequests, gin.H{"error": "too many calls in flight"})
}

// pooledBody is the capacity of the body buffers kept for the next calls (bodyBuffers).
const pooledBody = 64 << 10

// bodyBuffers keep the buffers of bodies of up to pooledBody bytes: a call's body is read into
// one and, once the call is answered, the buffer serves the next call.
//
// NOTE: a steady sync allocates little besides its body and the request decoded from it; the
// body is garbage as soon as it is decoded (decoding copies what it keeps: strings, base64 data,
// json.RawMessage), so it is kept for the next call instead of left to the collector.
var bodyBuffers = sync.Pool{New: func() any { b := make([]byte, 0, pooledBody); return &b }}

// bodyBuffer is the buffer to read a body of the announced length into: a pooled one (returned
// with it, to be put back once the call is answered) when the body fits, else one of the
// announced size (never above the limit).
func bodyBuffer(length, limit int64) ([]byte, *[]byte) {
	// NOTE: a buffer of the announced size is read into at once; growing one by doubling, as
	// io.ReadAll does, allocates about twice a large body.
	want := min(max(length, 0), limit) + bytes.MinRead
	if want > pooledBody {
		return make([]byte, 0, want), nil
	}
	pooled := bodyBuffers.Get().(*[]byte)
	return (*pooled)[:0], pooled
}

// readBody reads a hook body under the size limit into buf.
func (s *Server) readBody(c *gin.Context, into []byte) ([]byte, bool) {
	buf := bytes.NewBuffer(into)
	_, err := buf.ReadFrom(http.MaxBytesReader(c.Writer, c.Request.Body, s.opts.MaxBodyBytes))
	body := buf.Bytes()
	if err != nil {
		var tooLarge *http.MaxBytesError
		var netErr net.Error
		switch {
		case errors.As(err, &tooLarge):
			// NOTE: Metacontroller sends the parent and all its children; a refused call is retried
			// forever, so say so in the log (without the body: it holds Secrets).
			s.opts.Logger.Warn("request body too large", "path", c.Request.URL.Path,
				"limitBytes", s.opts.MaxBodyBytes, "contentLength", c.Request.ContentLength)
			c.AbortWithStatusJSON(http.StatusRequestEntityTooLarge, gin.H{"error": "request body exceeds " + strconv.FormatInt(s.opts.MaxBodyBytes, 10) + " bytes"})
		case errors.As(err, &netErr) && netErr.Timeout():
			s.opts.Logger.Warn("request body not sent in time", "path", c.Request.URL.Path, "bodyTimeout", s.opts.BodyTimeout.String(), "client", c.Request.RemoteAddr)
			c.Header("Connection", "close")
			c.AbortWithStatusJSON(http.StatusRequestTimeout, gin.H{"error": "request body not sent within " + s.opts.BodyTimeout.String()})
		default:
			s.opts.Logger.Warn("could not read request body", "path", c.Request.URL.Path, "error", err.Error())
			c.AbortWithStatusJSON(http.StatusBadRequest, gin.H{"error": "could not read request body"})
		}
		return nil, false
	}
	return body, true
}

// served is a decoded hook call: the namespace whose share it takes, and how to answer it.
type served struct {
	namespace string
	log       *slog.Logger
	run       func(ctx context.Context) (any, error)
}

// hookCall is the one way through a hook call: authenticated already (authenticate), its body read
// in turn, decoded, a slot of its namespace's share taken, the answer made under the deadline and
// encoded.
func (s *Server) hookCall(name string, decode func(body []byte) (served, error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		outcome := "ok"
		// NOTE: the call's context is passed down, not set on the request: a copy of the request
		// per call for a context only this handler reads.
		call, cancelCall := context.WithTimeout(c.Request.Context(), s.opts.HookTimeout)
		defer cancelCall()

		body, releaseBody, ok := s.body(call, c, name, start)
		if !ok {
			if c.Writer.Status() != http.StatusTooManyRequests {
				s.opts.Metrics.observeHook(name, "bad_request", time.Since(start))
			}
			return
		}
		defer releaseBody()
		call1, err := decode(body)
		if err != nil {
			s.opts.Metrics.observeHook(name, "bad_request", time.Since(start))
			s.opts.Logger.Warn("bad hook request", "hook", name, "error", err.Error())
			c.AbortWithStatusJSON(http.StatusBadRequest, gin.H{"error": err.Error()})
			return
		}
		releaseSlot, ok := s.slot(call, c, name, call1.namespace, int64(len(body)), start)
		if !ok {
			return
		}
		defer releaseSlot()
		defer func() { s.opts.Metrics.observeHook(name, outcome, time.Since(start)) }()

		log := call1.log
		ctx := reconcile.WithLogger(call, log)
		resp, err := call1.run(ctx)
		var throttled *reconcile.ThrottledError
		switch {
		case errors.As(err, &throttled):
			outcome = "throttled"
			secs := int(math.Ceil(throttled.RetryAfter.Seconds()))
			log.Info("OTC throttled; asking Metacontroller to retry later", "retryAfterSeconds", secs)
			c.Header("Retry-After", strconv.Itoa(secs))
			c.AbortWithStatusJSON(http.StatusTooManyRequests, gin.H{"error": "OTC is throttling requests"})
			return
		case errors.Is(err, reconcile.ErrCallInFlight):
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
		out := answerBuffers.Get().(*bytes.Buffer)
		defer putAnswerBuffer(out)
		if err := json.NewEncoder(out).Encode(resp); err != nil {
			outcome = "error"
			log.Error("encode response", "error", err.Error())
			c.AbortWithStatusJSON(http.StatusInternalServerError, gin.H{"error": "internal error"})
			return
		}
		log.Debug("hook answered", "duration", time.Since(start))
		// Encode ends the JSON with a newline, which json.Marshal does not write.
		c.Data(http.StatusOK, "application/json", bytes.TrimSuffix(out.Bytes(), []byte("\n")))
	}
}

// answerBuffers keep the buffers answers are encoded into: an answer is written to the
// connection (which copies it) before its buffer serves the next call.
var answerBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// putAnswerBuffer keeps an answer's buffer for the next call, unless an answer of unusual size
// made it large.
func putAnswerBuffer(b *bytes.Buffer) {
	if b.Cap() <= pooledBody {
		b.Reset()
		answerBuffers.Put(b)
	}
}

// parentCall decodes a sync or finalize call.
func (s *Server) parentCall(name string, run func(ctx context.Context, req *hook.Request) (any, error)) gin.HandlerFunc {
	return s.hookCall(name, func(body []byte) (served, error) {
		req, err := hook.DecodeRequest(body)
		if err != nil {
			return served{}, err
		}
		p := &req.Parent
		log := callLogger(s.opts.Logger, slog.String("hook", name), slog.String("rds", p.Namespace+"/"+p.Name),
			slog.String("uid", string(p.UID)), slog.Int64("generation", p.Generation))
		return served{namespace: p.Namespace, log: log, run: func(ctx context.Context) (any, error) { return run(ctx, req) }}, nil
	})
}

func (s *Server) sync() gin.HandlerFunc {
	return s.parentCall("sync", func(ctx context.Context, req *hook.Request) (any, error) {
		return s.opts.Reconciler.Sync(ctx, req)
	})
}

func (s *Server) finalize() gin.HandlerFunc {
	return s.parentCall("finalize", func(ctx context.Context, req *hook.Request) (any, error) {
		return s.opts.Reconciler.Finalize(ctx, req)
	})
}

func (s *Server) customize() gin.HandlerFunc {
	return s.hookCall("customize", func(body []byte) (served, error) {
		req, err := hook.DecodeCustomizeRequest(body)
		if err != nil {
			return served{}, err
		}
		answer := reconcile.Customize
		if cz, ok := s.opts.Reconciler.(customizer); ok {
			answer = cz.Customize
		}
		p := &req.Parent
		log := callLogger(s.opts.Logger, slog.String("hook", "customize"), slog.String("rds", p.Namespace+"/"+p.Name), slog.String("uid", string(p.UID)))
		return served{namespace: p.Namespace, log: log, run: func(context.Context) (any, error) {
			// An invalid spec is reported by the sync call; here it asks only for what its valid
			// references name, which the finalize call may still need (customize.go in this package).
			resp := answer(req)
			resp.RelatedResources = validRules(resp.RelatedResources)
			return resp, nil
		}}, nil
	})
}
