package reconcile

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/sync/api/v1alpha1"
)

// TestSoFarCopiesEachFieldOfTheStatus: every field of statusSoFar is the status's field of the
// same name and type, and soFar copies each (a pointer or slice the status's own): the steps on the
// instance decide on what a copy of the whole status gave them.
func TestSoFarCopiesEachFieldOfTheStatus(t *testing.T) {
	var st v1alpha1.RdsStatus
	stv := reflect.ValueOf(&st).Elem()
	fields := reflect.TypeFor[statusSoFar]()
	for i := range fields.NumField() {
		f := fields.Field(i)
		sf, ok := stv.Type().FieldByName(f.Name)
		require.True(t, ok, "RdsStatus has a field %s", f.Name)
		require.Equal(t, sf.Type, f.Type, "statusSoFar.%s has the status's type", f.Name)
		v := stv.FieldByName(f.Name)
		switch v.Kind() {
		case reflect.Pointer:
			v.Set(reflect.New(v.Type().Elem()))
		case reflect.Slice:
			v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		case reflect.String:
			v.SetString("set")
		case reflect.Int:
			v.SetInt(1)
		default:
			t.Fatalf("statusSoFar.%s: a %s this test cannot fill", f.Name, v.Kind())
		}
	}
	got := reflect.ValueOf(soFar(&st))
	for i := range fields.NumField() {
		name := fields.Field(i).Name
		want, have := stv.FieldByName(name), got.Field(i)
		switch want.Kind() {
		case reflect.Pointer, reflect.Slice:
			assert.Equal(t, want.Pointer(), have.Pointer(), "soFar copies %s", name)
		default:
			assert.Equal(t, want.Interface(), have.Interface(), "soFar copies %s", name)
		}
	}
}

// deepCopySoFar is s with what its pointers and slices hold copied (through the status's
// DeepCopy), for a test that a plan writes nothing of its input.
func deepCopySoFar(s statusSoFar) statusSoFar {
	var st v1alpha1.RdsStatus
	sv, stv := reflect.ValueOf(s), reflect.ValueOf(&st).Elem()
	for i := range sv.NumField() {
		stv.FieldByName(sv.Type().Field(i).Name).Set(sv.Field(i))
	}
	return soFar(st.DeepCopy())
}
