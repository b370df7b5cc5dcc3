package hook_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/sync/hook"
	"github.com/mcsps/rds-lambda-controller/test/testdata"
)

func TestDecodeCapturedRequests(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testdata.Dir(), "metacontroller", "*.request.json"))
	require.NoError(t, err)
	require.Len(t, files, 8)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			body := testdata.WithRdsParent(t, f)
			req, err := hook.DecodeRequest(body)
			require.NoError(t, err)
			var raw struct {
				Finalizing bool                                  `json:"finalizing"`
				Children   map[string]map[string]json.RawMessage `json:"children"`
			}
			require.NoError(t, json.Unmarshal(body, &raw))
			assert.Equal(t, raw.Finalizing, req.Finalizing)
			assert.Len(t, req.Secrets, len(raw.Children[hook.SecretGroup]))
			assert.Len(t, req.Jobs, len(raw.Children[hook.JobGroup]))
			for name, s := range req.Secrets {
				assert.Equal(t, s.Name, name, "children are keyed by name for v1 and v2 alike")
				assert.NotEmpty(t, s.Data)
			}
			assert.Equal(t, "my-rds-single", req.Parent.Name)
			assert.Equal(t, "MySQL", req.Parent.Spec.Datastoretype)
		})
	}
}

func TestDecodeVersion(t *testing.T) {
	dir := filepath.Join(testdata.Dir(), "metacontroller")
	req, err := hook.DecodeRequest(testdata.WithRdsParent(t, filepath.Join(dir, "07-sync-v2-with-secret-child.request.json")))
	require.NoError(t, err)
	assert.Equal(t, hook.V2, req.Version)
	assert.Contains(t, req.Secrets, "widget-v2-secret")
	req, err = hook.DecodeRequest(testdata.WithRdsParent(t, filepath.Join(dir, "01-sync-v1-no-children.request.json")))
	require.NoError(t, err)
	assert.Equal(t, hook.V1, req.Version)
}

func TestDecodeRejects(t *testing.T) {
	cases := map[string]string{
		"not JSON":         `{"parent":`,
		"no parent":        `{"children":{}}`,
		"parent not Rds":   `{"parent":{"apiVersion":"test.example.com/v1","kind":"Widget","metadata":{"name":"a","namespace":"b"}}}`,
		"parent unnamed":   `{"parent":{"apiVersion":"otc.mcsps.de/v1alpha1","kind":"Rds","metadata":{}}}`,
		"spec wrong types": `{"parent":{"apiVersion":"otc.mcsps.de/v1alpha1","kind":"Rds","metadata":{"name":"a","namespace":"b"},"spec":{"volumesize":"big"}}}`,
		"child not object": `{"parent":{"apiVersion":"otc.mcsps.de/v1alpha1","kind":"Rds","metadata":{"name":"a","namespace":"b"}},"children":{"Secret.v1":{"x":42}}}`,
		"array body":       `[]`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := hook.DecodeRequest([]byte(body))
			require.ErrorIs(t, err, hook.ErrBadRequest)
			assert.NotContains(t, err.Error(), "\n")
		})
	}
}
