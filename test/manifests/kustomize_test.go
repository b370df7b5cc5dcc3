package manifests

import (
	"bytes"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// imageRepo is the image the manifests and the Makefile name.
const imageRepo = "ghcr.io/mcsps/rds-lambda-controller"

// kustomizeModule is the kustomize that kubectl 1.32 embeds; without kubectl or kustomize on the
// PATH, `go run` fetches it through the Go module proxy.
const kustomizeModule = "sigs.k8s.io/kustomize/kustomize/v5@v5.5.0"

// render runs `kubectl kustomize dir` (or `kustomize build dir`), as a user does before applying,
// and returns the rendered objects keyed "Kind/name".
func render(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	var cmd *exec.Cmd
	if kubectl, err := exec.LookPath("kubectl"); err == nil {
		cmd = exec.Command(kubectl, "kustomize", dir)
	} else if kustomize, err := exec.LookPath("kustomize"); err == nil {
		cmd = exec.Command(kustomize, "build", dir)
	} else {
		t.Logf("no kubectl or kustomize on the PATH: rendering with go run %s", kustomizeModule)
		cmd = exec.Command("go", "run", kustomizeModule, "build", dir)
		cmd.Dir = t.TempDir() // outside this module: the tool's own go.mod applies
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%s: %s", cmd, stderr.String())

	objects := map[string][]byte{}
	for _, doc := range bytes.Split(out, []byte("\n---\n")) {
		var meta struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		require.NoError(t, yaml.Unmarshal(doc, &meta))
		key := meta.Kind + "/" + meta.Metadata.Name
		require.NotContains(t, objects, key, "rendered twice")
		objects[key] = doc
	}
	return objects
}

// decode reads the rendered object key into out, strictly.
func decode(t *testing.T, objects map[string][]byte, key string, out any) {
	t.Helper()
	doc, ok := objects[key]
	require.True(t, ok, "%s is rendered", key)
	require.NoError(t, yaml.UnmarshalStrict(doc, out), key)
}

// copyManifests copies manifests/ into a temporary directory, with edit applied to its
// kustomization.yaml, for rendering what a user's change renders.
func copyManifests(t *testing.T, edit func(kustomization string) string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "manifests")
	require.NoError(t, os.CopyFS(dir, os.DirFS(manifestsDir)))
	path := filepath.Join(dir, "kustomization.yaml")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	edited := edit(string(data))
	require.NotEqual(t, string(data), edited, "the edit changes kustomization.yaml")
	require.NoError(t, os.WriteFile(path, []byte(edited), 0o644))
	return dir
}

// makeVersion is `make -s version`: the Makefile's default VERSION, the tag it builds and pushes.
func makeVersion(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("make", "-s", "--no-print-directory", "version")
	cmd.Dir = filepath.Join(manifestsDir, "..")
	for _, kv := range os.Environ() { // the defaults, not the caller's
		if name, _, _ := strings.Cut(kv, "="); !slices.Contains([]string{"VERSION", "IMAGE", "IMAGE_REPO", "MAKEFLAGS"}, name) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, err := cmd.Output()
	require.NoError(t, err, "make version")
	return strings.TrimSpace(string(out))
}

// hookContainer returns the Deployment's container and the value of its RDS_HOOKS_JOB_IMAGE.
func hookContainer(t *testing.T, objects map[string][]byte) (appsv1.Deployment, corev1.Container, string) {
	t.Helper()
	var d appsv1.Deployment
	decode(t, objects, "Deployment/rds-hooks", &d)
	require.Len(t, d.Spec.Template.Spec.Containers, 1)
	c := d.Spec.Template.Spec.Containers[0]
	for _, e := range c.Env {
		if e.Name == "RDS_HOOKS_JOB_IMAGE" {
			return d, c, e.Value
		}
	}
	t.Fatal("no RDS_HOOKS_JOB_IMAGE")
	return d, c, ""
}

// TestKustomizeRendersTheController: `kubectl kustomize manifests/` renders every object, a
// PodDisruptionBudget that keeps one of the two hook pods through drains, and one image reference,
// the Makefile's default, in the container and in the log Job's variable. No monitoring by default.
func TestKustomizeRendersTheController(t *testing.T) {
	objects := render(t, manifestsDir)
	for _, key := range []string{
		"Namespace/rds-system", "CustomResourceDefinition/rdss.otc.mcsps.de", "ServiceAccount/rds-hooks",
		"Service/rds-hooks", "Deployment/rds-hooks", "PodDisruptionBudget/rds-hooks",
		"NetworkPolicy/rds-hooks", "CompositeController/rds-controller",
	} {
		assert.Contains(t, objects, key)
	}
	assert.Len(t, objects, 8)

	d, c, jobImage := hookContainer(t, objects)
	assert.Equal(t, imageRepo+":"+makeVersion(t), c.Image, "the manifests deploy what `make docker-build docker-push` builds")
	assert.Equal(t, c.Image, jobImage, "the log Job runs the hooks' own image")

	var pdb policyv1.PodDisruptionBudget
	decode(t, objects, "PodDisruptionBudget/rds-hooks", &pdb)
	assert.Equal(t, "rds-system", pdb.Namespace)
	require.NotNil(t, pdb.Spec.Selector)
	assert.Equal(t, d.Spec.Selector.MatchLabels, pdb.Spec.Selector.MatchLabels, "the budget covers the hook pods")
	require.NotNil(t, pdb.Spec.MinAvailable)
	assert.Equal(t, intstr.FromInt32(1), *pdb.Spec.MinAvailable)
	assert.Nil(t, pdb.Spec.MaxUnavailable)
	assert.Greater(t, *d.Spec.Replicas, pdb.Spec.MinAvailable.IntVal, "a drain can still evict one pod")
}

// TestKustomizeImageIsSetInOnePlace: changing the image in kustomization.yaml alone, as
// `kustomize edit set image` does, moves both the container and the log Job.
func TestKustomizeImageIsSetInOnePlace(t *testing.T) {
	cases := map[string]struct {
		images string
		want   string
	}{
		"a release tag":    {images: "    newTag: v1.2.3\n", want: imageRepo + ":v1.2.3"},
		"another registry": {images: "    newName: registry.example.com/mirror/rds\n    newTag: v2\n", want: "registry.example.com/mirror/rds:v2"},
		"a digest": {
			images: "    digest: sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
			want:   imageRepo + "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := copyManifests(t, func(k string) string {
				before, after, ok := strings.Cut(k, "  - name: "+imageRepo+"\n    newTag: "+makeVersion(t)+"\n")
				require.True(t, ok, "kustomization.yaml has the images: entry")
				return before + "  - name: " + imageRepo + "\n" + tc.images + after
			})
			_, c, jobImage := hookContainer(t, render(t, dir))
			assert.Equal(t, tc.want, c.Image)
			assert.Equal(t, tc.want, jobImage)
		})
	}
}

