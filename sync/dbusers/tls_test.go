package dbusers

import (
	"crypto/tls"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/testcert"
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
}
