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

// reloaded is a value read from files, read again at most every ReloadEvery when it is asked
// for. A read that fails (a Secret volume being rewritten) keeps the value there was and says so;
// one that finds the files as they were keeps it silently.
type reloaded[T any] struct {
	read    func() (content []byte, v T, err error)
	changed func(T)     // says what changed
	failed  func(error) // says why the value stays
	now     func() time.Time

	mu      sync.Mutex
	checked time.Time
	content []byte // what the files held at the last read, to tell a change
	value   T
}

func newReloaded[T any](read func() ([]byte, T, error), changed func(T), failed func(error)) (*reloaded[T], error) {
	r := &reloaded[T]{read: read, changed: changed, failed: failed, now: time.Now}
	content, v, err := read()
	if err != nil {
		return nil, err
	}
	r.content, r.value, r.checked = content, v, r.now()
	return r, nil
}

func (r *reloaded[T]) get() T {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if now.Sub(r.checked) < ReloadEvery {
		return r.value
	}
	r.checked = now
	content, v, err := r.read()
	switch {
	case err != nil:
		r.failed(err)
	case !bytes.Equal(content, r.content):
		r.content, r.value = content, v
		r.changed(v)
	}
	return r.value
}

// Tokens are the bearer tokens the hooks accept, read from a file, or from every file of a
// directory (a Secret volume: keys token and, while a rotation is under way, previous).
type Tokens struct {
	r *reloaded[[][32]byte] // SHA-256 of each accepted token
}

// NewTokens reads the tokens at path; it fails when there is none, or one is too short.
func NewTokens(path string, logger *slog.Logger) (*Tokens, error) {
	if logger == nil {
		logger = slog.Default()
	}
	r, err := newReloaded(func() ([]byte, [][32]byte, error) { return readTokens(path) },
		func(d [][32]byte) { logger.Info("hook tokens reloaded", "path", path, "tokens", len(d)) },
		func(err error) {
			logger.Warn("hook tokens not reloaded; the previous ones stay", "path", path, "error", err.Error())
		})
	if err != nil {
		return nil, err
	}
	return &Tokens{r: r}, nil
}

// Count is how many tokens are accepted now.
func (t *Tokens) Count() int { return len(t.r.get()) }

// Check says whether an Authorization header value presents one of the tokens. It compares in
// constant time, against every token whatever matches first, so the time taken tells nothing.
func (t *Tokens) Check(header string) bool {
	token, ok := strings.CutPrefix(header, "Bearer ")
	if !ok {
		return false
	}
	presented := sha256.Sum256([]byte(strings.TrimSpace(token)))
	match := 0
	for _, d := range t.r.get() {
		match |= subtle.ConstantTimeCompare(presented[:], d[:])
	}
	return match == 1
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
	r *reloaded[*tls.Certificate]
}

// NewCertificate reads the certificate and its key.
func NewCertificate(certFile, keyFile string, logger *slog.Logger) (*Certificate, error) {
	if logger == nil {
		logger = slog.Default()
	}
	r, err := newReloaded(func() ([]byte, *tls.Certificate, error) { return readCertificate(certFile, keyFile) },
		func(c *tls.Certificate) {
			logger.Info("serving certificate reloaded", "certFile", certFile, "notAfter", c.Leaf.NotAfter)
		},
		func(err error) {
			logger.Warn("serving certificate not reloaded; the previous one stays", "certFile", certFile, "error", err.Error())
		})
	if err != nil {
		return nil, err
	}
	return &Certificate{r: r}, nil
}

// TLSConfig serves the certificate, TLS 1.2 at least (Metacontroller's own minimum since v4.16.2).
func (c *Certificate) TLSConfig() *tls.Config {
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return c.current(), nil },
		NextProtos:     []string{"h2", "http/1.1"},
	}
}

func (c *Certificate) current() *tls.Certificate { return c.r.get() }

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
