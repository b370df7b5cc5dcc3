package manifests

import (
	"os"
	"path/filepath"
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

// TestEveryDocumentIsAnObject: every YAML document under manifests/ parses and names its
// apiVersion, kind and metadata.name.
func TestEveryDocumentIsAnObject(t *testing.T) {
	for _, doc := range allDocuments(t) {
		t.Run(doc.String(), func(t *testing.T) {
			var obj struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
				Metadata   struct {
					Name string `json:"name"`
				} `json:"metadata"`
			}
			require.NoError(t, yaml.Unmarshal(doc.raw, &obj))
			assert.NotEmpty(t, obj.APIVersion, "apiVersion")
			assert.NotEmpty(t, obj.Kind, "kind")
			assert.NotEmpty(t, obj.Metadata.Name, "metadata.name")
		})
	}
}

// TestKubernetesObjectsDecodeStrictly: documents of built-in kinds decode into their Go types
// without unknown fields, so a misspelt field cannot be dropped silently by the API server.
func TestKubernetesObjectsDecodeStrictly(t *testing.T) {
	types := map[string]func() any{
		"v1/Namespace":                       func() any { return &corev1.Namespace{} },
		"v1/ServiceAccount":                  func() any { return &corev1.ServiceAccount{} },
		"v1/Service":                         func() any { return &corev1.Service{} },
		"v1/Secret":                          func() any { return &corev1.Secret{} },
		"apps/v1/Deployment":                 func() any { return &appsv1.Deployment{} },
		"networking.k8s.io/v1/NetworkPolicy": func() any { return &networkingv1.NetworkPolicy{} },
		"policy/v1/PodDisruptionBudget":      func() any { return &policyv1.PodDisruptionBudget{} },
	}
	for _, doc := range allDocuments(t) {
		var tm struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		require.NoError(t, yaml.Unmarshal(doc.raw, &tm))
		newObj, ok := types[tm.APIVersion+"/"+tm.Kind]
		if !ok {
			continue
		}
		t.Run(doc.String(), func(t *testing.T) {
			assert.NoError(t, yaml.UnmarshalStrict(doc.raw, newObj()))
		})
	}
}

// kustomization is the part of a kustomization.yaml these tests read.
type kustomization struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Namespace    string   `json:"namespace,omitempty"`
	Resources    []string `json:"resources"`
	Components   []string `json:"components,omitempty"`
	Images       []image  `json:"images,omitempty"`
	Replacements []any    `json:"replacements,omitempty"`
}

// image is an entry of a kustomization's images: list.
type image struct {
	Name    string `json:"name"`
	NewName string `json:"newName,omitempty"`
	NewTag  string `json:"newTag,omitempty"`
	Digest  string `json:"digest,omitempty"`
}

// TestKustomizations: manifests/ installs the controller and nothing else (no samples, no
// credentials template), and every listed file exists; manifests/samples/ lists every sample.
func TestKustomizations(t *testing.T) {
	var k kustomization
	readSingle(t, "kustomization.yaml", &k)
	assert.Empty(t, k.Namespace, "a namespace transformer would also namespace the cluster-scoped CompositeController")
	assert.ElementsMatch(t, []string{
		"namespace.yaml", "crd.yaml", "serviceaccount.yaml", "service.yaml", "deployment.yaml",
		"poddisruptionbudget.yaml", "networkpolicy.yaml", "compositecontroller.yaml",
	}, k.Resources)
	assert.Empty(t, k.Components, "monitoring needs the Prometheus Operator's CRDs: it is opt-in")
	for _, r := range k.Resources {
		assert.FileExists(t, filepath.Join(manifestsDir, r))
	}
	assert.FileExists(t, filepath.Join(manifestsDir, "otc-credentials.secret.template.yaml"))

	var s kustomization
	readSingle(t, "samples/kustomization.yaml", &s)
	entries, err := os.ReadDir(filepath.Join(manifestsDir, "samples"))
	require.NoError(t, err)
	var files []string
	for _, e := range entries {
		if e.Name() != "kustomization.yaml" {
			files = append(files, e.Name())
		}
	}
	assert.ElementsMatch(t, files, s.Resources)
}