// podMonitor holds the fields of the Prometheus Operator's PodMonitor that we set; the strict
// decode rejects any other, so a typo cannot slip through.
type podMonitor struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string            `json:"name"`
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
		PodMetricsEndpoints []struct {
			Port      string `json:"port"`
			Path      string `json:"path"`
			Interval  string `json:"interval"`
			Scheme    string `json:"scheme"`
			TLSConfig struct {
				ServerName string `json:"serverName"`
				CA         struct {
					Secret struct {
						Name string `json:"name"`
						Key  string `json:"key"`
					} `json:"secret"`
				} `json:"ca"`
			} `json:"tlsConfig"`
		} `json:"podMetricsEndpoints"`
	} `json:"spec"`
}

// TestKustomizeMonitoringComponent: with the component enabled as kustomization.yaml says
// (uncommenting its `components:` lines), the hook pods are scraped on /metrics and Prometheus may
// reach them, while Metacontroller's rule stays.
func TestKustomizeMonitoringComponent(t *testing.T) {
	dir := copyManifests(t, func(k string) string {
		return strings.Replace(k, "# components:\n#   - components/monitoring\n", "components:\n  - components/monitoring\n", 1)
	})
	objects := render(t, dir)
	assert.Len(t, objects, 10)
	d, c, _ := hookContainer(t, objects)
	podLabels := d.Spec.Template.Labels
	i := slices.IndexFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == "https" })
	require.GreaterOrEqual(t, i, 0, "the hooks' port, which serves /metrics")
	metrics := c.Ports[i]

	var pm podMonitor
	decode(t, objects, "PodMonitor/rds-hooks", &pm)
	assert.Equal(t, "monitoring.coreos.com/v1", pm.APIVersion)
	assert.Equal(t, "rds-system", pm.Metadata.Namespace)
	for k, v := range pm.Spec.Selector.MatchLabels {
		assert.Equal(t, v, podLabels[k], "monitor selector %s", k)
	}
	require.Len(t, pm.Spec.PodMetricsEndpoints, 1)
	assert.Equal(t, metrics.Name, pm.Spec.PodMetricsEndpoints[0].Port)
	assert.Equal(t, "/metrics", pm.Spec.PodMetricsEndpoints[0].Path)
	assert.Equal(t, "https", pm.Spec.PodMetricsEndpoints[0].Scheme)
	tlsc := pm.Spec.PodMetricsEndpoints[0].TLSConfig
	assert.Equal(t, "rds-hooks.rds-system.svc", tlsc.ServerName, "a name the serving certificate holds")
	assert.Equal(t, "rds-hooks-tls", tlsc.CA.Secret.Name)
	assert.Equal(t, "ca.crt", tlsc.CA.Secret.Key)

	var np networkingv1.NetworkPolicy
	decode(t, objects, "NetworkPolicy/rds-hooks-prometheus", &np)
	assert.Equal(t, "rds-system", np.Namespace)
	for k, v := range np.Spec.PodSelector.MatchLabels {
		assert.Equal(t, v, podLabels[k], "policy selector %s", k)
	}
	assert.Equal(t, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}, np.Spec.PolicyTypes)
	require.Len(t, np.Spec.Ingress, 1)
	rule := np.Spec.Ingress[0]
	require.Len(t, rule.From, 1)
	require.NotNil(t, rule.From[0].NamespaceSelector)
	assert.Equal(t, map[string]string{"kubernetes.io/metadata.name": "monitoring"}, rule.From[0].NamespaceSelector.MatchLabels)
	require.NotNil(t, rule.From[0].PodSelector, "only Prometheus, not the whole namespace")
	assert.Equal(t, map[string]string{"app.kubernetes.io/name": "prometheus"}, rule.From[0].PodSelector.MatchLabels)
	require.Len(t, rule.Ports, 1)
	require.NotNil(t, rule.Ports[0].Port)
	assert.Equal(t, intstr.FromInt32(metrics.ContainerPort), *rule.Ports[0].Port, "the port that serves /metrics")

	assert.Contains(t, objects, "NetworkPolicy/rds-hooks", "Metacontroller's rule stays")
}

