package hookauth

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCertificateIsReloaded: a rotated Secret's certificate is served from the next handshake
// after ReloadEvery, without a restart; a half-written one keeps the previous.
func TestCertificateIsReloaded(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	write := func(cert, key []byte) {
		require.NoError(t, os.WriteFile(certFile, cert, 0o600))
		require.NoError(t, os.WriteFile(keyFile, key, 0o600))
	}
	now := time.Now()
	ca1, cert1, key1, err := NewServing([]string{"rds-hooks.rds-system.svc"}, now, time.Hour)
	require.NoError(t, err)
	write(cert1, key1)
	c, err := NewCertificate(certFile, keyFile, nil)
	require.NoError(t, err)
	clock := c.r.checked
	c.r.now = func() time.Time { return clock }
	verify := func(ca []byte) error {
		pool := x509.NewCertPool()
		require.True(t, pool.AppendCertsFromPEM(ca))
		_, err := c.current().Leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: "rds-hooks.rds-system.svc"})
		return err
	}
	require.NoError(t, verify(ca1))

	ca2, cert2, key2, err := NewServing([]string{"rds-hooks.rds-system.svc"}, now, time.Hour)
	require.NoError(t, err)
	write(cert2, key2)
	assert.NoError(t, verify(ca1), "read again only after ReloadEvery")
	clock = clock.Add(ReloadEvery)
	assert.NoError(t, verify(ca2), "the rotated certificate")
	assert.Error(t, verify(ca1))

	write(cert1, []byte("half written"))
	clock = clock.Add(ReloadEvery)
	assert.NoError(t, verify(ca2), "a broken pair keeps the previous certificate")
	assert.Equal(t, uint16(tls.VersionTLS12), c.TLSConfig().MinVersion)
}

// TestGeneratedCertificate: the serving certificate names every host, serves only as a server,
// and its CA signs nothing else (path length 0).
func TestGeneratedCertificate(t *testing.T) {
	ca, cert, key, err := NewServing([]string{"a.svc", "127.0.0.1"}, time.Now(), 24*time.Hour)
	require.NoError(t, err)
	pair, err := tls.X509KeyPair(cert, key)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(ca))
	for _, host := range []string{"a.svc", "127.0.0.1"} {
		_, err := pair.Leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: host})
		assert.NoError(t, err, host)
	}
	_, err = pair.Leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: "b.svc"})
	assert.Error(t, err)
	_, err = pair.Leaf.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	assert.Error(t, err, "not a client certificate")
	caCert, err := x509.ParseCertificate(mustBlock(t, ca))
	require.NoError(t, err)
	assert.True(t, caCert.MaxPathLenZero)
	assert.Len(t, NewToken(), 43)
	assert.NotEqual(t, NewToken(), NewToken())
	assert.Equal(t, ca, FirstCertificate(append(append([]byte{}, ca...), cert...)))
}

func mustBlock(t *testing.T, pemBytes []byte) []byte {
	t.Helper()
	block, _ := pem.Decode(pemBytes)
	require.NotNil(t, block)
	return block.Bytes
}
