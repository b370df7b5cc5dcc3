package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/internal/otcsim"
	"github.com/mcsps/rds-lambda-controller/internal/version"
	"github.com/mcsps/rds-lambda-controller/sync/cloud/otc"
	"github.com/mcsps/rds-lambda-controller/test/testdata"
	"github.com/mcsps/rds-lambda-controller/test/testutil"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

func noEnv(string) string { return "" }

// waitReady polls /readyz until it answers 200.
func waitReady(t *testing.T, base string, errc <-chan error) {
	t.Helper()
	for range 200 {
		select {
		case err := <-errc:
			t.Fatalf("run returned early: %v", err)
		default:
		}
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("rds-hooks did not become ready")
}

// TestRunWithEmbeddedSimulator is `make run`: the hooks serve against the embedded simulator, a
// sync call with the sample object answers with a status and the connection Secret, and SIGTERM
// (the context) stops the server cleanly.
func TestRunWithEmbeddedSimulator(t *testing.T) {
	addr, logsAddr := freeAddr(t), freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout, stderr := &testutil.Buffer{}, &testutil.Buffer{}
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, []string{"--cloud", "sim", "--insecure-no-auth", "--listen", addr, "--logs-listen", logsAddr}, noEnv, stdout, stderr)
	}()
	base := "http://" + addr
	waitReady(t, base, errc)

	body, err := os.ReadFile(filepath.Join(testdata.Dir(), "curl", "sync-create.json"))
	require.NoError(t, err)
	answer := postSync(t, base, body)
	require.Len(t, answer.Children, 1)
	assert.Equal(t, "my-rds-single-connection", answer.Children[0]["metadata"].(map[string]any)["name"])

	metrics, err := http.Get(base + "/metrics")
	require.NoError(t, err)
	text, _ := io.ReadAll(metrics.Body)
	metrics.Body.Close()
	for _, want := range []string{
		`rds_hooks_hook_duration_seconds_count{hook="sync",outcome="ok"} 1`,
		`rds_hooks_otc_calls_total{operation="FindInstancesByName",result="ok"} 2`, // no instance yet: new and legacy name
		"go_goroutines",
	} {
		assert.True(t, strings.Contains(string(text), want), "/metrics has %s", want)
	}

	// The logs port serves POST /v1/logs to a capability and nothing else.
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{http.MethodPost, "/v1/logs", http.StatusUnauthorized},
		{http.MethodGet, "/v1/logs", http.StatusMethodNotAllowed},
		{http.MethodPost, "/sync", http.StatusNotFound},
		{http.MethodGet, "/metrics", http.StatusNotFound},
	} {
		req, err := http.NewRequest(tc.method, "http://"+logsAddr+tc.path, strings.NewReader(`{"instance":"x","type":"error"}`))
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, tc.want, resp.StatusCode, "%s %s on the logs port", tc.method, tc.path)
	}

	assert.Contains(t, stderr.String(), "curl -s -XPOST "+base+"/sync", "it tells a person how to try it")
	assert.Contains(t, stdout.String(), "THE HOOKS ARE NOT AUTHENTICATED (--insecure-no-auth)", "and says loudly what it gives away")
	assert.Contains(t, stdout.String(), `"msg":"rds-hooks listening"`)
	assert.NotContains(t, stdout.String(), "A12345678+", "no password in the logs")

	cancel()
	select {
	case err := <-errc:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("run did not return after the context ended")
	}
	assert.Contains(t, stdout.String(), `"msg":"stopped"`)
}

// TestRunRefusesWithoutCredentials: the default is the real OTC; without credentials the binary
// says so and exits, never falling back to the simulator.
func TestRunRefusesWithoutCredentials(t *testing.T) {
	err := run(context.Background(), []string{"--listen", freeAddr(t), "--logs-listen", freeAddr(t), "--cluster-id", "prod-1", "--insecure-no-auth"}, noEnv, io.Discard, io.Discard)
	require.ErrorIs(t, err, otc.ErrNoCredentials)
	assert.Contains(t, err.Error(), "OS_AUTH_URL")
	assert.Contains(t, err.Error(), "--cloud sim")
}

