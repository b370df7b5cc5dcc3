package dbusers

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
)

// VerifyCA is the TLS configuration of a session to a server whose certificate must be signed by
// one of roots, as MySQL's --ssl-mode=VERIFY_CA checks it: the chain, not the name. Without roots
// no server is trusted.
//
// NOTE: the controller reaches an OTC instance by its private IP, and OTC documents connecting
// with its CA certificate (--ssl-ca), which verifies the chain; it does not document the names in
// the server's certificate, so a check of the name against the IP (VERIFY_IDENTITY) could refuse
// every instance. The chain is verified in VerifyPeerCertificate, as crypto/tls does without a
// name; InsecureSkipVerify only turns off the built-in check that would also compare the name.
func VerifyCA(roots *x509.CertPool) *tls.Config {
	return &tls.Config{
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: true, // the chain is verified below (VERIFY_CA), the name is not
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			return verifyChain(raw, roots)
		},
	}
}

// verifyChain checks that the server's certificate chains to one of roots.
//
// NOTE: the name is not checked, so the system's roots are no roots here: they sign certificates
// for anyone's domain, and whoever answered at the instance's address with one would be trusted
// and sent the root password. MySQL's VERIFY_CA likewise needs its --ssl-ca.
func verifyChain(raw [][]byte, roots *x509.CertPool) error {
	if roots == nil {
		return fmt.Errorf("%w: no CA is configured to verify it with (--db-ca-file)", ErrUntrusted)
	}
	if len(raw) == 0 {
		return fmt.Errorf("%w: the server sent no certificate", ErrUntrusted)
	}
	certs := make([]*x509.Certificate, len(raw))
	for i, der := range raw {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return fmt.Errorf("%w: %s", ErrUntrusted, err.Error())
		}
		certs[i] = c
	}
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	if _, err := certs[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter}); err != nil {
		return fmt.Errorf("%w: it is not signed by a CA the controller trusts (--db-ca-file): %s", ErrUntrusted, err.Error())
	}
	return nil
}

// serverRefusals are crypto/tls's own refusals of a server's certificate, and of the server's
// proof that it holds the certificate's key, which it makes outside VerifyPeerCertificate: a
// certificate it cannot read or use (before VerifyPeerCertificate is called), and a handshake
// signed with another key than the certificate's (after it). The last is how a server fails that
// shows an instance's certificate, signed by OTC's CA, without its key: the certificate is no
// secret, any client of the instance is shown it.
//
// NOTE: crypto/tls has no error type for them; TestVerifyCA and pgusers' TestVerifiedSessions
// hold the texts an impostor causes.
var serverRefusals = []string{
	"tls: invalid signature by the server certificate",
	"tls: certificate used with invalid signature algorithm",
	"tls: failed to parse certificate from server",
	"tls: received empty certificates message",
	"tls: server's certificate contains an unsupported type of public key",
	"tls: server sent certificate containing RSA key larger than",
}

// UntrustedServer sorts a failed TLS session to a server that must be verified (VerifyCA): an
// error matching ErrUntrusted when it ended on the server's certificate, which VerifyCA or
// crypto/tls refused, or on the server's proof of the certificate's key; nil otherwise (a server
// that went away is unreachable, not untrusted). Nothing was sent to such a server.
func UntrustedServer(err error) error {
	if errors.Is(err, ErrUntrusted) {
		return err
	}
	for _, r := range serverRefusals {
		if strings.Contains(err.Error(), r) {
			return fmt.Errorf("%w: %s", ErrUntrusted, r)
		}
	}
	return nil
}
