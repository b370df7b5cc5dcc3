package reconcile

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
)

// TestEveryFieldHasABehaviour walks v1alpha1.RdsSpec, into structs behind pointers and slices, and
// fails for a field that specFields (fields.go) does not declare, and for a declaration that names
// no field: the next field added cannot be forgotten, nor silently ignored.
func TestEveryFieldHasABehaviour(t *testing.T) {
	paths := specPaths(reflect.TypeFor[v1alpha1.RdsSpec](), "")
	require.NotEmpty(t, paths)
	for _, p := range paths {
		b, ok := specFields[p]
		if assert.True(t, ok, "spec.%s has no declared behaviour: add it to specFields (sync/fields.go)", p) {
			assert.NotEmpty(t, b.kind, "spec.%s: a kind", p)
			assert.NotEmpty(t, b.by, "spec.%s: the function that applies or refuses it", p)
		}
	}
	for p := range specFields {
		assert.Contains(t, paths, p, "specFields declares spec.%s, which v1alpha1.RdsSpec does not have", p)
	}
}

// TestFieldBehavioursNameRealCode: each declaration's by names a function or method of this
// package, so the table points at the code that does what it says.
func TestFieldBehavioursNameRealCode(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	funcs := map[string]bool{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok {
				funcs[fd.Name.Name] = true
			}
		}
	}
	for p, b := range specFields {
		assert.True(t, funcs[b.by], "spec.%s: %q is no function of package sync", p, b.by)
	}
}

// TestCreateOnlyFieldsAreRefusedLater: every field declared set at create or immutable is one the
// hooks compare with the instance (createOnlyProblems, planNetwork, the call's own checks): a
// spec that changes it after create is refused, tested in TestPlanNetwork.
func TestCreateOnlyFieldsAreRefusedLater(t *testing.T) {
	tested := []string{"datastoretype", "availabilityzone", "vpc", "subnet", "timezone", "lowercasetablenames", "diskencryptionid"}
	for p, b := range specFields {
		if b.kind != atCreate || slices.Contains(tested, p) {
			continue
		}
		t.Errorf("spec.%s is set at create only, and TestPlanNetwork has no case that refuses its change: add one and list it here", p)
	}
}

var intOrStringType = reflect.TypeFor[intstr.IntOrString]()

// specPaths lists the JSON paths of t's fields, dotted into nested structs.
func specPaths(t reflect.Type, prefix string) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		p := prefix + name
		out = append(out, p)
		ft := f.Type
		for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct && ft != intOrStringType {
			out = append(out, specPaths(ft, p+".")...)
		}
	}
	return out
}
