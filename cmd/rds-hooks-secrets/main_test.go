package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/mcsps/rds-lambda-controller/internal/hookauth"
)

func secrets(t *testing.T, args []string, stdin string) map[string]*corev1.Secret {
	t.Helper()
	var out, errs bytes.Buffer
	require.NoError(t, run(args, strings.NewReader(stdin), &out, &errs, time.Now()), errs.String())
	got := map[string]*corev1.Secret{}
	for _, doc := range strings.Split(out.String(), "\n---\n") {
		var s corev1.Secret
		require.NoError(t, yaml.UnmarshalStrict([]byte(doc), &s))
		got[s.Name] = &s
	}
	return got
}

func asJSON(t *testing.T, s *corev1.Secret) string {
	b, err := json.Marshal(s)
	require.NoError(t, err)
	return string(b)
}

// TestSecretsInstallAndRotate: a first run makes both Secrets anew; rotate-token keeps the token in
// use as previous; rotate-tls trusts the CA in use next to the new one.
func TestSecretsInstallAndRotate(t *testing.T) {
	first := secrets(t, nil, "")
	require.Len(t, first, 2)
	tlsS, tok := first[TLSSecret], first[TokenSecret]
	assert.Equal(t, corev1.SecretTypeTLS, tlsS.Type)
	assert.Equal(t, "rds-system", tlsS.Namespace)
	for _, k := range []string{"tls.crt", "tls.key", CAKey} {
		assert.NotEmpty(t, tlsS.Data[k], k)
	}
	assert.Len(t, string(tok.Data[TokenKey]), 43)
	assert.NotContains(t, tok.Data, PreviousKey)
	again := secrets(t, nil, "")
	assert.NotEqual(t, tok.Data[TokenKey], again[TokenSecret].Data[TokenKey], "nothing is fixed: every run makes a new token")

	rotated := secrets(t, []string{"rotate-token"}, asJSON(t, tok))
	require.Len(t, rotated, 1)
	assert.Equal(t, tok.Data[TokenKey], rotated[TokenSecret].Data[PreviousKey], "the token Metacontroller sends until it reads the new one")
	assert.NotEqual(t, tok.Data[TokenKey], rotated[TokenSecret].Data[TokenKey])
	twice := secrets(t, []string{"rotate-token"}, asJSON(t, rotated[TokenSecret]))
	assert.Equal(t, rotated[TokenSecret].Data[TokenKey], twice[TokenSecret].Data[PreviousKey], "only one previous token is kept")

	staged := secrets(t, []string{"rotate-tls"}, asJSON(t, tlsS))[TLSSecret]
	assert.Equal(t, tlsS.Data["tls.crt"], staged.Data["tls.crt"], "rotate-tls serves the certificate in use still")
	assert.Equal(t, tlsS.Data["tls.key"], staged.Data["tls.key"])
	assert.True(t, bytes.HasSuffix(staged.Data[CAKey], tlsS.Data[CAKey]), "the CA in use is still trusted")
	assert.NotEqual(t, tlsS.Data[CAKey], hookauth.FirstCertificate(staged.Data[CAKey]), "a new CA first")
	assert.NotEmpty(t, staged.Data[NextCertKey])
	promoted := secrets(t, []string{"promote-tls"}, asJSON(t, staged))[TLSSecret]
	assert.Equal(t, staged.Data[NextCertKey], promoted.Data["tls.crt"])
	assert.Equal(t, staged.Data[NextKeyKey], promoted.Data["tls.key"])
	assert.Equal(t, staged.Data[CAKey], promoted.Data[CAKey])

	var out, errs bytes.Buffer
	assert.ErrorContains(t, run([]string{"rotate-token"}, strings.NewReader(asJSON(t, tlsS)), &out, &errs, time.Now()), "not the Secret rds-hooks-token")
	assert.ErrorContains(t, run([]string{"rotate"}, strings.NewReader(""), &out, &errs, time.Now()), "unknown command")
	assert.ErrorContains(t, run([]string{"promote-tls"}, strings.NewReader(asJSON(t, tlsS)), &out, &errs, time.Now()), "run rotate-tls first")
}