// TestLoginErrorNamesTheURL: a failed start-up login says where it tried to log in.
func TestLoginErrorNamesTheURL(t *testing.T) {
	authURL := "http://" + freeAddr(t) + "/v3" // nothing listens there
	env := map[string]string{
		"OS_AUTH_URL": authURL, "OS_USERNAME": "u", "OS_PASSWORD": "p", "OS_DOMAIN_NAME": "d", "OS_PROJECT_NAME": "eu-de",
	}
	err := run(context.Background(), []string{"--listen", freeAddr(t), "--logs-listen", freeAddr(t), "--cluster-id", "prod-1", "--insecure-no-auth"}, func(k string) string { return env[k] }, io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "log in to OTC at "+authURL+": ")
	assert.NotContains(t, err.Error(), `"p"`, "no password in the message")
}

func TestParseFlags(t *testing.T) {
	cases := map[string]struct {
		reason  string
		args    []string
		env     map[string]string
		check   func(t *testing.T, c config)
		wantErr string
	}{
		"defaults": {
			reason: "the real cloud, on loopback, with deadlines under Metacontroller's 10s",
			check: func(t *testing.T, c config) {
				assert.Equal(t, cloudOTC, c.cloud)
				assert.Equal(t, "127.0.0.1:8080", c.listen)
				assert.Equal(t, 8*time.Second, c.hookTimeout)
				assert.Equal(t, 4*time.Second, c.callTimeout)
				assert.Equal(t, "Optional", c.nsCredentials)
				assert.Equal(t, "otc-credentials", c.nsSecret)
				assert.Equal(t, "127.0.0.1:8081", c.logsListen)
				assert.Equal(t, "http://rds-hooks.rds-system.svc:8081", c.logsURL)
				assert.Equal(t, 15*time.Minute, c.logsTTL)
				assert.Equal(t, 8, c.maxInFlight)
				assert.Equal(t, 2*time.Minute, c.viewMaxAge, "steady syncs read the shared view")
			},
		},
		"view off": {
			reason: "--view-max-age 0 reads every instance fresh",
			args:   []string{"--view-max-age", "0"},
			check:  func(t *testing.T, c config) { assert.Zero(t, c.viewMaxAge) },
		},
		"capability shorter than the Job": {
			reason:  "a log Job must be able to use its capability until its deadline",
			args:    []string{"--logs-ttl", "4m"},
			wantErr: "--logs-ttl (4m0s) must be longer",
		},
		"max in flight": {
			reason: "the cap on hook calls served at once, by flag or variable",
			env:    map[string]string{"RDS_HOOKS_MAX_INFLIGHT": "4"},
			check:  func(t *testing.T, c config) { assert.Equal(t, 4, c.maxInFlight) },
		},
		"max in flight not a number": {
			reason:  "an invalid value is refused, naming the variable",
			env:     map[string]string{"RDS_HOOKS_MAX_INFLIGHT": "many"},
			wantErr: "RDS_HOOKS_MAX_INFLIGHT",
		},
		"max in flight zero": {
			reason:  "zero would serve nothing",
			args:    []string{"--max-inflight", "0"},
			wantErr: "--max-inflight must be at least 1",
		},
		"environment": {
			reason: "every flag has an RDS_HOOKS_ variable",
			env:    map[string]string{"RDS_HOOKS_LISTEN": ":9000", "RDS_HOOKS_JOB_IMAGE": "example/img:1", "RDS_HOOKS_RESYNC_STEADY": "1m", "RDS_HOOKS_LOG_LEVEL": "debug"},
			check: func(t *testing.T, c config) {
				assert.Equal(t, ":9000", c.listen)
				assert.Equal(t, "example/img:1", c.jobImage)
				assert.Equal(t, time.Minute, c.resyncSteady)
				assert.Equal(t, "DEBUG", c.logLevel.String())
			},
		},
		"flags win over the environment": {
			reason: "a flag is the more specific setting",
			args:   []string{"--listen", ":7000"},
			env:    map[string]string{"RDS_HOOKS_LISTEN": ":9000"},
			check:  func(t *testing.T, c config) { assert.Equal(t, ":7000", c.listen) },
		},
		"namespace credentials": {
			reason: "Optional by default; the environment sets them like every flag",
			env: map[string]string{"RDS_HOOKS_NAMESPACE_CREDENTIALS": "Required", "RDS_HOOKS_NAMESPACE_CREDENTIALS_SECRET": "team-otc",
				"RDS_HOOKS_NAMESPACE_CREDENTIALS_AUTH_URLS": "https://a/v3,https://b/v3", "RDS_HOOKS_NAMESPACE_CREDENTIALS_IDLE": "5m"},
			check: func(t *testing.T, c config) {
				assert.Equal(t, "Required", c.nsCredentials)
				assert.Equal(t, "team-otc", c.nsSecret)
				assert.Equal(t, "https://a/v3,https://b/v3", c.nsAuthURLs)
				assert.Equal(t, 5*time.Minute, c.nsIdle)
			},
		},
		"unknown namespace credentials mode": {
			reason:  "only Optional and Required exist",
			args:    []string{"--namespace-credentials", "Sometimes"},
			wantErr: `--namespace-credentials (RDS_HOOKS_NAMESPACE_CREDENTIALS) must be "Optional" or "Required"`,
		},
		"unknown cloud": {
			reason:  "only otc and sim exist",
			args:    []string{"--cloud", "aws"},
			wantErr: `--cloud (RDS_HOOKS_CLOUD) must be "otc" or "sim"`,
		},
		"hook deadline too short": {
			reason:  "one cloud call must fit in a hook call",
			args:    []string{"--hook-timeout", "2s", "--call-timeout", "3s"},
			wantErr: "must be longer",
		},
		"simulator endpoints": {
			reason: "make run DB=HOST:PORT backs every simulated instance with a real server",
			args:   []string{"--cloud", "sim", "--sim-endpoint", "127.0.0.1:3306", "--sim-endpoint", "team-a/shop=db:3307"},
			check: func(t *testing.T, c config) {
				assert.Equal(t, otcsim.EndpointFlags{"*": "127.0.0.1:3306", "team-a/shop": "db:3307"}, c.simEndpoints)
			},
		},
		"simulator endpoints from the environment": {
			reason: "space-separated in RDS_HOOKS_SIM_ENDPOINT",
			env:    map[string]string{"RDS_HOOKS_CLOUD": "sim", "RDS_HOOKS_SIM_ENDPOINT": "127.0.0.1:3306 rds-x=db:3307"},
			check: func(t *testing.T, c config) {
				assert.Equal(t, otcsim.EndpointFlags{"*": "127.0.0.1:3306", "rds-x": "db:3307"}, c.simEndpoints)
			},
		},
		"bad simulator endpoint in the environment": {
			reason:  "named, not ignored",
			env:     map[string]string{"RDS_HOOKS_CLOUD": "sim", "RDS_HOOKS_SIM_ENDPOINT": "127.0.0.1"},
			wantErr: "RDS_HOOKS_SIM_ENDPOINT",
		},
		"simulator endpoint without the simulator": {
			reason:  "the real OTC has its own endpoints",
			args:    []string{"--sim-endpoint", "127.0.0.1:3306"},
			wantErr: "--sim-endpoint needs --cloud sim",
		},
		"cluster id required with otc": {
			reason:  "the cluster id goes into every ownership tag and name: it is chosen once, by the admin",
			env:     map[string]string{"RDS_HOOKS_CLUSTER_ID": "-"},
			args:    []string{"--cluster-id", ""},
			wantErr: "--cluster-id (RDS_HOOKS_CLUSTER_ID) is required with --cloud otc",
		},
		"cluster id form": {
			reason:  "1-32 of [a-z0-9-]",
			args:    []string{"--cluster-id", "Prod_1"},
			wantErr: `--cluster-id (RDS_HOOKS_CLUSTER_ID) "Prod_1" is not 1-32 of [a-z0-9-]`,
		},
		"cluster id defaults to local with sim": {
			reason: "the simulator needs no choice",
			args:   []string{"--cloud", "sim", "--cluster-id", ""},
			check:  func(t *testing.T, c config) { assert.Equal(t, "local", c.clusterID) },
		},
		"adoption policy": {
			reason: "Unowned by default, tightened by the admin",
			args:   []string{"--adoption", "SameNamespace"},
			check: func(t *testing.T, c config) {
				assert.Equal(t, "SameNamespace", c.adoption)
				assert.Equal(t, "test-cluster", c.clusterID)
			},
		},
		"unknown adoption policy": {
			reason:  "only the three policies exist",
			args:    []string{"--adoption", "Always"},
			wantErr: "--adoption (RDS_HOOKS_ADOPTION) must be one of",
		},
		"stray argument": {
			reason:  "a typo is not ignored",
			args:    []string{"sim"},
			wantErr: "unexpected arguments",
		},
		"invalid duration variable": {
			reason:  "RDS_HOOKS_HOOK_TIMEOUT=abc was once silently ignored",
			env:     map[string]string{"RDS_HOOKS_HOOK_TIMEOUT": "abc"},
			wantErr: `RDS_HOOKS_HOOK_TIMEOUT="abc": want a duration`,
		},
		"invalid variable under a valid flag": {
			reason:  "a broken setting is refused even where a flag overrides it: the deployment is wrong",
			args:    []string{"--hook-timeout", "5s"},
			env:     map[string]string{"RDS_HOOKS_HOOK_TIMEOUT": "5"},
			wantErr: `RDS_HOOKS_HOOK_TIMEOUT="5"`,
		},
		"every invalid variable is named": {
			reason:  "one start-up tells every mistake",
			env:     map[string]string{"RDS_HOOKS_RESYNC_STEADY": "soon", "RDS_HOOKS_LOG_LEVEL": "loud"},
			wantErr: `RDS_HOOKS_LOG_LEVEL="loud": slog: level string "loud": unknown name` + "\n" + `RDS_HOOKS_RESYNC_STEADY="soon": want a duration`,
		},
		"zero duration flag": {
			reason:  "a zero deadline or period is never meant",
			args:    []string{"--resync-pending", "0s"},
			wantErr: `--resync-pending (RDS_HOOKS_RESYNC_PENDING) 0s: must be more than 0`,
		},
		"negative duration variable": {
			reason:  "the variable is checked like the flag",
			env:     map[string]string{"RDS_HOOKS_SHUTDOWN_GRACE": "-1s"},
			wantErr: `--shutdown-grace (RDS_HOOKS_SHUTDOWN_GRACE) -1s: must be more than 0`,
		},
		"invalid duration flag": {
			reason:  "the flag parser names the flag",
			args:    []string{"--call-timeout", "fast"},
			wantErr: `invalid value "fast" for flag -call-timeout`,
		},
		"hook timeout at Metacontroller's": {
			reason:  "Metacontroller gives up at 10s: an answer after that is lost",
			args:    []string{"--hook-timeout", "10s"},
			wantErr: "--hook-timeout (RDS_HOOKS_HOOK_TIMEOUT) 10s: must be under Metacontroller's webhook timeout",
		},
		"hook timeout above Metacontroller's in the environment": {
			reason:  "the variable is checked like the flag",
			env:     map[string]string{"RDS_HOOKS_HOOK_TIMEOUT": "30s"},
			wantErr: "RDS_HOOKS_HOOK_TIMEOUT) 30s: must be under",
		},
		"hook timeout just under Metacontroller's": {
			reason: "9.5s still answers in time",
			args:   []string{"--hook-timeout", "9500ms"},
			check:  func(t *testing.T, c config) { assert.Equal(t, 9500*time.Millisecond, c.hookTimeout) },
		},
		"listen without a port": {
			reason:  "refused at start-up naming the setting, not later by net.Listen",
			env:     map[string]string{"RDS_HOOKS_LISTEN": "localhost"},
			wantErr: `--listen (RDS_HOOKS_LISTEN) "localhost": want HOST:PORT`,
		},
		"empty job image": {
			reason:  "the log Job needs an image",
			args:    []string{"--job-image", ""},
			wantErr: "--job-image (RDS_HOOKS_JOB_IMAGE)",
		},
		"version": {
			reason: "--version answers whatever else is set",
			args:   []string{"--version"},
			env:    map[string]string{"RDS_HOOKS_HOOK_TIMEOUT": "abc", "RDS_HOOKS_VERSION": "false"},
			check:  func(t *testing.T, c config) { assert.True(t, c.version) },
		},
		"no authentication": {
			reason:  "the hooks answer only Metacontroller: no start without a credential to check",
			env:     map[string]string{"RDS_HOOKS_HOOK_TOKENS": ""},
			wantErr: "the hooks answer only Metacontroller: set --tls-cert-file (RDS_HOOKS_TLS_CERT_FILE), --tls-key-file (RDS_HOOKS_TLS_KEY_FILE) and --hook-tokens (RDS_HOOKS_HOOK_TOKENS)",
		},
		"no certificate": {
			reason:  "a token needs TLS, or anyone on the way reads it",
			env:     map[string]string{"RDS_HOOKS_TLS_CERT_FILE": "", "RDS_HOOKS_TLS_KEY_FILE": ""},
			wantErr: "--insecure-no-auth to serve them to anyone on a laptop",
		},
		"insecure": {
			reason: "said explicitly, for make run",
			args:   []string{"--insecure-no-auth"},
			env:    map[string]string{"RDS_HOOKS_TLS_CERT_FILE": "", "RDS_HOOKS_TLS_KEY_FILE": "", "RDS_HOOKS_HOOK_TOKENS": ""},
			check:  func(t *testing.T, c config) { assert.True(t, c.insecureNoAuth) },
		},
		"insecure and a credential": {
			reason:  "one or the other, never a guess which wins",
			args:    []string{"--insecure-no-auth"},
			wantErr: "--insecure-no-auth (RDS_HOOKS_INSECURE_NO_AUTH) contradicts",
		},
		"namespace share": {
			reason:  "a share larger than the whole is no share",
			args:    []string{"--max-inflight", "4", "--max-inflight-per-namespace", "5"},
			wantErr: "--max-inflight-per-namespace (RDS_HOOKS_MAX_INFLIGHT_PER_NAMESPACE) must be between 1 and --max-inflight (4)",
		},
		"the job image follows the version": {
			reason: "a build's default Job image is its own image tag",
			check: func(t *testing.T, c config) {
				assert.Equal(t, "ghcr.io/mcsps/rds-lambda-controller:"+version.Version, c.jobImage)
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			env := map[string]string{"RDS_HOOKS_CLUSTER_ID": "test-cluster"}
			maps.Copy(env, authEnv)
			maps.Copy(env, tc.env)
			c, err := parseFlags(tc.args, func(k string) string { return env[k] }, io.Discard)
			if tc.wantErr != "" {
				require.Error(t, err, tc.reason)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err, tc.reason)
			tc.check(t, c)
		})
	}
}

