package dbusers

import (
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/testcert"
)

// TestVerifyCAWithoutCAFileTrustsNoPublicCA (review #19 A): the name in the server's certificate is
// not checked (VERIFY_CA), so a chain is worth only as much as the CAs that may sign it. The
// system's roots sign certificates for anyone's domain: whoever can answer at the instance's
// address with such a certificate would be trusted, and sent the root password. Without
// --db-ca-file no server is trusted (MySQL's VERIFY_CA needs --ssl-ca too).
//
// The system's roots are loaded once per process: the test runs itself again with SSL_CERT_FILE
// naming a CA it made, which then stands for a public CA.
func TestVerifyCAWithoutCAFileTrustsNoPublicCA(t *testing.T) {
	ca := testcert.New(t)
	if os.Getenv("REVIEW_TLS_CHILD") == "" {
		dir := t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^TestVerifyCAWithoutCAFileTrustsNoPublicCA$", "-test.count=1")
		cmd.Env = append(os.Environ(), "REVIEW_TLS_CHILD=1", "REVIEW_TLS_DIR="+dir)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return
	}
	// The child: a CA of the system's roots, written before the pool is loaded.
	dir := os.Getenv("REVIEW_TLS_DIR")
	file := filepath.Join(dir, "public-ca.pem")
	require.NoError(t, os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.DER}), 0o600))
	t.Setenv("SSL_CERT_FILE", file)
	t.Setenv("SSL_CERT_DIR", dir)
	err := handshake(t, VerifyCA(nil), ca.Server)
	assert.ErrorIs(t, err, ErrUntrusted, "a server whose certificate a system root signs, for any name, is not trusted without --db-ca-file")
}
