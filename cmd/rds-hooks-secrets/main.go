// Command rds-hooks-secrets prints the two Secrets that let Metacontroller, and only Metacontroller,
// call the hooks (docs/tenancy.md), ready for kubectl:
//
//	rds-hooks-tls    the hooks' serving certificate and key, and the CA Metacontroller verifies them with
//	rds-hooks-token  the bearer token Metacontroller presents (token), and the one before it (previous)
//
// Nothing is fixed in the repository: every run makes a new CA, certificate and token.
//
//	go run ./cmd/rds-hooks-secrets | kubectl create -f -                  # install
//	kubectl -n rds-system get secret rds-hooks-token -o json \
//	  | go run ./cmd/rds-hooks-secrets rotate-token | kubectl apply -f -  # rotate the token
//	kubectl -n rds-system get secret rds-hooks-tls -o json \
//	  | go run ./cmd/rds-hooks-secrets rotate-tls | kubectl apply -f -    # stage a new certificate
//	kubectl -n rds-system get secret rds-hooks-tls -o json \
//	  | go run ./cmd/rds-hooks-secrets promote-tls | kubectl apply -f -   # serve it
//
// Metacontroller reads the Secrets only when it starts (or the CompositeController's spec
// changes): docs/tenancy.md ("Rotation") says when to restart it.
package main

import (
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/mcsps/rds-lambda-controller/internal/hookauth"
	"github.com/mcsps/rds-lambda-controller/internal/version"
)

// The Secrets' names and keys, as manifests/deployment.yaml mounts them and
// manifests/compositecontroller.yaml hands them to Metacontroller.
const (
	TLSSecret   = "rds-hooks-tls"
	TokenSecret = "rds-hooks-token"
	TokenKey    = "token"
	PreviousKey = "previous"
	CAKey       = "ca.crt"
	// NextCertKey and NextKeyKey hold a staged certificate (rotate-tls) until promote-tls serves
	// it; the Deployment does not mount them.
	NextCertKey = "next.crt"
	NextKeyKey  = "next.key"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, time.Now()); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "rds-hooks-secrets:", err)
		os.Exit(1)
	}
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer, now time.Time) error {
	fs := flag.NewFlagSet("rds-hooks-secrets", flag.ContinueOnError)
	fs.SetOutput(stderr)
	namespace := fs.String("namespace", "rds-system", "namespace of the hooks' Deployment and Service")
	service := fs.String("service", "rds-hooks", "name of the hooks' Service: the certificate names it")
	validFor := fs.Duration("valid-for", 2*365*24*time.Hour, "how long the certificate is valid")
	var hosts multi
	fs.Var(&hosts, "host", "another DNS name or IP address for the certificate (repeatable), e.g. 127.0.0.1 for a local test")
	outDir := fs.String("out-dir", "", "write each Secret's keys as files under DIR/<Secret name>/, as a Secret volume mounts them, instead of printing YAML (for running the hooks outside a cluster)")
	showVersion := fs.Bool("version", false, "print the version and exit")
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: rds-hooks-secrets [flags] [rotate-token | rotate-tls | promote-tls]

Prints, as YAML for kubectl, the Secrets that let only Metacontroller call the hooks:
`+TLSSecret+` (tls.crt, tls.key, ca.crt) and `+TokenSecret+` (token; previous during a rotation).
Every run makes a new CA, certificate and token (docs/tenancy.md).

  rds-hooks-secrets | kubectl create -f -
  kubectl -n rds-system get secret `+TokenSecret+` -o json | rds-hooks-secrets rotate-token | kubectl apply -f -
  kubectl -n rds-system get secret `+TLSSecret+` -o json | rds-hooks-secrets rotate-tls | kubectl apply -f -
  kubectl -n rds-system get secret `+TLSSecret+` -o json | rds-hooks-secrets promote-tls | kubectl apply -f -

rotate-token makes a new token and keeps the one in use as previous, which the hooks still accept.
rotate-tls stages a new certificate (next.crt, next.key, not yet served) and puts its new CA into
ca.crt beside the one in use; promote-tls serves the staged certificate. Metacontroller reads the
Secrets only when it starts: restart it after the hooks have the new token, and between rotate-tls
and promote-tls (docs/tenancy.md, "Rotation").

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *showVersion {
		fmt.Fprintln(stdout, version.String("rds-hooks-secrets"))
		return nil
	}
	names := append([]string{
		*service + "." + *namespace + ".svc",
		*service + "." + *namespace + ".svc.cluster.local",
		*service + "." + *namespace,
	}, hosts...)
	var out []*corev1.Secret
	switch cmd := fs.Arg(0); {
	case fs.NArg() > 1:
		return fmt.Errorf("unexpected arguments: %v", fs.Args()[1:])
	case cmd == "":
		ca, cert, key, err := hookauth.NewServing(names, now, *validFor)
		if err != nil {
			return err
		}
		out = append(out, tlsSecret(*namespace, ca, cert, key), tokenSecret(*namespace, hookauth.NewToken(), ""))
	case cmd == "rotate-token":
		old, err := readSecret(stdin, TokenSecret)
		if err != nil {
			return err
		}
		current := strings.TrimSpace(string(old.Data[TokenKey]))
		if current == "" {
			return fmt.Errorf("the Secret %s on standard input has no %s", TokenSecret, TokenKey)
		}
		out = append(out, tokenSecret(old.Namespace, hookauth.NewToken(), current))
	case cmd == "rotate-tls":
		old, err := readSecret(stdin, TLSSecret)
		if err != nil {
			return err
		}
		inUse := servingCA(old)
		if inUse == nil {
			return fmt.Errorf("the Secret %s on standard input has no CA certificate in %s that signs its %s", TLSSecret, CAKey, corev1.TLSCertKey)
		}
		ca, cert, key, err := hookauth.NewServing(names, now, *validFor)
		if err != nil {
			return err
		}
		// NOTE: the new CA first, the one in use after it; the certificate in use is still served.
		// Once Metacontroller trusts both, promote-tls serves the new one.
		staged := tlsSecret(old.Namespace, append(ca, inUse...), old.Data[corev1.TLSCertKey], old.Data[corev1.TLSPrivateKeyKey])
		staged.Data[NextCertKey], staged.Data[NextKeyKey] = cert, key
		out = append(out, staged)
	case cmd == "promote-tls":
		old, err := readSecret(stdin, TLSSecret)
		if err != nil {
			return err
		}
		if len(old.Data[NextCertKey]) == 0 || len(old.Data[NextKeyKey]) == 0 {
			return fmt.Errorf("the Secret %s on standard input has no staged certificate (%s, %s): run rotate-tls first", TLSSecret, NextCertKey, NextKeyKey)
		}
		out = append(out, tlsSecret(old.Namespace, old.Data[CAKey], old.Data[NextCertKey], old.Data[NextKeyKey]))
	default:
		return fmt.Errorf("unknown command %q: want rotate-token, rotate-tls or promote-tls", cmd)
	}
	if *outDir != "" {
		return writeFiles(*outDir, out)
	}
	for i, o := range out {
		b, err := yaml.Marshal(o)
		if err != nil {
			return err
		}
		if i > 0 {
			fmt.Fprintln(stdout, "---")
		}
		if _, err := stdout.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// writeFiles writes each Secret's keys as files under dir/<name>/, readable by the owner only.
func writeFiles(dir string, secrets []*corev1.Secret) error {
	for _, s := range secrets {
		d := filepath.Join(dir, s.Name)
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
		for k, v := range s.Data {
			if err := os.WriteFile(filepath.Join(d, k), v, 0o600); err != nil {
				return err
			}
		}
	}
	return nil
}

func meta(namespace, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{
		"app.kubernetes.io/name": "rds-hooks", "app.kubernetes.io/part-of": "rds-lambda-controller",
	}}
}

func tlsSecret(namespace string, ca, cert, key []byte) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: meta(namespace, TLSSecret),
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: cert, corev1.TLSPrivateKeyKey: key, CAKey: ca},
	}
}

