package server_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/hookauth"
	"github.com/mcsps/rds-lambda-controller/server"
	"github.com/mcsps/rds-lambda-controller/sync/hook"
)

// countingReconciler counts the calls that reached it.
type countingReconciler struct {
	calls atomic.Int32
	block chan struct{} // when set, calls wait for it
}

func (c *countingReconciler) Sync(ctx context.Context, _ *hook.Request) (*hook.SyncResponse, error) {
	c.calls.Add(1)
	if c.block != nil {
		select {
		case <-c.block:
		case <-ctx.Done():
		}
	}
	return &hook.SyncResponse{Children: []any{}}, nil
}

func (c *countingReconciler) Finalize(context.Context, *hook.Request) (*hook.FinalizeResponse, error) {
	c.calls.Add(1)
	return &hook.FinalizeResponse{Children: []any{}, Finalized: true}, nil
}

// TestHooksAnswerOnlyMetacontroller: a hook call without Metacontroller's token, or with another,
// gets 401 before its body is read: it reaches no reconciler, and the log names the caller, never
// what it presented. Probes and /metrics need no token.
func TestHooksAnswerOnlyMetacontroller(t *testing.T) {
	rec := &countingReconciler{}
	h := newHarness(t, rec)
	for _, path := range []string{"/sync", "/finalize", "/customize"} {
		for name, header := range map[string]string{
			"none":         "",
			"wrong token":  "Bearer metacontroller-test-token-0123456789abcdeX",
			"a prefix":     "Bearer " + testToken[:len(testToken)-1],
			"basic":        "Basic " + testToken,
			"no scheme":    testToken,
			"token+suffix": "Bearer " + testToken + "x",
		} {
			body := &blockingBody{read: make(chan struct{}, 1), release: make(chan struct{})}
			close(body.release)
			req := httptest.NewRequest(http.MethodPost, path, body)
			if header != "" {
				req.Header.Set("Authorization", header)
			}
			w := httptest.NewRecorder()
			h.srv.ServeHTTP(w, req)
			assert.Equal(t, http.StatusUnauthorized, w.Code, path+" "+name)
			assert.Equal(t, `Bearer realm="rds-hooks"`, w.Header().Get("WWW-Authenticate"))
			select {
			case <-body.read:
				t.Errorf("%s %s: the body was read", path, name)
			default:
			}
		}
	}
	assert.Zero(t, rec.calls.Load(), "no refused call reached the reconciler")
	assert.Contains(t, h.logs.String(), "hook call refused: no valid credential")
	assert.NotContains(t, h.logs.String(), "metacontroller-test-token", "no credential in the log")
	assert.Equal(t, 3, testutil.CollectAndCount(h.reg, "rds_hooks_hook_duration_seconds"), "unauthorized, per hook")

	assert.Equal(t, http.StatusOK, h.post("/sync", sampleRequest(t)).Code)
	assert.Equal(t, int32(1), rec.calls.Load())
	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		w := httptest.NewRecorder()
		h.srv.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		assert.Equal(t, http.StatusOK, w.Code, path)
	}
}

// TestNoAuthenticatorRefusesEveryone: a server built without an authenticator fails closed, unless
// it was told explicitly to serve anyone (make run).
func TestNoAuthenticatorRefusesEveryone(t *testing.T) {
	rec := &countingReconciler{}
	h := newHarness(t, rec, func(o *server.Options) { o.Auth = nil })
	assert.Equal(t, http.StatusUnauthorized, h.post("/sync", sampleRequest(t)).Code)
	assert.Zero(t, rec.calls.Load())
	h = newHarness(t, rec, func(o *server.Options) { o.Auth = nil; o.Insecure = true })
	w := httptest.NewRecorder()
	h.srv.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/sync", bytes.NewReader(sampleRequest(t))))
	assert.Equal(t, http.StatusOK, w.Code)
}

