package manifests

import (
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
)

var (
	timeType        = reflect.TypeFor[metav1.Time]()
	intOrStringType = reflect.TypeFor[intstr.IntOrString]()
)

// notRequired lists Go fields without omitempty that the CRD still does not require, with why.
var notRequired = map[string]string{
	// A zero metav1.Time marshals to null, which the API server prunes; requiring the field would
	// make Metacontroller's whole status update fail over one unset time.
	"status.conditions[].lastTransitionTime": "a zero time is null",
}

// jsonField is one field of a Go struct as encoding/json sees it.
type jsonField struct {
	name      string
	omitempty bool
	typ       reflect.Type
}

func jsonFields(t *testing.T, typ reflect.Type) []jsonField {
	t.Helper()
	var out []jsonField
	for f := range typ.Fields() {
		tag := f.Tag.Get("json")
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		require.False(t, f.Anonymous, "%s.%s: embedded fields are not handled", typ, f.Name)
		if name == "" {
			name = f.Name
		}
		omit := slices.Contains(strings.Split(opts, ","), "omitempty") || slices.Contains(strings.Split(opts, ","), "omitzero")
		out = append(out, jsonField{name: name, omitempty: omit, typ: f.Type})
	}
	return out
}

// compareSchema checks that the schema at path describes the Go type typ exactly: the same
// property names, matching types, required exactly where Go always writes the field, and a
// description on every property for kubectl explain.
func compareSchema(t *testing.T, path string, typ reflect.Type, s apiextensionsv1.JSONSchemaProps) {
	t.Helper()
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	assert.NotEmpty(t, s.Description, "%s: description", path)
	switch {
	case typ == intOrStringType:
		assert.True(t, s.XIntOrString, "%s: x-kubernetes-int-or-string", path)
		assert.Empty(t, s.Type, "%s: an int-or-string has no type", path)
		return
	case typ == timeType:
		assert.Equal(t, "string", s.Type, path)
		assert.Equal(t, "date-time", s.Format, path)
		return
	}
	switch typ.Kind() {
	case reflect.String:
		assert.Equal(t, "string", s.Type, path)
	case reflect.Bool:
		assert.Equal(t, "boolean", s.Type, path)
	case reflect.Int, reflect.Int32, reflect.Int64:
		assert.Equal(t, "integer", s.Type, path)
		if typ.Kind() == reflect.Int64 {
			assert.Equal(t, "int64", s.Format, path)
		}
	case reflect.Slice:
		require.Equal(t, "array", s.Type, path)
		require.NotNil(t, s.Items, path)
		require.NotNil(t, s.Items.Schema, path)
		item := *s.Items.Schema
		if item.Description == "" {
			item.Description = s.Description // items inherit the list's description
		}
		compareSchema(t, path+"[]", typ.Elem(), item)
	case reflect.Map:
		require.Equal(t, "object", s.Type, path)
		require.Equal(t, reflect.String, typ.Key().Kind(), "%s: map keys are strings", path)
		require.NotNil(t, s.AdditionalProperties, "%s: additionalProperties", path)
		require.NotNil(t, s.AdditionalProperties.Schema, "%s: additionalProperties", path)
		value := *s.AdditionalProperties.Schema
		if value.Description == "" {
			value.Description = s.Description // values inherit the map's description
		}
		compareSchema(t, path+"{}", typ.Elem(), value)
	case reflect.Struct:
		require.Equal(t, "object", s.Type, path)
		assert.False(t, ptrTrue(s.XPreserveUnknownFields), "%s: fields are typed, not preserved", path)
		var goNames, required []string
		for _, f := range jsonFields(t, typ) {
			goNames = append(goNames, f.name)
			child := path + "." + f.name
			if !f.omitempty && notRequired[child] == "" {
				required = append(required, f.name)
			}
			if ps, ok := s.Properties[f.name]; assert.True(t, ok, "%s: the CRD lacks the Go field", child) {
				compareSchema(t, child, f.typ, ps)
			}
		}
		var schemaNames []string
		for name := range s.Properties {
			schemaNames = append(schemaNames, name)
		}
		assert.ElementsMatch(t, goNames, schemaNames, "%s: property names", path)
		sort.Strings(required)
		gotRequired := slices.Clone(s.Required)
		sort.Strings(gotRequired)
		assert.Equal(t, required, gotRequired, "%s: required (Go fields without omitempty)", path)
	default:
		t.Errorf("%s: Go kind %s is not handled", path, typ.Kind())
	}
}

