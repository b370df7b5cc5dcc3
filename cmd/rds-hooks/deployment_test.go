package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/mcsps/rds-lambda-controller/internal/hookauth"
	"github.com/mcsps/rds-lambda-controller/test/testdata"
	"github.com/mcsps/rds-lambda-controller/test/testutil"
)

// asDeployed returns the arguments manifests/deployment.yaml starts the hooks with, the Secret
// volumes written where it mounts them (under a temporary directory, with a fresh certificate
// for 127.0.0.1 and a fresh token), and the listen addresses moved to free local ports.
func asDeployed(t *testing.T) (args []string, ca []byte, token string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "manifests", "deployment.yaml"))
	require.NoError(t, err)
	var d appsv1.Deployment
	require.NoError(t, yaml.UnmarshalStrict(data, &d))
	c := d.Spec.Template.Spec.Containers[0]

	ca, cert, key, err := hookauth.NewServing([]string{"127.0.0.1"}, time.Now(), time.Hour)
	require.NoError(t, err)
	token = hookauth.NewToken()
	files := map[string]map[string][]byte{ // what each Secret holds
		"rds-hooks-tls":   {"tls.crt": cert, "tls.key": key, "ca.crt": ca},
		"rds-hooks-token": {"token": []byte(token)},
	}
	root := t.TempDir()
	moved := map[string]string{} // mount path -> local directory
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Secret == nil {
			continue
		}
		content, ok := files[v.Secret.SecretName]
		require.True(t, ok, "the Deployment mounts the Secret %s, which rds-hooks-secrets does not make", v.Secret.SecretName)
		dir := filepath.Join(root, v.Name)
		require.NoError(t, os.MkdirAll(dir, 0o700))
		for k := range content {
			if len(v.Secret.Items) == 0 || containsKey(v.Secret.Items, k) {
				require.NoError(t, os.WriteFile(filepath.Join(dir, k), content[k], 0o400))
			}
		}
		for _, m := range c.VolumeMounts {
			if m.Name == v.Name {
				moved[m.MountPath] = dir
			}
		}
	}
	for _, a := range c.Args {
		for mount, dir := range moved {
			a = strings.Replace(a, "="+mount, "="+dir, 1)
		}
		switch {
		case strings.HasPrefix(a, "--listen="):
			a = "--listen=" + freeAddr(t)
		case strings.HasPrefix(a, "--logs-listen="):
			a = "--logs-listen=" + freeAddr(t)
		}
		args = append(args, a)
	}
	return append(args, "--cloud=sim"), ca, token
}

func containsKey(items []corev1.KeyToPath, key string) bool {
	for _, i := range items {
		if i.Key == key {
			return true
		}
	}
	return false
}

// TestRunAsTheDeploymentRunsIt: started with the Deployment's arguments and its Secrets, the hooks
// serve HTTPS with the Secret's certificate; a hook call without Metacontroller's token, or with
// another, gets 401 and makes no OTC call; one with it is served. Probes and /metrics need no
// token. The log never holds the token.
func TestRunAsTheDeploymentRunsIt(t *testing.T) {
	args, ca, token := asDeployed(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout := &testutil.Buffer{}
	errc := make(chan error, 1)
	go func() { errc <- run(ctx, args, noEnv, stdout, io.Discard) }()

	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(ca))
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	var base string
	for _, a := range args {
		if addr, ok := strings.CutPrefix(a, "--listen="); ok {
			base = "https://" + addr
		}
	}
	require.Eventually(t, func() bool {
		select {
		case err := <-errc:
			t.Fatalf("run returned early: %v", err)
		default:
		}
		resp, err := client.Get(base + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 10*time.Second, 50*time.Millisecond, "/readyz over HTTPS, verified with the Secret's CA")

	body, err := os.ReadFile(filepath.Join(testdata.Dir(), "curl", "sync-create.json"))
	require.NoError(t, err)
	post := func(path, auth string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(body))
		require.NoError(t, err)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := client.Do(req)
		require.NoError(t, err)
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(out)
	}
	otcCalls := func() string {
		resp, err := client.Get(base + "/metrics")
		require.NoError(t, err)
		defer resp.Body.Close()
		text, _ := io.ReadAll(resp.Body)
		return strings.Join(regexp.MustCompile(`(?m)^rds_hooks_otc_calls_total.*$`).FindAllString(string(text), -1), "\n")
	}

	before := otcCalls()
	for _, path := range []string{"/sync", "/finalize", "/customize"} {
		for _, auth := range []string{"", "Bearer " + hookauth.NewToken(), "Basic " + token, token} {
			code, _ := post(path, auth)
			assert.Equal(t, http.StatusUnauthorized, code, "%s with %q", path, strings.SplitN(auth, " ", 2)[0])
		}
	}
	assert.Equal(t, before, otcCalls(), "a refused call reaches no OTC call")

	code, answer := post("/sync", "Bearer "+token)
	require.Equal(t, http.StatusOK, code, answer)
	assert.Contains(t, answer, `"name":"my-rds-single-connection"`)
	assert.NotEqual(t, before, otcCalls(), "Metacontroller's call is served")

	_, err = http.Get(strings.Replace(base, "https", "http", 1) + "/readyz")
	if err == nil {
		resp, _ := http.Get(strings.Replace(base, "https", "http", 1) + "/sync")
		if resp != nil {
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "plain HTTP is not served")
			resp.Body.Close()
		}
	}
	cancel()
	require.NoError(t, <-errc)
	assert.Contains(t, stdout.String(), `"authenticated":true`)
	assert.Contains(t, stdout.String(), "hook call refused: no valid credential")
	assert.NotContains(t, stdout.String(), token, "no token in the log")
	assert.NotContains(t, stdout.String(), "NOT AUTHENTICATED")
}