func tokenSecret(namespace, token, previous string) *corev1.Secret {
	data := map[string][]byte{TokenKey: []byte(token)}
	if previous != "" {
		data[PreviousKey] = []byte(previous)
	}
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: meta(namespace, TokenSecret),
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}
}

// servingCA is the PEM of the CA certificate in s's ca.crt that signs its tls.crt, or nil.
func servingCA(s *corev1.Secret) []byte {
	leafBlock, _ := pem.Decode(s.Data[corev1.TLSCertKey])
	if leafBlock == nil {
		return nil
	}
	leaf, err := x509.ParseCertificate(leafBlock.Bytes)
	if err != nil {
		return nil
	}
	for rest := s.Data[CAKey]; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return nil
		}
		if ca, err := x509.ParseCertificate(b.Bytes); err == nil && leaf.CheckSignatureFrom(ca) == nil {
			return pem.EncodeToMemory(b)
		}
	}
}

// readSecret reads the Secret kubectl get -o json prints.
func readSecret(r io.Reader, name string) (*corev1.Secret, error) {
	var s corev1.Secret
	if err := json.NewDecoder(r).Decode(&s); err != nil {
		return nil, fmt.Errorf("read the Secret %s from standard input (kubectl get secret %s -o json): %w", name, name, err)
	}
	if s.Kind != "Secret" || s.Name != name {
		return nil, fmt.Errorf("standard input holds %s %q, not the Secret %s", s.Kind, s.Name, name)
	}
	return &s, nil
}

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }
