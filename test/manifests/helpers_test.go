package manifests

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"sigs.k8s.io/yaml"
)

// manifestsDir is the repository's manifests/ folder, seen from this package.
const manifestsDir = "../../manifests"

// document is one YAML document of a manifest file.
type document struct {
	file  string // path relative to manifests/
	index int    // position in the file, from 0
	raw   []byte // the document's YAML
}

func (d document) String() string { return fmt.Sprintf("%s (document %d)", d.file, d.index+1) }

// readDocuments splits a multi-document YAML file, skipping documents that hold only comments.
func readDocuments(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return docs
		}
		require.NoError(t, err, path)
		var v any
		require.NoError(t, yaml.Unmarshal(doc, &v), path)
		if v != nil {
			docs = append(docs, doc)
		}
	}
}

// allDocuments returns every YAML document under manifests/, in file-name order.
func allDocuments(t *testing.T) []document {
	t.Helper()
	var docs []document
	err := filepath.WalkDir(manifestsDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if ext := filepath.Ext(path); ext != ".yaml" && ext != ".yml" {
			return nil
		}
		rel, err := filepath.Rel(manifestsDir, path)
		if err != nil {
			return err
		}
		for i, raw := range readDocuments(t, path) {
			docs = append(docs, document{file: filepath.ToSlash(rel), index: i, raw: raw})
		}
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, docs)
	return docs
}

// readSingle reads a manifest file holding exactly one document and decodes it strictly into out,
// so that a misspelt field name fails the test instead of vanishing.
func readSingle(t *testing.T, rel string, out any) {
	t.Helper()
	docs := readDocuments(t, filepath.Join(manifestsDir, rel))
	require.Len(t, docs, 1, rel)
	require.NoError(t, yaml.UnmarshalStrict(docs[0], out), rel)
}

// toUnstructured turns YAML into the map the API server validates: JSON numbers that are integers
// become int64, as in the API server's decoder.
func toUnstructured(t *testing.T, doc []byte) map[string]any {
	t.Helper()
	j, err := yaml.YAMLToJSON(doc)
	require.NoError(t, err)
	var obj map[string]any
	require.NoError(t, utiljson.Unmarshal(j, &obj))
	return obj
}

// loadCRD reads manifests/crd.yaml strictly.
func loadCRD(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	var crd apiextensionsv1.CustomResourceDefinition
	readSingle(t, "crd.yaml", &crd)
	return &crd
}

// crdValidator validates Rds objects the way the API server does for a CRD version: prune unknown
// fields, apply defaults, then the OpenAPI schema, list types, and x-kubernetes-validations (CEL,
// with oldSelf on update, and ratcheting of unchanged values).
type crdValidator struct {
	structural *structuralschema.Structural
	schema     apiservervalidation.SchemaValidator
	cel        *cel.Validator
}

func newCRDValidator(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition, version string) *crdValidator {
	t.Helper()
	var v1schema *apiextensionsv1.CustomResourceValidation
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Name == version {
			v1schema = crd.Spec.Versions[i].Schema
		}
	}
	require.NotNil(t, v1schema, "no schema for version %s", version)
	var internal apiextensions.CustomResourceValidation
	require.NoError(t, apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(v1schema, &internal, nil))

	structural, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
	require.NoError(t, err)
	schemaValidator, _, err := apiservervalidation.NewSchemaValidator(internal.OpenAPIV3Schema)
	require.NoError(t, err)
	return &crdValidator{
		structural: structural,
		schema:     schemaValidator,
		cel:        cel.NewValidator(structural, true, celconfig.PerCallLimit),
	}
}

// admit prunes and defaults obj in place and returns the field paths that pruning dropped.
func (v *crdValidator) admit(obj map[string]any) []string {
	pruned := pruning.PruneWithOptions(obj, v.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	structuraldefaulting.Default(obj, v.structural)
	return pruned
}

// create validates a new object (already admitted).
func (v *crdValidator) create(obj map[string]any) field.ErrorList {
	errs := apiservervalidation.ValidateCustomResource(nil, obj, v.schema)
	errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, v.structural, obj)...)
	celErrs, _ := v.cel.Validate(context.Background(), nil, v.structural, obj, nil, celconfig.RuntimeCELCostBudget)
	return append(errs, celErrs...)
}

// update validates a change of old to obj (both already admitted).
func (v *crdValidator) update(obj, old map[string]any) field.ErrorList {
	correlated := common.NewCorrelatedObject(obj, old, &model.Structural{Structural: v.structural})
	errs := apiservervalidation.ValidateCustomResourceUpdate(nil, obj, old, v.schema, apiservervalidation.WithRatcheting(correlated))
	errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, v.structural, obj)...)
	celErrs, _ := v.cel.Validate(context.Background(), nil, v.structural, obj, old, celconfig.RuntimeCELCostBudget, cel.WithRatcheting(correlated))
	return append(errs, celErrs...)
}

// errorText joins a list of field errors into one string for assertions.
func errorText(errs field.ErrorList) string {
	var b strings.Builder
	for _, e := range errs {
		b.WriteString(e.Error())
		b.WriteString("\n")
	}
	return b.String()
}
