package main

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/mcsps/rds-lambda-controller/internal/hookauth"
)

// verifies says whether a CA bundle verifies a serving certificate for the hooks' Service.
func verifies(t *testing.T, caBundle, certPEM []byte) bool {
	t.Helper()
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(caBundle))
	block, _ := pem.Decode(certPEM)
	cert, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	_, err = cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: "rds-hooks.rds-system.svc"})
	return err == nil
}

// accepts says whether the hooks, with this token Secret mounted, accept token.
func accepts(t *testing.T, s *corev1.Secret, token string) bool {
	t.Helper()
	dir := t.TempDir()
	for k, v := range s.Data {
		require.NoError(t, os.WriteFile(filepath.Join(dir, k), v, 0o600))
	}
	tokens, err := hookauth.NewTokens(dir, nil)
	require.NoError(t, err)
	return tokens.Check("Bearer " + token)
}

// TestRotationNeverLeavesMetacontrollerBehind plays the rotation of docs/tenancy.md twice over,
// with Metacontroller as it is: it reads the CA bundle and the token only when it starts (its
// newParentController; a CompositeController whose spec is unchanged is not read again, so an
// annotation does nothing: found in review). The hooks see a Secret between one and two minutes
// after it changes (the kubelet), so at every moment either the Secret before the last step or
// the one after it is mounted: Metacontroller's calls must verify the hooks' certificate and be
// accepted with both.
func TestRotationNeverLeavesMetacontrollerBehind(t *testing.T) {
	first := secrets(t, nil, "")
	tlsS, tok := first[TLSSecret], first[TokenSecret]
	mcCA, mcToken := tlsS.Data[CAKey], string(tok.Data[TokenKey]) // Metacontroller starts
	restart := func() { mcCA, mcToken = tlsS.Data[CAKey], string(tok.Data[TokenKey]) }
	works := func(step string, mounted ...*corev1.Secret) {
		t.Helper()
		for _, m := range mounted {
			switch m.Name {
			case TLSSecret:
				assert.True(t, verifies(t, mcCA, m.Data[corev1.TLSCertKey]), "%s: Metacontroller verifies the certificate served", step)
			case TokenSecret:
				assert.True(t, accepts(t, m, mcToken), "%s: the hooks accept Metacontroller's token", step)
			}
		}
	}
	for round := range 2 {
		// The token: rotate, wait for the hooks' reload, restart Metacontroller.
		before := tok
		tok = secrets(t, []string{"rotate-token"}, asJSON(t, tok))[TokenSecret]
		works("rotate-token", before, tok)
		restart()
		works("restart after the reload", tok)
		assert.Equal(t, string(tok.Data[TokenKey]), mcToken, "round %d: Metacontroller sends the new token", round)

		// The certificate: stage, restart Metacontroller, promote.
		before = tlsS
		tlsS = secrets(t, []string{"rotate-tls"}, asJSON(t, tlsS))[TLSSecret]
		works("rotate-tls", before, tlsS)
		restart()
		works("restart", before, tlsS)
		before = tlsS
		tlsS = secrets(t, []string{"promote-tls"}, asJSON(t, tlsS))[TLSSecret]
		works("promote-tls", before, tlsS)
		assert.NotContains(t, tlsS.Data, NextCertKey)
		assert.Equal(t, 2, len(splitPEM(tlsS.Data[CAKey])), "round %d: the new CA and the one before, no more", round)
	}
}

func splitPEM(b []byte) [][]byte {
	var out [][]byte
	for {
		var block *pem.Block
		if block, b = pem.Decode(b); block == nil {
			return out
		}
		out = append(out, block.Bytes)
	}
}
