package otc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	golangsdk "github.com/opentelekomcloud/gophertelekomcloud"
)

// callHeader tags each SDK request with the id of the call it belongs to. The transport removes it
// before the request leaves the process, unless an AK/SK signature covers it.
const callHeader = "X-Rds-Hooks-Call"

// maxRetryAfter bounds the wait a Retry-After header can ask for.
const maxRetryAfter = 15 * time.Minute

// callInfo is what the transport learnt about a call's HTTP exchanges.
type callInfo struct {
	retryAfter time.Duration // from the last 429's Retry-After header, 0 if none
}

// callState is one running cloud call, as the transport sees it.
type callState struct {
	ctx context.Context
	mu  sync.Mutex
	callInfo
}

func (s *callState) info() callInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.callInfo
}

// calls is the registry of running calls, by id.
type calls struct {
	mu   sync.Mutex
	next uint64
	m    map[string]*callState
}

func (c *calls) add(ctx context.Context) (string, *callState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	id := strconv.FormatUint(c.next, 10)
	st := &callState{ctx: ctx}
	if c.m == nil {
		c.m = make(map[string]*callState)
	}
	c.m[id] = st
	return id, st
}

func (c *calls) get(id string) *callState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[id]
}

func (c *calls) remove(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, id)
}

// transport binds each SDK request to its call: a request of a call that has ended is never sent,
// a running request is cancelled when its call's context ends, and a 429's Retry-After header is
// kept for the error.
//
// NOTE: the v0.9.8 SDK builds its requests with http.NewRequest (no context) and its errors carry no
// response headers, so neither a deadline nor Retry-After can pass through it. The call id travels in
// a header that the service client adds to each request (ServiceClient.MoreHeaders).
type transport struct {
	base  http.RoundTripper
	calls *calls
	// dropped counts requests refused because their call had ended.
	dropped atomic.Int64
}

// errCallEnded is the error of a request whose call has ended. It wraps context.Canceled.
var errCallEnded = fmt.Errorf("cloud call ended before the request was sent: %w", context.Canceled)

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	id := req.Header.Get(callHeader)
	if id == "" {
		// Keystone logins: bounded by the client's timeout only
		out := keepConnection(req, req.Context())
		// NOTE: a request sent on a kept connection that a load balancer closes meanwhile never
		// arrives. net/http sends a POST again on a new connection only if it is marked
		// idempotent, which a login is (one more token); the empty value marks it without
		// sending the header. A failed login or token renewal is remembered for the retry time
		// (Config.ReauthRetry) and fails every call of its credentials until then. Calls' POSTs
		// are not marked: a change is never sent twice.
		out.Header["Idempotency-Key"] = nil
		return readAhead(t.base.RoundTrip(out))
	}
	// NOTE: the SDK's goroutine outlives a call that ended at its deadline, and it goes on sending:
	// the retry of a 502/504 after its 500 ms sleep, the retry after waiting on the token lock during
	// a renewal, the next page of a listing. A change sent then happens after the hook has already
	// answered, so a request of a call that has ended is refused here, before it leaves.
	st := t.calls.get(id)
	if st == nil || st.ctx.Err() != nil {
		t.dropped.Add(1)
		return nil, errCallEnded
	}
	ctx, cancel := context.WithCancelCause(req.Context()) // req's context carries the client's Timeout
	// Released when the call ends: every call's context is cancelled on return.
	context.AfterFunc(st.ctx, func() { cancel(context.Cause(st.ctx)) })
	out := keepConnection(req, ctx)
	// NOTE: an AK/SK signature covers every header the request had when the SDK signed it, this
	// one too (signer_helper.go, getSignedHeadersString): removed, API Gateway refuses the
	// signature (401 APIGW.0301), so a signed request keeps it.
	if !strings.HasPrefix(out.Header.Get("Authorization"), golangsdk.SignAlgorithmHMACSHA256+" ") {
		out.Header.Del(callHeader)
	}
	resp, err := readAhead(t.base.RoundTrip(out))
	if err == nil && resp.StatusCode == http.StatusTooManyRequests {
		d := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
		st.mu.Lock()
		st.retryAfter = d
		st.mu.Unlock()
	}
	return resp, err
}

// parseRetryAfter reads a Retry-After value: delay seconds or an HTTP date. 0 if absent or unusable.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.Atoi(v); err == nil {
		d = time.Duration(secs) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now).Round(time.Second)
	}
	if d <= 0 {
		return 0
	}
	return min(d, maxRetryAfter)
}

// services are the service clients of one call: copies of the client's, tagged with the call's id.
type services struct {
	rds, vpc, neutron, ces *golangsdk.ServiceClient
}

func (c *Client) servicesFor(id string) services {
	tag := func(sc *golangsdk.ServiceClient) *golangsdk.ServiceClient {
		cp := *sc
		cp.MoreHeaders = map[string]string{callHeader: id}
		return &cp
	}
	out := services{rds: tag(c.rds), vpc: tag(c.vpc), neutron: tag(c.neutron)}
	if c.ces != nil {
		out.ces = tag(c.ces)
	}
	return out
}

