package pgusers

import (
	"crypto/tls"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/testcert"
	"github.com/mcsps/rds-lambda-controller/internal/testnet"
	"github.com/mcsps/rds-lambda-controller/sync/dbusers"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// TestVerifiedSessions: with OTC's CA (--db-ca-file), the session to a PostgreSQL instance is TLS
// with a server whose certificate chains to the CA (sslmode=verify-ca), or nothing is sent: a
// server with a certificate of its own, or one that cannot prove it holds the instance's, or one
// that offers no TLS, is something else at the instance's address (ErrUntrusted,
// DatabaseCertificateUntrusted); one that goes away is unreachable.
func TestVerifiedSessions(t *testing.T) {
	otc, other := testcert.New(t), testcert.New(t)
	conn := func(port int) dbusers.Conn {
		return dbusers.Conn{Host: "127.0.0.1", Port: port, User: "root", Password: secret.New("the-admin-password-4711"),
			Timeout: 5 * time.Second, TLS: dbusers.VerifyCA(otc.Pool)}
	}
	apply := func(c dbusers.Conn) error {
		_, err := Apply(t.Context(), c, dbusers.Desired{Databases: []string{"shop"}}, dbusers.ManagedState{})
		return err
	}

	t.Run("a certificate the CA signs", func(t *testing.T) {
		srv := tlsFakeServerWith(t, otc.Server)
		err := apply(conn(srv.Port))
		require.Error(t, err, "the fake refuses the client's first proof")
		assert.NotErrorIs(t, err, dbusers.ErrUntrusted)
		first, mechanisms := srv.seen()
		assert.Equal(t, []bool{true}, first, "one attempt, over TLS")
		assert.Equal(t, []string{"SCRAM-SHA-256-PLUS"}, mechanisms, "the server was trusted: the client began to prove the password, bound to the channel")
	})
	t.Run("a certificate another CA signs", func(t *testing.T) {
		srv := tlsFakeServerWith(t, other.Server)
		err := apply(conn(srv.Port))
		require.ErrorIs(t, err, dbusers.ErrUntrusted)
		first, mechanisms := srv.seen()
		assert.Equal(t, []bool{true}, first, "one attempt, and no fallback to plain text")
		assert.Empty(t, mechanisms, "nothing was proven to it")
	})
	t.Run("a server that offers no TLS", func(t *testing.T) {
		var startups atomic.Int32
		srv := testnet.Serve(t, func(c net.Conn) {
			if startupRefusingTLS(pgproto3.NewBackend(c, c), c) {
				startups.Add(1)
			}
		})
		err := apply(conn(srv.Port))
		require.ErrorIs(t, err, dbusers.ErrUntrusted)
		assert.ErrorContains(t, err, "offers no TLS")
		srv.Wait()
		assert.Zero(t, startups.Load(), "no startup message, let alone a password, in clear")
	})
	t.Run("a server that answers an error to the SSLRequest", func(t *testing.T) {
		var startups atomic.Int32
		srv := testnet.Serve(t, func(c net.Conn) {
			b := pgproto3.NewBackend(c, c)
			if _, err := b.ReceiveStartupMessage(); err != nil {
				return
			}
			b.Send(&pgproto3.ErrorResponse{Severity: "FATAL", Code: "08P01", Message: "unsupported frontend protocol"})
			if b.Flush() != nil {
				return
			}
			if _, err := b.ReceiveStartupMessage(); err == nil {
				startups.Add(1)
			}
		})
		err := apply(conn(srv.Port))
		require.ErrorIs(t, err, dbusers.ErrUntrusted)
		assert.ErrorContains(t, err, "offers no TLS")
		srv.Wait()
		assert.Zero(t, startups.Load(), "no startup message in clear")
	})
	// crypto/tls checks some of the certificate, and the server's proof that it holds the
	// certificate's key, outside VerifyPeerCertificate: those refusals are the certificate's too.
	t.Run("a server that shows the instance's certificate without its key", func(t *testing.T) {
		// What anyone can do who once connected to the instance: its certificate is no secret.
		replayed := tls.Certificate{Certificate: otc.Server.Certificate, PrivateKey: other.Server.PrivateKey}
		srv := tlsFakeServerWith(t, replayed)
		err := apply(conn(srv.Port))
		require.ErrorIs(t, err, dbusers.ErrUntrusted, "the handshake's signature is not the certificate's key's")
		assert.NotErrorIs(t, err, dbusers.ErrUnreachable)
		first, mechanisms := srv.seen()
		assert.Equal(t, []bool{true}, first, "one attempt, and no fallback to plain text")
		assert.Empty(t, mechanisms, "nothing was proven to it")
	})
	t.Run("a certificate that cannot be read", func(t *testing.T) {
		srv := tlsFakeServerWith(t, tls.Certificate{Certificate: [][]byte{[]byte("not a certificate")}, PrivateKey: otc.Server.PrivateKey})
		err := apply(conn(srv.Port))
		require.ErrorIs(t, err, dbusers.ErrUntrusted)
		_, mechanisms := srv.seen()
		assert.Empty(t, mechanisms, "nothing was proven to it")
	})
	// A server that goes away is not an impostor: DatabaseUnreachable, not DatabaseCertificateUntrusted.
	for _, tc := range []struct {
		reason string
		serve  func(net.Conn)
	}{
		{"a server that hangs up at once", func(net.Conn) {}},
		{"a server that hangs up after agreeing to TLS", func(c net.Conn) {
			var req [8]byte
			if _, err := io.ReadFull(c, req[:]); err == nil {
				_, _ = c.Write([]byte("S"))
			}
		}},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			srv := testnet.Serve(t, tc.serve)
			err := apply(conn(srv.Port))
			require.ErrorIs(t, err, dbusers.ErrUnreachable)
			assert.NotErrorIs(t, err, dbusers.ErrUntrusted)
		})
	}
	t.Run("without the CA", func(t *testing.T) {
		srv := tlsFakeServerWith(t, other.Server)
		c := conn(srv.Port)
		c.TLS = nil
		require.Error(t, apply(c))
		_, mechanisms := srv.seen()
		assert.Equal(t, []string{"SCRAM-SHA-256-PLUS"}, mechanisms, "sslmode=prefer, as before: any certificate")
	})
}
