package metacontroller

import (
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var metaTimeType = reflect.TypeFor[metav1.Time]()

// inUTC sets every metav1.Time reachable from v (a pointer) to UTC.
//
// NOTE: metav1.Time decodes JSON in time.Local, while the hooks and the test clocks make times in
// UTC. On the wire both are the same text; for in-process callers that compare Go values, a time
// the hook kept from the request and one it made afresh compare equal only in the same location.
func inUTC(v any) {
	walkUTC(reflect.ValueOf(v))
}

func walkUTC(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walkUTC(v.Elem())
		}
	case reflect.Struct:
		if v.Type() == metaTimeType {
			if t := v.Interface().(metav1.Time); v.CanSet() && !t.IsZero() {
				v.Set(reflect.ValueOf(metav1.Time{Time: t.UTC()}))
			}
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				walkUTC(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			walkUTC(v.Index(i))
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			e := iter.Value()
			if e.Kind() == reflect.Pointer {
				walkUTC(e)
				continue
			}
			c := reflect.New(e.Type()).Elem()
			c.Set(e)
			walkUTC(c)
			v.SetMapIndex(iter.Key(), c)
		}
	}
}