// call runs fn, one cloud operation, under ctx and returns its result with errors translated.
//
// NOTE: the SDK takes no context, so fn runs on its own goroutine and call returns as soon as ctx
// ends, with KindUnavailable. The abandoned goroutine may run on (through the SDK's 500 ms sleep
// before a 502/504 retry, or waiting for a token renewal that other calls share) but sends nothing
// more: the transport cancels its running request and refuses every later one. The HTTP client's
// Timeout caps a token renewal, the only request it may still wait for.
func call[T any](ctx context.Context, c *Client, op string, fn func(s services) (T, error)) (T, error) {
	start := time.Now()
	v, err := runCall(ctx, c, op, fn)
	if c.observe != nil {
		result := "ok"
		if err != nil {
			result = resultLabel(err)
		}
		c.observe(op, result, time.Since(start))
	}
	return v, err
}

// sdkPanic is the error for a panic recovered on an SDK goroutine: one would take the whole server
// down.
func sdkPanic(p any) error { return fmt.Errorf("panic in SDK call: %v", p) }

func runCall[T any](ctx context.Context, c *Client, op string, fn func(s services) (T, error)) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, translate(op, err, callInfo{})
	}
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	id, st := c.calls.add(callCtx)
	defer c.calls.remove(id)

	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	svc := c.servicesFor(id)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{err: sdkPanic(p)}
			}
		}()
		v, err := fn(svc)
		done <- result{v, err}
	}()

	select {
	case r := <-done:
		if r.err != nil {
			return zero, c.translate(op, r.err, st.info())
		}
		return r.v, nil
	case <-ctx.Done():
		return zero, translate(op, ctx.Err(), callInfo{})
	}
}

// maxResponseBytes bounds one answer of OTC the SDK reads into memory. The largest answers are
// listings of 100 items; a page of log entries holds what the tenant wrote into its own logs,
// which must not exhaust the memory of the hooks every tenant shares.
const maxResponseBytes = 16 << 20

// errResponseTooLarge ends the reading of an answer beyond maxResponseBytes.
var errResponseTooLarge = errors.New("OTC's answer exceeds the size the controller reads")

// keepConnection is a copy of the SDK's request under ctx that keeps its connection for the next
// request: the SDK asks for a connection per request (req.Close, provider_client.go), which costs a
// TCP and a TLS handshake with OTC on every call. net/http returns the connection once the answer
// is read to its end (readAhead).
func keepConnection(req *http.Request, ctx context.Context) *http.Request {
	out := req.Clone(ctx)
	out.Close = false
	return out
}

// readAheadBytes is how much of an answer the transport reads before the SDK sees it.
const readAheadBytes = 64 << 10

// readAhead reads an answer of at most readAheadBytes whole, and closes it, before the SDK sees
// it, which then reads what was read; a larger answer goes to the SDK as it arrives. Either way
// a read that failed, or went beyond maxResponseBytes, fails the SDK's reading at the same point.
//
// NOTE: the SDK reads most answers to their end (extract.Into, pagination, error answers), which
// returns their connection, but never reads some small ones (v0.9.8: tags.Create, and the PUTs of
// instances.ChangeOpsWindow and ManageAutoScaling discard the answer): their connection would stay
// taken until the call ends and then be closed. A large answer is not read ahead, because the SDK
// copies every answer once more (io.ReadAll): a log page of up to 16 MiB would be held twice, and
// one of unknown length read into a growing buffer cost five times its size in allocations.
func readAhead(resp *http.Response, err error) (*http.Response, error) {
	if err != nil {
		return resp, err
	}
	body := &limitedBody{ReadCloser: resp.Body, left: maxResponseBytes}
	head, err := readAll(io.LimitReader(body, readAheadBytes+1), bodyCapacity(resp.ContentLength))
	if err != nil || len(head) <= readAheadBytes {
		_ = resp.Body.Close()
		resp.Body = &readBody{Reader: bytes.NewReader(head), err: err}
		return resp, nil
	}
	resp.Body = &aheadBody{Reader: io.MultiReader(bytes.NewReader(head), body), Closer: resp.Body}
	return resp, nil
}

// readAll is io.ReadAll into a buffer of the given capacity at first.
func readAll(r io.Reader, capacity int) ([]byte, error) {
	b := make([]byte, 0, capacity)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // room to read into
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// bodyCapacity is the buffer to read ahead of a body of the announced length: its length when
// announced and within the read-ahead (one more byte, to see its end), else a small one that grows.
func bodyCapacity(length int64) int {
	switch {
	case length < 0:
		return bytes.MinRead
	case length > readAheadBytes:
		return readAheadBytes + 1
	}
	return int(length) + 1
}

// readBody is an answer read whole: its bytes, then the error that ended the reading (io.EOF
// when it ended well).
type readBody struct {
	*bytes.Reader
	err error
}

func (b *readBody) Read(p []byte) (int, error) {
	n, err := b.Reader.Read(p)
	if err == io.EOF && b.err != nil {
		err = b.err
	}
	return n, err
}

func (b *readBody) Close() error { return nil }

// aheadBody is a large answer: the part read ahead, then the rest as it arrives.
type aheadBody struct {
	io.Reader
	io.Closer
}

// limitedBody fails a read beyond its limit, so that the SDK's decoding fails instead of holding
// the whole answer.
type limitedBody struct {
	io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		if n, err := b.ReadCloser.Read(one[:]); n == 0 && err != nil {
			return 0, err // the answer ended at the limit (io.EOF)
		}
		return 0, errResponseTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
