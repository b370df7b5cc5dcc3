package dbusers

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testCA is a CA and a server certificate it signs, for a name that is not the address dialled
// (as the controller dials an instance's private IP).
type testCA struct {
	pool   *x509.CertPool
	server tls.Certificate
	caDER  []byte
}

func newTestCA(t *testing.T) testCA {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test RDS CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "rds-instance.internal"},
		DNSNames:  []string{"rds-instance.internal"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &key.PublicKey, caKey)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return testCA{pool: pool, server: tls.Certificate{Certificate: [][]byte{leafDER}, PrivateKey: key}, caDER: caDER}
}

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
	otc, other := newTestCA(t), newTestCA(t)
	assert.NoError(t, handshake(t, VerifyCA(otc.pool), otc.server), "signed by the configured CA, dialled by IP")
	err := handshake(t, VerifyCA(otc.pool), other.server)
	require.ErrorIs(t, err, ErrUntrusted, "signed by another CA")
	assert.Contains(t, err.Error(), "not signed by a CA the controller trusts")
	assert.ErrorIs(t, connectError("10.0.0.1:3306", "root", err), ErrUntrusted, "sorted as untrusted, not unreachable")
	assert.NotErrorIs(t, connectError("10.0.0.1:3306", "root", err), ErrUnreachable)
	assert.ErrorIs(t, handshake(t, VerifyCA(nil), otc.server), ErrUntrusted, "without --db-ca-file no server is trusted")
}
