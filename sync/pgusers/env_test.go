package pgusers

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/pem"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/testcert"
	"github.com/mcsps/rds-lambda-controller/internal/testnet"
	"github.com/mcsps/rds-lambda-controller/sync/dbusers"
	"github.com/mcsps/rds-lambda-controller/sync/secret"
)

// TestEnvironmentCannotWeakenTheSession: pgx.ParseConfig("") reads the PG* environment, and every
// field it fills that the session does not set again is the environment's. However the
// controller's environment is set (by its operator, by a base image, by a service file), the
// session to the instance begins by asking for TLS, and over TLS proves the root password bound to
// the channel when the server offers it (SCRAM-SHA-256-PLUS); with OTC's CA, that TLS session is
// the only attempt, and a server the CA did not sign gets nothing.
func TestEnvironmentCannotWeakenTheSession(t *testing.T) {
	for _, tc := range []struct {
		reason string
		env    map[string]string
	}{
		{"a clean environment", nil},
		{"direct TLS, which an OTC server does not speak: every session would fall back to plain text",
			map[string]string{"PGSSLNEGOTIATION": "direct"}},
		{"channel binding off", map[string]string{"PGCHANNELBINDING": "disable"}},
		{"libpq's weakest settings", map[string]string{
			"PGSSLMODE": "disable", "PGREQUIREAUTH": "password", "PGCHANNELBINDING": "disable",
			"PGSSLNEGOTIATION": "direct", "PGTARGETSESSIONATTRS": "read-write", "PGOPTIONS": "-c search_path=public",
		}},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			srv := tlsFakeServer(t)
			conn := dbusers.Conn{Host: "127.0.0.1", Port: srv.Port, User: "root", Password: secret.New("the-admin-password-4711"), Timeout: 5 * time.Second}
			_, err := Apply(t.Context(), conn, dbusers.Desired{Databases: []string{"shop"}}, dbusers.ManagedState{})
			require.Error(t, err)

			first, mechanisms := srv.seen()
			require.NotEmpty(t, first, "the server was reached")
			assert.True(t, first[0], "the first attempt begins by asking for TLS")
			assert.Equal(t, []string{"SCRAM-SHA-256-PLUS"}, mechanisms, "over TLS the proof is bound to the channel")
		})
		// With OTC's CA (--db-ca-file) the environment does not weaken the verification either:
		// the one attempt is TLS with the server verified, and an impostor gets nothing.
		t.Run(tc.reason+", with the CA", func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			otc, other := testcert.New(t), testcert.New(t)
			for _, srv := range []struct {
				reason  string
				cert    tls.Certificate
				trusted bool
			}{
				{"the instance", otc.Server, true},
				{"a server with a certificate another CA signs", other.Server, false},
			} {
				fake := tlsFakeServerWith(t, srv.cert)
				conn := dbusers.Conn{Host: "127.0.0.1", Port: fake.Port, User: "root", Password: secret.New("the-admin-password-4711"),
					Timeout: 5 * time.Second, TLS: dbusers.VerifyCA(otc.Pool)}
				_, err := Apply(t.Context(), conn, dbusers.Desired{Databases: []string{"shop"}}, dbusers.ManagedState{})
				require.Error(t, err, srv.reason)

				first, mechanisms := fake.seen()
				assert.Equal(t, []bool{true}, first, "%s: one attempt, over TLS, and no fallback", srv.reason)
				if srv.trusted {
					assert.NotErrorIs(t, err, dbusers.ErrUntrusted, srv.reason)
					assert.Equal(t, []string{"SCRAM-SHA-256-PLUS"}, mechanisms, "%s: over TLS the proof is bound to the channel", srv.reason)
				} else {
					assert.ErrorIs(t, err, dbusers.ErrUntrusted, srv.reason)
					assert.Empty(t, mechanisms, "%s: nothing was proven to it", srv.reason)
				}
			}
		})
	}
}

// tlsFake is a PostgreSQL server that accepts TLS (a certificate of its own), asks for
// SCRAM-SHA-256 with or without channel binding, records the mechanism the client chooses and
// refuses its proof; without TLS it asks for the password in clear text, which the client refuses.
type tlsFake struct {
	*testnet.Listener

	mu         sync.Mutex
	first      []bool // per connection: whether it began with an SSLRequest
	mechanisms []string
}

func tlsFakeServer(t *testing.T) *tlsFake { return tlsFakeServerWith(t, testcert.New(t).Server) }

// tlsFakeServerWith is a tlsFake whose TLS certificate is cert.
func tlsFakeServerWith(t *testing.T, cert tls.Certificate) *tlsFake {
	t.Helper()
	f := &tlsFake{}
	f.Listener = testnet.Serve(t, func(c net.Conn) { f.serve(c, cert) })
	return f
}