func ptrTrue(b *bool) bool { return b != nil && *b }

// TestCRDMatchesGoTypes: the CRD's spec and status are the JSON form of v1alpha1.RdsSpec and
// v1alpha1.RdsStatus, found by reflection, so the two cannot drift apart.
func TestCRDMatchesGoTypes(t *testing.T) {
	root := loadCRD(t).Spec.Versions[0].Schema.OpenAPIV3Schema
	require.NotNil(t, root)
	for _, name := range []string{"spec", "status"} {
		field, ok := reflect.TypeFor[v1alpha1.Rds]().FieldByName(strings.ToUpper(name[:1]) + name[1:])
		require.True(t, ok)
		compareSchema(t, name, field.Type, root.Properties[name])
	}
	assert.Equal(t, []string{"spec"}, root.Required)
	var top []string
	for name := range root.Properties {
		top = append(top, name)
	}
	assert.ElementsMatch(t, []string{"apiVersion", "kind", "metadata", "spec", "status"}, top)
}

// fill sets every field of v to a non-zero value, recursively, with one element in each slice.
func fill(v reflect.Value) {
	switch {
	case v.Type() == timeType:
		v.Set(reflect.ValueOf(metav1.NewTime(time.Date(2026, 11, 22, 6, 19, 13, 0, time.UTC))))
		return
	case v.Type() == intOrStringType:
		v.Set(reflect.ValueOf(intstr.FromString("3306")))
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0))
	case reflect.Map:
		elem := reflect.New(v.Type().Elem()).Elem()
		fill(elem)
		v.Set(reflect.MakeMap(v.Type()))
		v.SetMapIndex(reflect.ValueOf("max_connections").Convert(v.Type().Key()), elem)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	}
}

// TestFullStatusSurvivesTheStatusSubresource: a status with every field set, as the hooks encode
// it, loses nothing to pruning and passes the status schema, so Metacontroller can write it.
func TestFullStatusSurvivesTheStatusSubresource(t *testing.T) {
	crd := loadCRD(t)
	v := newCRDValidator(t, crd, v1alpha1.Version)

	var status v1alpha1.RdsStatus
	fill(reflect.ValueOf(&status).Elem())
	data, err := json.Marshal(status)
	require.NoError(t, err)
	var statusObj map[string]any
	require.NoError(t, utiljson.Unmarshal(data, &statusObj))

	obj := toUnstructured(t, []byte(mySingle))
	obj["status"] = statusObj
	assert.Empty(t, v.admit(obj), "pruned fields")
	assert.Empty(t, errorText(v.create(obj)))

	// The status subresource validates .status against the status schema alone.
	var internal apiextensions.JSONSchemaProps
	statusSchema := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"]
	require.NoError(t, apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&statusSchema, &internal, nil))
	statusValidator, _, err := apiservervalidation.NewSchemaValidator(&internal)
	require.NoError(t, err)
	assert.Empty(t, errorText(apiservervalidation.ValidateCustomResource(field.NewPath("status"), obj["status"], statusValidator)))
}

// TestFullSpecIsKept: a spec with every field set loses nothing to pruning.
func TestFullSpecIsKept(t *testing.T) {
	v := newCRDValidator(t, loadCRD(t), v1alpha1.Version)
	var spec v1alpha1.RdsSpec
	fill(reflect.ValueOf(&spec).Elem())
	data, err := json.Marshal(spec)
	require.NoError(t, err)
	var specObj map[string]any
	require.NoError(t, utiljson.Unmarshal(data, &specObj))
	obj := toUnstructured(t, []byte(mySingle))
	obj["spec"] = specObj
	assert.Empty(t, v.admit(obj), "pruned fields")
}