// TestDeploymentIsHardened: the hook server runs as non-root with a read-only root filesystem, no
// privileges and no Kubernetes token, and has probes and resources.
func TestDeploymentIsHardened(t *testing.T) {
	var d appsv1.Deployment
	readSingle(t, "deployment.yaml", &d)
	assert.Equal(t, "rds-hooks", d.Name)
	assert.Equal(t, "rds-system", d.Namespace)
	require.NotNil(t, d.Spec.Replicas)
	assert.GreaterOrEqual(t, *d.Spec.Replicas, int32(2))

	pod := d.Spec.Template.Spec
	assert.Equal(t, "rds-hooks", pod.ServiceAccountName)
	require.NotNil(t, pod.AutomountServiceAccountToken)
	assert.False(t, *pod.AutomountServiceAccountToken)
	require.NotNil(t, pod.TerminationGracePeriodSeconds)
	assert.Greater(t, *pod.TerminationGracePeriodSeconds, int64(10), "longer than the hook timeout")
	require.NotNil(t, pod.SecurityContext)
	require.NotNil(t, pod.SecurityContext.RunAsNonRoot)
	assert.True(t, *pod.SecurityContext.RunAsNonRoot)
	require.NotNil(t, pod.SecurityContext.SeccompProfile)
	assert.Equal(t, corev1.SeccompProfileTypeRuntimeDefault, pod.SecurityContext.SeccompProfile.Type)

	require.Len(t, pod.Containers, 1)
	c := pod.Containers[0]
	assert.Equal(t, []string{"--listen=:8080", "--tls-cert-file=/etc/rds-hooks/tls/tls.crt", "--tls-key-file=/etc/rds-hooks/tls/tls.key",
		"--hook-tokens=/etc/rds-hooks/token", "--logs-listen=:8081", "--resync-pending=4s"}, c.Args)
	sc := c.SecurityContext
	require.NotNil(t, sc)
	require.NotNil(t, sc.RunAsNonRoot)
	assert.True(t, *sc.RunAsNonRoot)
	require.NotNil(t, sc.RunAsUser)
	assert.Equal(t, int64(65532), *sc.RunAsUser)
	require.NotNil(t, sc.ReadOnlyRootFilesystem)
	assert.True(t, *sc.ReadOnlyRootFilesystem)
	require.NotNil(t, sc.AllowPrivilegeEscalation)
	assert.False(t, *sc.AllowPrivilegeEscalation)
	require.NotNil(t, sc.Capabilities)
	assert.Equal(t, []corev1.Capability{"ALL"}, sc.Capabilities.Drop)
	assert.Empty(t, sc.Capabilities.Add)
	require.NotNil(t, sc.SeccompProfile)
	assert.Equal(t, corev1.SeccompProfileTypeRuntimeDefault, sc.SeccompProfile.Type)

	require.Len(t, c.Ports, 2)
	assert.Equal(t, int32(8080), c.Ports[0].ContainerPort)
	assert.Equal(t, "https", c.Ports[0].Name)
	assert.Equal(t, int32(8081), c.Ports[1].ContainerPort, "the log Jobs' port")
	assert.Equal(t, "logs", c.Ports[1].Name)
	for name, probe := range map[string]*corev1.Probe{"/readyz": c.ReadinessProbe, "/healthz": c.LivenessProbe} {
		require.NotNil(t, probe, name)
		require.NotNil(t, probe.HTTPGet, name)
		assert.Equal(t, name, probe.HTTPGet.Path)
		assert.Equal(t, intstr.FromString("https"), probe.HTTPGet.Port)
		assert.Equal(t, corev1.URISchemeHTTPS, probe.HTTPGet.Scheme, "the hooks serve only HTTPS")
	}
	for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		assert.Contains(t, c.Resources.Requests, res)
		assert.Contains(t, c.Resources.Limits, res)
	}

	var jobImage string
	for _, e := range c.Env {
		if e.Name == "RDS_HOOKS_JOB_IMAGE" {
			jobImage = e.Value
		}
	}
	assert.Equal(t, c.Image, jobImage, "the log Job runs the hooks' own image")
	require.Len(t, c.EnvFrom, 1)
	require.NotNil(t, c.EnvFrom[0].SecretRef)
	assert.Equal(t, "otc-credentials", c.EnvFrom[0].SecretRef.Name)

	var sa corev1.ServiceAccount
	readSingle(t, "serviceaccount.yaml", &sa)
	assert.Equal(t, pod.ServiceAccountName, sa.Name)
	require.NotNil(t, sa.AutomountServiceAccountToken)
	assert.False(t, *sa.AutomountServiceAccountToken)
}