// TestKustomizeEveryHookIsAuthenticated: as `kubectl kustomize manifests/` renders them, every hook
// of the CompositeController is called over https on the hooks' Service, verified with a CA bundle
// and presenting a bearer token, and both come from the Secrets the Deployment mounts: the
// certificate the hooks serve is the one the CA bundle's Secret holds, and the token Metacontroller
// sends is one the hooks accept.
func TestKustomizeEveryHookIsAuthenticated(t *testing.T) {
	objects := render(t, manifestsDir)
	var cc compositeController
	decode(t, objects, "CompositeController/rds-controller", &cc)
	d, c, _ := hookContainer(t, objects)

	// Which Secret the Deployment mounts where.
	mounted := map[string]string{} // Secret -> mount path
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Secret == nil {
			continue
		}
		for _, m := range c.VolumeMounts {
			if m.Name == v.Name {
				mounted[v.Secret.SecretName] = m.MountPath
			}
		}
	}
	args := strings.Join(c.Args, " ")

	require.Len(t, cc.Spec.Hooks, 3)
	for name, h := range cc.Spec.Hooks {
		u, err := url.Parse(h.Webhook.URL)
		require.NoError(t, err)
		assert.Equal(t, "https", u.Scheme, "%s: over TLS", name)
		assert.Equal(t, "rds-hooks.rds-system.svc", u.Hostname(), "%s: the hooks' Service, a name the certificate holds", name)
		assert.Equal(t, "8080", u.Port(), name)

		require.NotNil(t, h.Webhook.CABundle, "%s: a CA bundle", name)
		require.NotNil(t, h.Webhook.CABundle.SecretRef, name)
		ca := h.Webhook.CABundle.SecretRef
		assert.Equal(t, secretKeyRef{Name: "rds-hooks-tls", Namespace: "rds-system", Key: "ca.crt"}, *ca, name)
		require.Contains(t, mounted, ca.Name, "%s: the hooks serve the certificate of the CA bundle's Secret", name)
		assert.Contains(t, args, "--tls-cert-file="+mounted[ca.Name]+"/tls.crt", name)
		assert.Contains(t, args, "--tls-key-file="+mounted[ca.Name]+"/tls.key", name)

		require.NotNil(t, h.Webhook.Authorization, "%s: a credential", name)
		auth := h.Webhook.Authorization
		assert.Equal(t, "Bearer", auth.Type, name)
		assert.Equal(t, secretKeyRef{Name: "rds-hooks-token", Namespace: "rds-system", Key: "token"}, auth.SecretRef, name)
		require.Contains(t, mounted, auth.SecretRef.Name, "%s: the hooks accept the token Metacontroller sends", name)
		assert.Contains(t, args, "--hook-tokens="+mounted[auth.SecretRef.Name], name)
	}
	assert.NotContains(t, args, "--insecure-no-auth")
}
