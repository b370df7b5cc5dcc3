package dbusers

import (
	"crypto/tls"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/testcert"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// handshake runs a TLS handshake of a client with cfg against a server presenting cert, over
// loopback TCP (net.Pipe would block on the server's session tickets).
func handshake(t *testing.T, cfg *tls.Config, cert tls.Certificate) error {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		_ = c.(*tls.Conn).Handshake()
	}()
	conn, err := net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second)
	require.NoError(t, err)
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	return tls.Client(conn, cfg).Handshake()
}

// TestVerifyCA: the session to an instance with SSL on trusts a server whose certificate chains to
// the configured CA, whatever name it carries (VERIFY_CA), and no other.
func TestVerifyCA(t *testing.T) {
	otc, other := testcert.New(t), testcert.New(t)
	assert.NoError(t, handshake(t, VerifyCA(otc.Pool), otc.Server), "signed by the configured CA, dialled by IP")
	err := handshake(t, VerifyCA(otc.Pool), other.Server)
	require.ErrorIs(t, err, ErrUntrusted, "signed by another CA")
	assert.Contains(t, err.Error(), "not signed by a CA the controller trusts")
	assert.ErrorIs(t, connectError("10.0.0.1:3306", "root", err), ErrUntrusted, "sorted as untrusted, not unreachable")
	assert.NotErrorIs(t, connectError("10.0.0.1:3306", "root", err), ErrUnreachable)
	assert.ErrorIs(t, handshake(t, VerifyCA(nil), otc.Server), ErrUntrusted, "without --db-ca-file no server is trusted")

	// crypto/tls's own checks, outside VerifyPeerCertificate; the driver returns its error as is.
	for _, tc := range []struct {
		reason string
		cert   tls.Certificate
	}{
		{"the instance's certificate (no secret) shown without its key: the handshake's signature is another key's",
			tls.Certificate{Certificate: otc.Server.Certificate, PrivateKey: other.Server.PrivateKey}},
		{"a certificate that cannot be read", tls.Certificate{Certificate: [][]byte{[]byte("not a certificate")}, PrivateKey: otc.Server.PrivateKey}},
	} {
		err := handshake(t, VerifyCA(otc.Pool), tc.cert)
		require.Error(t, err, tc.reason)
		assert.ErrorIs(t, connectError("10.0.0.1:3306", "root", err), ErrUntrusted, tc.reason)
		assert.NotErrorIs(t, connectError("10.0.0.1:3306", "root", err), ErrUnreachable, tc.reason)
	}
	assert.Nil(t, UntrustedServer(errors.New("write tcp 10.0.0.1:3306: connection reset by peer")), "a server that went away is not untrusted")
	assert.Nil(t, VerifyCA(otc.Pool).ClientSessionCache, "no session resumption: a resumed session skips VerifyPeerCertificate")
	assert.Equal(t, tls.RenegotiateNever, VerifyCA(otc.Pool).Renegotiation, "no renegotiation to another certificate mid-session")
}

// TestVerifiedSessionSendsNothingToAnImpostor: over the MySQL driver, a server whose certificate
// or proof of its key is refused gets nothing after the TLS request (not the login, which carries
// the password's scramble), and the session ends as ErrUntrusted; the instance gets the login.
func TestVerifiedSessionSendsNothingToAnImpostor(t *testing.T) {
	otc, other := testcert.New(t), testcert.New(t)
	for _, tc := range []struct {
		reason  string
		cert    tls.Certificate
		trusted bool
	}{
		{"the instance", otc.Server, true},
		{"a certificate another CA signs", other.Server, false},
		{"the instance's certificate without its key", tls.Certificate{Certificate: otc.Server.Certificate, PrivateKey: other.Server.PrivateKey}, false},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			var logins atomic.Int32
			srv := newFakeMySQLWith(t, "mysql_native_password", nil, func(srv *fakeMySQL, c net.Conn) {
				sc := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{tc.cert}, MinVersion: tls.VersionTLS12})
				if sc.Handshake() != nil {
					return
				}
				p := &mysqlPackets{c: sc, s: srv, seq: 2}
				if _, ok := p.read(); ok {
					logins.Add(1)
				}
			})
			conn := Conn{Host: "127.0.0.1", Port: srv.Port, User: "root", Password: secret.New("pw"), Timeout: 5 * time.Second, TLS: VerifyCA(otc.Pool)}
			_, err := Apply(t.Context(), conn, Desired{Databases: []string{"shop"}}, ManagedState{})
			require.Error(t, err, "the fake hangs up after the login")
			srv.received()
			if tc.trusted {
				assert.NotErrorIs(t, err, ErrUntrusted)
				assert.EqualValues(t, 1, logins.Load(), "the login, over TLS")
				return
			}
			assert.ErrorIs(t, err, ErrUntrusted)
			assert.NotErrorIs(t, err, ErrUnreachable)
			assert.Zero(t, logins.Load(), "nothing after the TLS request")
		})
	}
}