// TestServiceAndNetworkPolicy: the Service the CompositeController calls selects the hook pods on
// 8080, and only Metacontroller's namespace may reach them; every namespace's log Jobs may reach
// port 8081 (the logs port) and nothing else.
func TestServiceAndNetworkPolicy(t *testing.T) {
	var d appsv1.Deployment
	readSingle(t, "deployment.yaml", &d)
	podLabels := d.Spec.Template.Labels

	var svc corev1.Service
	readSingle(t, "service.yaml", &svc)
	assert.Equal(t, "rds-hooks", svc.Name)
	assert.Equal(t, "rds-system", svc.Namespace)
	assert.Equal(t, corev1.ServiceTypeClusterIP, svc.Spec.Type)
	for k, v := range svc.Spec.Selector {
		assert.Equal(t, v, podLabels[k], "service selector %s", k)
	}
	require.Len(t, svc.Spec.Ports, 2)
	assert.Equal(t, int32(8080), svc.Spec.Ports[0].Port)
	assert.Equal(t, int32(8081), svc.Spec.Ports[1].Port)
	assert.Equal(t, intstr.FromString("logs"), svc.Spec.Ports[1].TargetPort)

	var np networkingv1.NetworkPolicy
	readSingle(t, "networkpolicy.yaml", &np)
	assert.Equal(t, "rds-system", np.Namespace)
	for k, v := range np.Spec.PodSelector.MatchLabels {
		assert.Equal(t, v, podLabels[k], "policy selector %s", k)
	}
	assert.Equal(t, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}, np.Spec.PolicyTypes)
	require.Len(t, np.Spec.Ingress, 2)
	rule := np.Spec.Ingress[0]
	require.Len(t, rule.From, 1)
	require.NotNil(t, rule.From[0].NamespaceSelector)
	assert.Equal(t, map[string]string{"kubernetes.io/metadata.name": "metacontroller"}, rule.From[0].NamespaceSelector.MatchLabels)
	require.Len(t, rule.Ports, 1)
	require.NotNil(t, rule.Ports[0].Port)
	assert.Equal(t, intstr.FromInt32(8080), *rule.Ports[0].Port)

	logs := np.Spec.Ingress[1]
	require.Len(t, logs.From, 1)
	require.NotNil(t, logs.From[0].NamespaceSelector, "pods of every namespace: the log Jobs")
	assert.Empty(t, logs.From[0].NamespaceSelector.MatchLabels)
	assert.Empty(t, logs.From[0].NamespaceSelector.MatchExpressions)
	assert.Nil(t, logs.From[0].IPBlock, "pods only")
	require.Len(t, logs.Ports, 1, "the logs port and nothing else")
	require.NotNil(t, logs.Ports[0].Port)
	assert.Equal(t, intstr.FromInt32(8081), *logs.Ports[0].Port)
	assert.Nil(t, logs.Ports[0].EndPort)
}

// TestCredentialsTemplate: the template names every variable the hooks need and holds no real
// value (every credential is a <placeholder>).
func TestCredentialsTemplate(t *testing.T) {
	var s corev1.Secret
	readSingle(t, "otc-credentials.secret.template.yaml", &s)
	assert.Equal(t, "otc-credentials", s.Name)
	assert.Equal(t, "rds-system", s.Namespace)
	for _, k := range []string{"OS_AUTH_URL", "OS_USERNAME", "OS_PASSWORD", "OS_DOMAIN_NAME", "OS_PROJECT_NAME", "OS_REGION_NAME"} {
		assert.Contains(t, s.StringData, k)
	}
	for _, k := range []string{"OS_USERNAME", "OS_PASSWORD", "OS_DOMAIN_NAME", "OS_PROJECT_NAME"} {
		assert.Regexp(t, `^<.*>$`, s.StringData[k], k)
	}
	assert.Empty(t, s.Data)
}
