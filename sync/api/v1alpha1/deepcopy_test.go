package v1alpha1

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDeepCopyCopiesEveryField fills every field of each type with a DeepCopy method with non-zero
// values, copies it, and checks that the copy is equal and shares no memory with the original: a
// field added to a type and forgotten in its hand-written DeepCopy fails here.
func TestDeepCopyCopiesEveryField(t *testing.T) {
	copiers := map[string]func(seed *int) (orig, copied any){
		"RdsStatus":        copyOf[RdsStatus](func(s *RdsStatus) *RdsStatus { return s.DeepCopy() }),
		"AutopilotStatus":  copyOf[AutopilotStatus](func(s *AutopilotStatus) *AutopilotStatus { return s.DeepCopy() }),
		"LogsRequest":      copyOf[LogsRequest](func(s *LogsRequest) *LogsRequest { return s.DeepCopy() }),
		"LogsStatus":       copyOf[LogsStatus](func(s *LogsStatus) *LogsStatus { return s.DeepCopy() }),
		"RestoreStatus":    copyOf[RestoreStatus](func(s *RestoreStatus) *RestoreStatus { return s.DeepCopy() }),
		"DatabasesStatus":  copyOf[DatabasesStatus](func(s *DatabasesStatus) *DatabasesStatus { return s.DeepCopy() }),
		"ParametersStatus": copyOf[ParametersStatus](func(s *ParametersStatus) *ParametersStatus { return s.DeepCopy() }),
	}
	for _, name := range typesWithDeepCopy(t) {
		assert.Contains(t, copiers, name, "%s has a DeepCopy this test does not check: add it above", name)
	}
	for name, copier := range copiers {
		t.Run(name, func(t *testing.T) {
			seed := 0
			orig, copied := copier(&seed)
			require.Equal(t, orig, copied, "the copy equals the original")
			sharedMemory(t, name, reflect.ValueOf(orig), reflect.ValueOf(copied))
		})
	}
	t.Run("nil", func(t *testing.T) {
		assert.Nil(t, (*RdsStatus)(nil).DeepCopy())
		assert.Nil(t, (*LogsStatus)(nil).DeepCopy())
	})
}

// copyOf returns a function that fills a T and copies it with deepCopy.
func copyOf[T any](deepCopy func(*T) *T) func(seed *int) (any, any) {
	return func(seed *int) (any, any) {
		orig := new(T)
		fill(reflect.ValueOf(orig).Elem(), seed)
		return orig, deepCopy(orig)
	}
}

var timeType = reflect.TypeFor[time.Time]()

// fill sets every field, element and pointee reachable from v to a non-zero value, each different.
func fill(v reflect.Value, seed *int) {
	*seed++
	n := *seed
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == timeType {
			v.Set(reflect.ValueOf(time.Unix(int64(1_000_000_000+n), 0).UTC()))
			return
		}
		for i := range v.NumField() {
			if !v.Type().Field(i).IsExported() {
				panic("fill: unexported field " + v.Type().Field(i).Name + " of " + v.Type().String())
			}
			fill(v.Field(i), seed)
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), seed)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fill(v.Index(i), seed)
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		for range 2 {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(k, seed)
			fill(e, seed)
			v.SetMapIndex(k, e)
		}
	case reflect.String:
		v.SetString("s" + strings.Repeat("x", n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(n))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(n))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(n) + 0.5)
	default:
		panic("fill: unhandled kind " + v.Kind().String() + " at " + v.Type().String())
	}
}

// sharedMemory fails for every pointer, slice or map of a that b shares (the copy's own values
// are compared by Equal).
func sharedMemory(t *testing.T, path string, a, b reflect.Value) {
	t.Helper()
	switch a.Kind() {
	case reflect.Struct:
		if a.Type() == timeType {
			return // a value; its *Location is the shared zone
		}
		for i := range a.NumField() {
			sharedMemory(t, path+"."+a.Type().Field(i).Name, a.Field(i), b.Field(i))
		}
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return
		}
		if a.Pointer() == b.Pointer() {
			t.Errorf("%s: the copy shares the pointer", path)
			return
		}
		sharedMemory(t, path, a.Elem(), b.Elem())
	case reflect.Slice:
		if a.Len() > 0 && b.Len() > 0 && a.Index(0).Addr().Pointer() == b.Index(0).Addr().Pointer() {
			t.Errorf("%s: the copy shares the slice's array", path)
			return
		}
		for i := range min(a.Len(), b.Len()) {
			sharedMemory(t, path+"[]", a.Index(i), b.Index(i))
		}
	case reflect.Map:
		if !a.IsNil() && a.Pointer() == b.Pointer() {
			t.Errorf("%s: the copy shares the map", path)
			return
		}
		for _, k := range a.MapKeys() {
			if e := b.MapIndex(k); e.IsValid() {
				sharedMemory(t, path+"[k]", a.MapIndex(k), e)
			}
		}
	}
}

// typesWithDeepCopy names the receiver types of this package's DeepCopy methods.
func typesWithDeepCopy(t *testing.T) []string {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var names []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || fd.Name.Name != "DeepCopy" {
				continue
			}
			recv := fd.Recv.List[0].Type
			if star, ok := recv.(*ast.StarExpr); ok {
				recv = star.X
			}
			names = append(names, recv.(*ast.Ident).Name)
		}
	}
	require.NotEmpty(t, names)
	return names
}
