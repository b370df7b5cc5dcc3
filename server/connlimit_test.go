package server_test

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestConnLimitReleases (holds): after every kind of connection ends (garbage instead of a
// ClientHello, a handshake the client abandons, HTTP/2 with 401 + Connection: close, HTTP/1.1 401
// with a large unread body, a hijack-free keep-alive closed by the client), the per-client count
// returns to zero: a client with limit 3 can again hold 3 connections.
func TestConnLimitReleases(t *testing.T) {
	h := newHarness(t, &countingReconciler{})
	url, client := tlsHooks(t, h.srv, 3)
	host := strings.TrimPrefix(url, "https://")
	tcfg := client.Transport.(*http.Transport).TLSClientConfig
	allFree := func(what string) {
		require.Eventually(t, func() bool {
			var conns []*tls.Conn
			defer func() {
				for _, c := range conns {
					c.Close()
				}
			}()
			for range 3 {
				c, err := tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", host, tcfg)
				if err != nil {
					return false
				}
				conns = append(conns, c)
			}
			// a connection the limit refused is closed before the handshake: Dial fails
			return true
		}, 10*time.Second, 100*time.Millisecond, "all connections released after "+what)
	}
	for range 3 {
		c, err := net.Dial("tcp", host)
		require.NoError(t, err)
		_, _ = c.Write([]byte("GET / HTTP/1.1\r\n\r\n"))
		_, _ = io.Copy(io.Discard, c)
		c.Close()
	}
	allFree("garbage handshakes")
	for range 3 {
		if tc, err := tls.Dial("tcp", host, &tls.Config{}); err == nil {
			tc.Close()
		}
	}
	allFree("abandoned handshakes")
	for range 3 {
		h2 := &http.Client{Transport: &http.Transport{TLSClientConfig: tcfg.Clone(), Protocols: http2Only()}}
		// NOTE: retried: the server releases the previous step's connections when it reads their
		// EOF, a moment after the client closed them, and the limit refuses until then.
		require.Eventually(t, func() bool {
			resp, err := h2.Post(url+"/sync", "application/json", strings.NewReader("{}"))
			if err != nil {
				return false
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return resp.ProtoMajor == 2 && resp.StatusCode == http.StatusUnauthorized
		}, 5*time.Second, 50*time.Millisecond)
		h2.CloseIdleConnections()
	}
	allFree("HTTP/2 401s")
	for range 3 {
		h2 := &http.Client{Transport: &http.Transport{TLSClientConfig: tcfg.Clone(), Protocols: http2Only()}}
		require.Eventually(t, func() bool {
			resp, err := h2.Get(url + "/healthz")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return true
		}, 5*time.Second, 50*time.Millisecond)
		// the client vanishes without closing: the server's IdleTimeout is not set in tlsHooks,
		// so this is left to the client's close below
		h2.CloseIdleConnections()
	}
	allFree("HTTP/2 keep-alive")
	for range 3 {
		h1 := &http.Client{Transport: &http.Transport{TLSClientConfig: tcfg.Clone()}}
		resp, err := h1.Post(url+"/sync", "application/json", strings.NewReader(strings.Repeat("x", 1<<20)))
		if err == nil {
			resp.Body.Close()
		}
		h1.CloseIdleConnections()
	}
	allFree("HTTP/1.1 401 with unread bodies")
}

// http2Only is the protocols of a client that speaks nothing but HTTP/2 (over TLS).
func http2Only() *http.Protocols {
	p := new(http.Protocols)
	p.SetHTTP2(true)
	return p
}