func (f *tlsFake) serve(c net.Conn, cert tls.Certificate) {
	r := bufio.NewReader(c)
	head, err := r.Peek(8)
	if err != nil {
		return
	}
	sslRequest := binary.BigEndian.Uint32(head[0:4]) == 8 && binary.BigEndian.Uint32(head[4:8]) == 80877103
	f.mu.Lock()
	f.first = append(f.first, sslRequest)
	f.mu.Unlock()
	var rw io.ReadWriter = struct {
		io.Reader
		io.Writer
	}{r, c}
	if sslRequest {
		_, _ = r.Discard(8)
		if _, err := c.Write([]byte("S")); err != nil {
			return
		}
		tc := tls.Server(bufConn{r, c}, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
		if tc.Handshake() != nil {
			return
		}
		rw = tc
	}
	b := pgproto3.NewBackend(rw, rw)
	if _, err := b.ReceiveStartupMessage(); err != nil {
		return
	}
	if !sslRequest {
		b.Send(&pgproto3.AuthenticationCleartextPassword{})
		_ = b.Flush()
		return
	}
	b.Send(&pgproto3.AuthenticationSASL{AuthMechanisms: []string{"SCRAM-SHA-256", "SCRAM-SHA-256-PLUS"}})
	if b.Flush() != nil {
		return
	}
	if b.SetAuthType(pgproto3.AuthTypeSASL) != nil {
		return
	}
	msg, err := b.Receive()
	if err != nil {
		return
	}
	if m, ok := msg.(*pgproto3.SASLInitialResponse); ok {
		f.mu.Lock()
		f.mechanisms = append(f.mechanisms, m.AuthMechanism)
		f.mu.Unlock()
	}
	// Refused as a server refuses a wrong proof. NOTE: a hang-up instead makes pgconn abandon the
	// connection with a cancel request on a new one (asyncClose) that may arrive after the test
	// ended, at a later test's server listening on the same port (the kernel reuses it at once).
	b.Send(&pgproto3.ErrorResponse{Severity: "FATAL", Code: "28P01", Message: `password authentication failed for user "root"`})
	_ = b.Flush()
}

// bufConn is a connection whose first bytes were peeked at.
type bufConn struct {
	r *bufio.Reader
	net.Conn
}

func (c bufConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// seen waits for the client's connections to end and returns what the server saw.
func (f *tlsFake) seen() (first []bool, mechanisms []string) {
	f.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]bool(nil), f.first...), append([]string(nil), f.mechanisms...)
}

