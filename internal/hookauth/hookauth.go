// Package hookauth holds what proves a hook call comes from Metacontroller and what proves the
// hooks to Metacontroller: the bearer tokens the hooks accept, the serving certificate, both read
// from the files a Secret volume mounts and read again when the Secret is rotated, and the
// generator of both (cmd/rds-hooks-secrets). docs/tenancy.md says why a bearer token over TLS.
package hookauth

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// MinTokenLen is the shortest token accepted: a generated one is 43 characters (32 random bytes).
const MinTokenLen = 32

// ReloadEvery is how often the files are read again, at most: a Secret volume changes them within
// the kubelet's sync period (about a minute), so a rotation is picked up without a restart.
const ReloadEvery = 5 * time.Second

// Tokens are the bearer tokens the hooks accept, read from a file, or from every file of a
// directory (a Secret volume: keys token and, while a rotation is under way, previous).
type Tokens struct {
	path   string
	logger *slog.Logger
	now    func() time.Time

	mu      sync.Mutex
	checked time.Time
	content []byte     // what the files held at the last read, to tell a change
	digests [][32]byte // SHA-256 of each accepted token
}

// NewTokens reads the tokens at path; it fails when there is none, or one is too short.
func NewTokens(path string, logger *slog.Logger) (*Tokens, error) {
	if logger == nil {
		logger = slog.Default()
	}
	t := &Tokens{path: path, logger: logger, now: time.Now}
	content, digests, err := readTokens(path)
	if err != nil {
		return nil, err
	}
	t.content, t.digests, t.checked = content, digests, t.now()
	return t, nil
}

// Count is how many tokens are accepted now.
func (t *Tokens) Count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.reloadLocked()
	return len(t.digests)
}

// Check says whether an Authorization header value presents one of the tokens. It compares in
// constant time, against every token whatever matches first, so the time taken tells nothing.
func (t *Tokens) Check(header string) bool {
	token, ok := strings.CutPrefix(header, "Bearer ")
	if !ok {
		return false
	}
	presented := sha256.Sum256([]byte(strings.TrimSpace(token)))
	t.mu.Lock()
	t.reloadLocked()
	digests := t.digests
	t.mu.Unlock()
	match := 0
	for _, d := range digests {
		match |= subtle.ConstantTimeCompare(presented[:], d[:])
	}
	return match == 1
}

// reloadLocked reads the files again once ReloadEvery has passed. A read that fails, or finds no
// valid token (a Secret volume being rewritten), keeps the tokens there were and says so.
func (t *Tokens) reloadLocked() {
	now := t.now()
	if now.Sub(t.checked) < ReloadEvery {
		return
	}
	t.checked = now
	content, digests, err := readTokens(t.path)
	if err != nil {
		t.logger.Warn("hook tokens not reloaded; the previous ones stay", "path", t.path, "error", err.Error())
		return
	}
	if bytes.Equal(content, t.content) {
		return
	}
	t.content, t.digests = content, digests
	t.logger.Info("hook tokens reloaded", "path", t.path, "tokens", len(digests))
}

// readTokens reads a token file, or every file of a directory but the hidden ones (a Secret
// volume's ..data). Each holds one token; surrounding white space is not part of it.
func readTokens(path string) ([]byte, [][32]byte, error) {
	files := []string{path}
	if fi, err := os.Stat(path); err != nil {
		return nil, nil, err
	} else if fi.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, nil, err
		}
		files = files[:0]
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), ".") {
				files = append(files, filepath.Join(path, e.Name()))
			}
		}
		slices.Sort(files)
	}
	var content []byte
	var digests [][32]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, err
		}
		content = append(append(content, f...), b...)
		token := strings.TrimSpace(string(b))
		if token == "" {
			continue // an empty key: no token
		}
		if len(token) < MinTokenLen {
			return nil, nil, fmt.Errorf("%s: a hook token must have at least %d characters (go run ./cmd/rds-hooks-secrets makes one)", f, MinTokenLen)
		}
		digests = append(digests, sha256.Sum256([]byte(token)))
	}
	if len(digests) == 0 {
		return nil, nil, fmt.Errorf("%s: no hook token", path)
	}
	return content, digests, nil
}

// Certificate is the hooks' serving certificate, read from PEM files and read again when they
// change (a rotated Secret).
type Certificate struct {
	certFile, keyFile string
	logger            *slog.Logger
	now               func() time.Time

	mu      sync.Mutex
	checked time.Time
	content []byte
	cert    *tls.Certificate
}

// NewCertificate reads the certificate and its key.
func NewCertificate(certFile, keyFile string, logger *slog.Logger) (*Certificate, error) {
	if logger == nil {
		logger = slog.Default()
	}
	c := &Certificate{certFile: certFile, keyFile: keyFile, logger: logger, now: time.Now}
	content, cert, err := readCertificate(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	c.content, c.cert, c.checked = content, cert, c.now()
	return c, nil
}

// TLSConfig serves the certificate, TLS 1.2 at least (Metacontroller's own minimum since v4.16.2).
func (c *Certificate) TLSConfig() *tls.Config {
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return c.current(), nil },
		NextProtos:     []string{"h2", "http/1.1"},
	}
}

func (c *Certificate) current() *tls.Certificate {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if now.Sub(c.checked) < ReloadEvery {
		return c.cert
	}
	c.checked = now
	content, cert, err := readCertificate(c.certFile, c.keyFile)
	switch {
	case err != nil:
		c.logger.Warn("serving certificate not reloaded; the previous one stays", "certFile", c.certFile, "error", err.Error())
	case !bytes.Equal(content, c.content):
		c.content, c.cert = content, cert
		c.logger.Info("serving certificate reloaded", "certFile", c.certFile, "notAfter", cert.Leaf.NotAfter)
	}
	return c.cert
}

func readCertificate(certFile, keyFile string) ([]byte, *tls.Certificate, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, nil, err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("%s, %s: %w", certFile, keyFile, err)
	}
	if cert.Leaf == nil {
		return nil, nil, errors.New(certFile + ": no certificate")
	}
	return append(certPEM, keyPEM...), &cert, nil
}
