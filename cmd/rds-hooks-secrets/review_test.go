package main

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/mcsps/rds-lambda-controller/internal/hookauth"
)

// metacontrollerView is what Metacontroller holds of the Secrets: it resolves caBundle and
// authorization in newParentController, i.e. only when the CompositeController is created or its
// *spec* changes (metacontroller pkg/controller/composite/metacontroller.go,
// reconcileCompositeController: `if apiequality.Semantic.DeepEqual(cc.Spec, pc.cc.Spec) { return nil }`),
// or when Metacontroller restarts.
type metacontrollerView struct {
	spec  any
	ca    []byte
	token string
}

// reread is Metacontroller's reconcile of the CompositeController after `kubectl annotate`.
func (m *metacontrollerView) reread(cc map[string]any, ca []byte, token string) {
	if reflect.DeepEqual(cc["spec"], m.spec) {
		return // "Nothing has changed."
	}
	m.spec, m.ca, m.token = cc["spec"], ca, token
}

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

// REVIEW: the rotation of docs/tenancy.md ("Rotation") is not zero-downtime: its step "kubectl
// annotate compositecontroller rds-controller rds.mcsps.de/rotated=..." changes metadata only,
// and Metacontroller re-resolves caBundle/authorization only when the CompositeController's spec
// changes. So after rotate-tls the hooks serve (within a minute) a certificate Metacontroller's
// old CA bundle does not verify, and every hook call fails TLS; after the second rotate-token
// (or "a leaked token: rotate twice") the token Metacontroller still sends is no longer accepted
// and every hook call gets 401 -- until Metacontroller is restarted.
func TestReviewRotationProcedureLeavesMetacontrollerBehind(t *testing.T) {
	ccYAML, err := os.ReadFile(filepath.Join("..", "..", "manifests", "compositecontroller.yaml"))
	require.NoError(t, err)
	var cc map[string]any
	require.NoError(t, yaml.Unmarshal(ccYAML, &cc))

	first := secrets(t, nil, "")
	tlsS, tok := first[TLSSecret], first[TokenSecret]
	mc := &metacontrollerView{}
	mc.reread(cc, tlsS.Data[CAKey], string(tok.Data[TokenKey])) // kubectl apply of the CompositeController

	annotate := func() { // kubectl annotate compositecontroller rds-controller rds.mcsps.de/rotated=... --overwrite
		md := cc["metadata"].(map[string]any)
		ann, _ := md["annotations"].(map[string]any)
		if ann == nil {
			ann = map[string]any{}
		}
		ann["rds.mcsps.de/rotated"] = time.Now().String()
		md["annotations"] = ann
	}

	t.Run("rotate-tls", func(t *testing.T) {
		renewed := secrets(t, []string{"rotate-tls"}, asJSON(t, tlsS))[TLSSecret]
		annotate()
		mc.reread(cc, renewed.Data[CAKey], mc.token)
		assert.True(t, verifies(t, renewed.Data[CAKey], renewed.Data["tls.crt"]))
		assert.True(t, verifies(t, mc.ca, renewed.Data["tls.crt"]),
			"Metacontroller verifies the certificate the hooks serve after rotate-tls and the annotation")
	})
	t.Run("rotate-token twice", func(t *testing.T) {
		cur := tok
		for range 2 {
			cur = secrets(t, []string{"rotate-token"}, asJSON(t, cur))[TokenSecret]
			annotate()
			mc.reread(cc, mc.ca, string(cur.Data[TokenKey]))
		}
		dir := t.TempDir()
		for k, v := range cur.Data {
			require.NoError(t, os.WriteFile(filepath.Join(dir, k), v, 0o600))
		}
		accepted, err := hookauth.NewTokens(dir, nil)
		require.NoError(t, err)
		assert.True(t, accepted.Check("Bearer "+mc.token), "the hooks accept the token Metacontroller sends after the documented rotation")
	})
}