// TestTokenRotation: the hooks accept every token of the mounted Secret (token and previous), and
// read it again when it changes, without a restart.
func TestTokenRotation(t *testing.T) {
	dir := t.TempDir()
	old, next := hookauth.NewToken(), hookauth.NewToken()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "token"), []byte(old), 0o600))
	tokens, err := hookauth.NewTokens(dir, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	assert.True(t, tokens.Check("Bearer "+old))
	assert.False(t, tokens.Check("Bearer "+next))

	// rotate-token: token is the new one, previous the old one.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "token"), []byte(next+"\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "previous"), []byte(old), 0o600))
	require.Eventually(t, func() bool { return tokens.Check("Bearer " + next) }, 3*hookauth.ReloadEvery, 100*time.Millisecond)
	assert.True(t, tokens.Check("Bearer "+old), "the token Metacontroller still sends")
	assert.Equal(t, 2, tokens.Count())

	// A Secret being rewritten (an empty key) keeps what there was.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "token"), nil, 0o600))
	require.NoError(t, os.Remove(filepath.Join(dir, "previous")))
	time.Sleep(hookauth.ReloadEvery + 100*time.Millisecond)
	assert.True(t, tokens.Check("Bearer "+next), "no token at all is never taken for a rotation")

	_, err = hookauth.NewTokens(writeFile(t, "short"), nil)
	assert.ErrorContains(t, err, "at least 32 characters")
	_, err = hookauth.NewTokens(writeFile(t, "\n"), nil)
	assert.ErrorContains(t, err, "no hook token")
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

// tlsHooks serves the handler over TLS on 127.0.0.1 as rds-hooks does (a per-client connection
// limit, then TLS), with a certificate from the generator, and returns a client that trusts it.
func tlsHooks(t *testing.T, handler http.Handler, perClient int) (string, *http.Client) {
	t.Helper()
	ca, cert, key, err := hookauth.NewServing([]string{"127.0.0.1"}, time.Now(), time.Hour)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tls.crt"), cert, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tls.key"), key, 0o600))
	serving, err := hookauth.NewCertificate(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"), nil)
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second,
		ErrorLog: slog.NewLogLogger(slog.DiscardHandler, slog.LevelWarn)}
	go func() { _ = srv.Serve(tls.NewListener(server.LimitPerClient(l, perClient), serving.TLSConfig())) }()
	t.Cleanup(func() { _ = srv.Close() })
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(ca))
	client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	return "https://" + l.Addr().String(), client
}

func postWith(t *testing.T, c *http.Client, url, token string, body []byte) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestSlowBodiesCostNothing: clients that send their headers and then trickle their bodies, with
// or without Metacontroller's token, hold no slot: while they hang on, every genuine call is
// served (200, never 429), and a trickled body with the token is cut off with 408.
func TestSlowBodiesCostNothing(t *testing.T) {
	rec := &countingReconciler{}
	h := newHarness(t, rec, func(o *server.Options) {
		o.MaxInFlight = 1
		o.BodyTimeout = 500 * time.Millisecond
		o.InFlightWait = 200 * time.Millisecond
	})
	url, client := tlsHooks(t, h.srv, 100)
	host := strings.TrimPrefix(url, "https://")

	// The flood: 40 connections, half with the token, each announcing a body it never finishes.
	var flood sync.WaitGroup
	answers := make(chan string, 40)
	stop := make(chan struct{})
	for i := range 40 {
		flood.Add(1)
		go func() {
			defer flood.Done()
			conn, err := tls.Dial("tcp", host, client.Transport.(*http.Transport).TLSClientConfig)
			if err != nil {
				answers <- "dial: " + err.Error()
				return
			}
			defer conn.Close()
			auth := ""
			if i%2 == 0 {
				auth = "Authorization: Bearer " + testToken + "\r\n"
			}
			fmt.Fprintf(conn, "POST /sync HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n%sContent-Length: 100000\r\n\r\n{", auth)
			_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			status := make([]byte, 12)
			go func() { // trickle a byte now and then until answered
				for {
					select {
					case <-stop:
						return
					case <-time.After(100 * time.Millisecond):
						if _, err := conn.Write([]byte(" ")); err != nil {
							return
						}
					}
				}
			}()
			_, _ = io.ReadFull(conn, status)
			answers <- string(status)
		}()
	}
	// Genuine calls, while the flood holds its connections.
	for range 10 {
		assert.Equal(t, http.StatusOK, postWith(t, client, url+"/sync", testToken, sampleRequest(t)), "a genuine call is served")
	}
	close(stop)
	flood.Wait()
	close(answers)
	got := map[string]int{}
	for a := range answers {
		got[a]++
	}
	assert.Equal(t, map[string]int{"HTTP/1.1 401": 20, "HTTP/1.1 408": 20}, got, "without the token 401 at once; with it, 408 after BodyTimeout")
	assert.Equal(t, int32(10), rec.calls.Load(), "only the genuine calls reached the reconciler")
}

