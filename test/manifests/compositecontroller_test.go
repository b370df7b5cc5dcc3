package manifests

import (
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// compositeController holds the fields of Metacontroller's CompositeController that we set; the
// strict decode in the test rejects any other field, so a typo cannot slip through.
type compositeController struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		ParentResource struct {
			APIVersion string `json:"apiVersion"`
			Resource   string `json:"resource"`
		} `json:"parentResource"`
		ChildResources []struct {
			APIVersion     string `json:"apiVersion"`
			Resource       string `json:"resource"`
			UpdateStrategy struct {
				Method string `json:"method"`
			} `json:"updateStrategy"`
		} `json:"childResources"`
		GenerateSelector    bool `json:"generateSelector"`
		ResyncPeriodSeconds int  `json:"resyncPeriodSeconds"`
		Hooks               map[string]struct {
			Version string  `json:"version"`
			Webhook webhook `json:"webhook"`
		} `json:"hooks"`
	} `json:"spec"`
}

// webhook is Metacontroller's Webhook as far as we set it (v4.16.0+: caBundle, authorization).
type webhook struct {
	URL      string `json:"url"`
	Timeout  string `json:"timeout"`
	CABundle *struct {
		SecretRef *secretKeyRef `json:"secretRef"`
	} `json:"caBundle"`
	Authorization *struct {
		Type      string       `json:"type"`
		SecretRef secretKeyRef `json:"secretRef"`
	} `json:"authorization"`
}

type secretKeyRef struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Key       string `json:"key"`
}

// TestCompositeController: Metacontroller watches rdss, owns Secrets (InPlace) and Jobs
// (Recreate), and calls the three hooks of the in-cluster Service with hook version v1.
func TestCompositeController(t *testing.T) {
	var cc compositeController
	readSingle(t, "compositecontroller.yaml", &cc)
	assert.Equal(t, "metacontroller.k8s.io/v1alpha1", cc.APIVersion)
	assert.Equal(t, "CompositeController", cc.Kind)
	assert.Equal(t, "rds-controller", cc.Metadata.Name)

	crd := loadCRD(t)
	assert.Equal(t, crd.Spec.Group+"/"+crd.Spec.Versions[0].Name, cc.Spec.ParentResource.APIVersion)
	assert.Equal(t, crd.Spec.Names.Plural, cc.Spec.ParentResource.Resource)

	strategies := map[string]string{}
	for _, c := range cc.Spec.ChildResources {
		strategies[c.APIVersion+"/"+c.Resource] = c.UpdateStrategy.Method
	}
	assert.Equal(t, map[string]string{"v1/secrets": "InPlace", "batch/v1/jobs": "Recreate"}, strategies)
	assert.True(t, cc.Spec.GenerateSelector)
	assert.Equal(t, 300, cc.Spec.ResyncPeriodSeconds)

	require.Len(t, cc.Spec.Hooks, 3)
	for _, name := range []string{"sync", "finalize", "customize"} {
		hook, ok := cc.Spec.Hooks[name]
		require.True(t, ok, name)
		assert.Equal(t, "v1", hook.Version, "%s: hook version pinned", name)
		u, err := url.Parse(hook.Webhook.URL)
		require.NoError(t, err, name)
		assert.Equal(t, "https", u.Scheme, name)
		assert.Equal(t, "rds-hooks.rds-system.svc:8080", u.Host, name)
		assert.Equal(t, "/"+name, u.Path, name)
		timeout, err := time.ParseDuration(hook.Webhook.Timeout)
		require.NoError(t, err, name)
		assert.Equal(t, 10*time.Second, timeout, name)
	}
}