// authEnv names a credential for the hooks (parseFlags reads no file).
var authEnv = map[string]string{
	"RDS_HOOKS_TLS_CERT_FILE": "/etc/rds-hooks/tls/tls.crt",
	"RDS_HOOKS_TLS_KEY_FILE":  "/etc/rds-hooks/tls/tls.key",
	"RDS_HOOKS_HOOK_TOKENS":   "/etc/rds-hooks/token",
}

// TestEveryVariableIsValidated: each flag's RDS_HOOKS_* variable goes through the flag's parser
// and a value no flag takes is refused naming the variable. It covers flags added later for free;
// only free-text flags are exempt.
func TestEveryVariableIsValidated(t *testing.T) {
	freeText := map[string]bool{"password-key": true, "tls-cert-file": true, "tls-key-file": true, "hook-tokens": true, "db-ca-file": true}
	var usage bytes.Buffer
	_, err := parseFlags([]string{"--help"}, noEnv, &usage)
	require.ErrorIs(t, err, flag.ErrHelp)
	names := regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`).FindAllStringSubmatch(usage.String(), -1)
	require.Greater(t, len(names), 10)
	for _, m := range names {
		name := m[1]
		if name == "version" || freeText[name] {
			continue
		}
		t.Run(name, func(t *testing.T) {
			variable := envName(name)
			_, err := parseFlags(nil, func(k string) string {
				switch k {
				case variable:
					return "no such value"
				case "RDS_HOOKS_CLUSTER_ID": // required with the real cloud
					return "test-cluster"
				}
				if v, ok := authEnv[k]; ok {
					return v
				}
				return ""
			}, io.Discard)
			require.Error(t, err, "%s=\"no such value\" is refused", variable)
			assert.Contains(t, err.Error(), variable, "the message names the variable")
		})
	}
}

// TestVersionAndHelp: --version prints the build's version and --help the usage, both without error.
func TestVersionAndHelp(t *testing.T) {
	var stdout bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"--version"}, noEnv, &stdout, io.Discard))
	assert.Equal(t, "rds-hooks "+version.Version+"\n", stdout.String())

	err := run(context.Background(), []string{"--help"}, noEnv, io.Discard, io.Discard)
	assert.ErrorIs(t, err, flag.ErrHelp, "main exits 0 on flag.ErrHelp")
}

// TestUsageNamesEveryFlag keeps --help useful.
func TestUsageNamesEveryFlag(t *testing.T) {
	var out bytes.Buffer
	_, err := parseFlags([]string{"--help"}, noEnv, &out)
	require.Error(t, err)
	for _, f := range []string{"-listen", "-cloud", "-cluster-id", "-adoption", "-namespace-credentials", "-namespace-credentials-secret", "-job-image", "-hook-timeout", "-call-timeout", "-resync-steady", "-log-level", "-logs-listen", "-logs-url", "-logs-ttl", "-max-inflight"} {
		assert.True(t, strings.Contains(out.String(), f), f)
	}
}

// TestRunNamespaceCredentialsRequired: with --namespace-credentials Required, an object whose
// namespace has no login is refused with a condition, and customize asks for the namespace's Secret.
func TestRunNamespaceCredentialsRequired(t *testing.T) {
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, []string{"--cloud", "sim", "--listen", addr, "--logs-listen", freeAddr(t), "--namespace-credentials", "Required", "--insecure-no-auth"}, noEnv, io.Discard, io.Discard)
	}()
	base := "http://" + addr
	waitReady(t, base, errc)

	body, err := os.ReadFile(filepath.Join(testdata.Dir(), "curl", "sync-create.json"))
	require.NoError(t, err)
	post := func(path string) string {
		resp, err := http.Post(base+path, "application/json", bytes.NewReader(body))
		require.NoError(t, err)
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, string(out))
		return string(out)
	}
	assert.Contains(t, post("/sync"), `"reason":"CredentialsRequired"`)
	assert.Contains(t, post("/customize"), `"names":["otc-credentials"]`)
	cancel()
	require.NoError(t, <-errc)
}

// hookAnswer is a sync answer, as far as these tests read it.
type hookAnswer struct {
	Status   map[string]any   `json:"status"`
	Children []map[string]any `json:"children"`
}

// postSync posts body to base's /sync, requires 200 and decodes the answer.
func postSync(t *testing.T, base string, body []byte) hookAnswer {
	t.Helper()
	resp, err := http.Post(base+"/sync", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(out))
	var answer hookAnswer
	require.NoError(t, json.Unmarshal(out, &answer))
	return answer
}

// TestREADMEListsEveryFlag keeps the README's configuration table true to --help.
func TestREADMEListsEveryFlag(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	var usage bytes.Buffer
	_, err = parseFlags([]string{"--help"}, noEnv, &usage)
	require.ErrorIs(t, err, flag.ErrHelp)
	names := regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`).FindAllStringSubmatch(usage.String(), -1)
	require.NotEmpty(t, names)
	for _, m := range names {
		assert.Contains(t, string(readme), "| `--"+m[1]+"` |", "README's flags table lists --%s", m[1])
	}
}