// TestConnectionsPerClientAreBounded: a client address holds at most n connections; one more is
// closed before a byte is read, and a freed one lets the next in.
func TestConnectionsPerClientAreBounded(t *testing.T) {
	h := newHarness(t, &countingReconciler{})
	url, client := tlsHooks(t, h.srv, 3)
	host := strings.TrimPrefix(url, "https://")
	var held []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", host)
		require.NoError(t, err)
		held = append(held, c)
	}
	extra, err := net.Dial("tcp", host)
	require.NoError(t, err)
	_ = extra.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = extra.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF, "the fourth connection is closed at once")
	held[0].Close()
	require.Eventually(t, func() bool {
		c := &http.Client{Timeout: 2 * time.Second, Transport: client.Transport.(*http.Transport).Clone()}
		resp, err := c.Get(url + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 5*time.Second, 50*time.Millisecond, "a freed connection lets the next in")
	for _, c := range held[1:] {
		c.Close()
	}
}

// requestIn is the sample sync request for an object of namespace ns.
func requestIn(t *testing.T, ns, name string) []byte {
	t.Helper()
	var req map[string]any
	require.NoError(t, json.Unmarshal(sampleRequest(t), &req))
	meta := req["parent"].(map[string]any)["metadata"].(map[string]any)
	meta["namespace"], meta["name"] = ns, name
	b, err := json.Marshal(req)
	require.NoError(t, err)
	return b
}

// TestNamespaceShare: one namespace's slow calls hold at most its share of the slots; another
// namespace's calls are served meanwhile, and a freed slot goes to the namespace holding fewer.
func TestNamespaceShare(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	inside := map[string]int{}
	h := newHarness(t, stubReconciler{sync: func(ctx context.Context, req *hook.Request) (*hook.SyncResponse, error) {
		mu.Lock()
		inside[req.Parent.Namespace]++
		mu.Unlock()
		if req.Parent.Namespace == "greedy" {
			<-release
		}
		return &hook.SyncResponse{Children: []any{}}, nil
	}}, func(o *server.Options) { o.MaxInFlight = 4; o.InFlightWait = 300 * time.Millisecond })

	greedy := make(chan int, 10)
	for i := range 10 {
		go func() { greedy <- h.post("/sync", requestIn(t, "greedy", fmt.Sprintf("db-%d", i))).Code }()
	}
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return inside["greedy"] == 2 }, 5*time.Second, time.Millisecond,
		"the greedy namespace holds its share, half of the slots")
	for i := range 5 {
		assert.Equal(t, http.StatusOK, h.post("/sync", requestIn(t, "modest", fmt.Sprintf("db-%d", i))).Code, "another namespace is served meanwhile")
	}
	codes := map[int]int{}
	for range 8 { // the calls beyond the share waited, then gave up
		codes[<-greedy]++
	}
	assert.Equal(t, map[int]int{http.StatusTooManyRequests: 8}, codes)
	mu.Lock()
	assert.Equal(t, 2, inside["greedy"], "never more than the share")
	mu.Unlock()
	close(release)
	assert.Equal(t, http.StatusOK, <-greedy)
	assert.Equal(t, http.StatusOK, <-greedy)
}