// TestConfigIgnoresTheEnvironment: every field of the session's configuration that decides where
// it goes, what it proves and sends, and how, is the same in a clean environment and in one where
// every PG* variable and a service file say otherwise, with OTC's CA (sslmode=verify-ca: no
// fallback, the chain checked with the CA, no session cache to skip the check) and without it,
// for the maintenance database's session and another's. (Kerberos' names are left to the
// environment: require_auth refuses GSSAPI.)
func TestConfigIgnoresTheEnvironment(t *testing.T) {
	vars := []string{"PGHOST", "PGPORT", "PGDATABASE", "PGUSER", "PGPASSWORD", "PGPASSFILE", "PGAPPNAME",
		"PGCONNECT_TIMEOUT", "PGSSLMODE", "PGSSLKEY", "PGSSLCERT", "PGSSLCERTMODE", "PGSSLSNI", "PGSSLROOTCERT",
		"PGSSLPASSWORD", "PGSSLNEGOTIATION", "PGTARGETSESSIONATTRS", "PGSERVICE", "PGSERVICEFILE", "PGTZ",
		"PGOPTIONS", "PGMINPROTOCOLVERSION", "PGMAXPROTOCOLVERSION", "PGCHANNELBINDING", "PGREQUIREAUTH"}
	for _, k := range vars {
		t.Setenv(k, "") // restored after the test
		require.NoError(t, os.Unsetenv(k))
	}
	// sslmode=prefer without OTC's CA, sslmode=verify-ca with it (--db-ca-file); each database's
	// session has its own configuration.
	otc := testcert.New(t)
	type variant struct {
		reason string
		s      *session
		db     string
	}
	var sessions []variant
	for _, db := range []string{"postgres", "shop"} {
		for _, verified := range []bool{false, true} {
			c := dbusers.Conn{Host: "10.9.3.8", Port: 8635, User: "root", Password: secret.New("the-admin-password-4711"), Timeout: 5 * time.Second}
			reason := "sslmode=prefer, database " + db
			if verified {
				c.TLS, reason = dbusers.VerifyCA(otc.Pool), "sslmode=verify-ca, database "+db
			}
			sessions = append(sessions, variant{reason, &session{c: c}, db})
		}
	}
	clean := make([]*pgx.ConnConfig, len(sessions))
	for i, s := range sessions {
		var err error
		clean[i], err = s.s.config(s.db)
		require.NoError(t, err, s.reason)
	}

	dir := t.TempDir()
	cert := testcert.New(t).Server
	certFile, keyFile := filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), 0o600))
	key, err := x509.MarshalECPrivateKey(cert.PrivateKey.(*ecdsa.PrivateKey))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: key}), 0o600))
	passFile := filepath.Join(dir, "pgpass")
	require.NoError(t, os.WriteFile(passFile, []byte("*:*:*:*:from-the-passfile\n"), 0o600))
	serviceFile := filepath.Join(dir, "pg_service.conf")
	require.NoError(t, os.WriteFile(serviceFile, []byte(`[weak]
host=203.0.113.9
port=5432
sslnegotiation=direct
channel_binding=disable
require_auth=password
default_query_exec_mode=simple_protocol
statement_cache_capacity=0
description_cache_capacity=0
options=-c search_path=public
search_path=public
`), 0o600))
	for k, v := range map[string]string{
		"PGHOST": "203.0.113.9", "PGPORT": "5432", "PGDATABASE": "other", "PGUSER": "someone", "PGPASSWORD": "from-the-environment",
		"PGPASSFILE": passFile, "PGAPPNAME": "x", "PGCONNECT_TIMEOUT": "1", "PGSSLMODE": "disable", "PGSSLCERT": certFile,
		"PGSSLKEY": keyFile, "PGSSLCERTMODE": "require", "PGSSLSNI": "0", "PGSSLROOTCERT": certFile, "PGSSLNEGOTIATION": "direct",
		"PGTARGETSESSIONATTRS": "read-write", "PGSERVICE": "weak", "PGSERVICEFILE": serviceFile, "PGTZ": "Asia/Tokyo",
		"PGOPTIONS": "-c search_path=public", "PGMINPROTOCOLVERSION": "3.2", "PGMAXPROTOCOLVERSION": "latest",
		"PGCHANNELBINDING": "disable", "PGREQUIREAUTH": "password",
	} {
		t.Setenv(k, v)
	}

	what := func(c *pgx.ConnConfig) map[string]any {
		tlsOf := func(t *tls.Config) any {
			if t == nil {
				return nil
			}
			// A session cache would let a resumed session skip VerifyPeerCertificate.
			return []any{t.InsecureSkipVerify, t.MinVersion, t.NextProtos, t.RootCAs == nil, len(t.Certificates), t.GetClientCertificate == nil,
				t.VerifyPeerCertificate == nil, t.VerifyConnection == nil, t.ServerName, t.ClientSessionCache == nil, t.Renegotiation}
		}
		var fallbacks []any
		for _, f := range c.Fallbacks {
			fallbacks = append(fallbacks, []any{f.Host, f.Port, tlsOf(f.TLSConfig)})
		}
		return map[string]any{
			"host": c.Host, "port": c.Port, "database": c.Database, "user": c.User, "password": c.Password,
			"connect timeout": c.ConnectTimeout, "tls": tlsOf(c.TLSConfig), "fallbacks": fallbacks,
			"ssl negotiation": c.SSLNegotiation, "ssl cert mode": c.SSLCertMode, "require auth": c.RequireAuth,
			"channel binding": c.ChannelBinding, "protocol": []string{c.MinProtocolVersion, c.MaxProtocolVersion},
			"runtime params": c.RuntimeParams, "validate connect": c.ValidateConnect == nil, "after connect": c.AfterConnect == nil,
			"after net connect": c.AfterNetConnect == nil, "oauth": c.OAuthTokenProvider == nil,
			"exec mode": c.DefaultQueryExecMode, "caches": []int{c.StatementCacheCapacity, c.DescriptionCacheCapacity},
		}
	}
	for i, s := range sessions {
		weak, err := s.s.config(s.db)
		require.NoError(t, err, s.reason)
		assert.Equal(t, what(clean[i]), what(weak), s.reason)
		assert.Equal(t, "the-admin-password-4711", weak.Password, s.reason)
		assert.Equal(t, "md5,scram-sha-256", weak.RequireAuth, s.reason)
		assert.Equal(t, s.db, weak.Database, s.reason)
		if s.s.c.TLS == nil {
			continue
		}
		// verify-ca: one host, TLS asked for with an SSLRequest, the chain checked with the CA.
		assert.Empty(t, weak.Fallbacks, "%s: no fallback, to plain text or elsewhere", s.reason)
		assert.Equal(t, "postgres", weak.SSLNegotiation, s.reason)
		if assert.NotNil(t, weak.TLSConfig, s.reason) && assert.NotNil(t, weak.TLSConfig.VerifyPeerCertificate, s.reason) {
			assert.NoError(t, weak.TLSConfig.VerifyPeerCertificate(otc.Server.Certificate, nil), "%s: the CA's server", s.reason)
			assert.ErrorIs(t, weak.TLSConfig.VerifyPeerCertificate(testcert.New(t).Server.Certificate, nil), dbusers.ErrUntrusted,
				"%s: another CA's server", s.reason)
		}
	}
}
