package manifests

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
)

// TestRetainSamplesKeepTheirPassword: a Retain sample must not have its root password generated.
// A generated password lives only in the connection Secret, which is deleted with the object while
// the instance lives on; the controller would hold the deletion (PasswordWouldBeLost). So each
// Retain sample gives its password, or names a Secret that the same file ships with that key.
func TestRetainSamplesKeepTheirPassword(t *testing.T) {
	for name, obj := range samples(t) {
		if policy, _, _ := unstructured.NestedString(obj, "spec", "deletionpolicy"); policy != v1alpha1.DeletionPolicyRetain {
			continue
		}
		t.Run(name, func(t *testing.T) {
			if pw, _, _ := unstructured.NestedString(obj, "spec", "password"); pw != "" {
				return
			}
			ref, ok, _ := unstructured.NestedStringMap(obj, "spec", "passwordsecretref")
			require.True(t, ok, "a Retain sample gives password or passwordsecretref")
			key := ref["key"]
			if key == "" {
				key = "password"
			}
			var found bool
			for _, doc := range readDocuments(t, filepath.Join(manifestsDir, "samples", name)) {
				s := toUnstructured(t, doc)
				if s["kind"] != "Secret" || s["metadata"].(map[string]any)["name"] != ref["name"] {
					continue
				}
				v, _, _ := unstructured.NestedString(s, "stringData", key)
				assert.NotEmpty(t, v, "the Secret %s has the key %s", ref["name"], key)
				found = true
			}
			assert.True(t, found, "the Secret %s ships with the sample", ref["name"])
		})
	}
}
