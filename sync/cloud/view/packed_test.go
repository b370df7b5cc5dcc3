package view

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcsps/rds-lambda-controller/sync/cloud"
)

// TestPackKeepsEveryField fills every field of a cloud.Instance, nested ones included, with a
// value of its own, and checks that unpacking its packed form gives it back: a field added to
// cloud.Instance and not to pack and unpack fails here.
func TestPackKeepsEveryField(t *testing.T) {
	var in cloud.Instance
	n := 0
	fill(t, reflect.ValueOf(&in).Elem(), &n)
	require.Greater(t, n, 30, "every field is filled")

	out := pack(&in).unpack()
	assert.True(t, in.Created.Equal(out.Created), "Created: %v, want %v", out.Created, in.Created)
	in.Created, out.Created = time.Time{}, time.Time{}
	assert.Equal(t, &in, out)
}

// TestPackKeepsWhatIsUnset: nil stays nil, empty stays empty, and an unset SSL or Created stays
// unset.
func TestPackKeepsWhatIsUnset(t *testing.T) {
	off := false
	for _, in := range []cloud.Instance{
		{},
		{ID: "i", PrivateIPs: []string{}, Replicas: []string{}, Nodes: []cloud.Node{}, Tags: map[string]string{}, SSL: &off},
		{ID: "i", PrivateIPs: []string{""}, Tags: map[string]string{"": ""}, Port: -1},
	} {
		assert.Equal(t, &in, pack(&in).unpack())
	}
}

// TestPackedEqualIsInstanceEqual: two instances pack the same exactly when they are equal (put
// compares packed forms to see a change), whatever order their tags come in.
func TestPackedEqualIsInstanceEqual(t *testing.T) {
	a := cloud.Instance{ID: "i", Tags: map[string]string{"a": "1", "b": "2", "c": "3"}}
	b := cloud.Instance{ID: "i", Tags: map[string]string{"c": "3", "b": "2", "a": "1"}}
	assert.True(t, pack(&a).equal(pack(&b)))
	for _, change := range []func(*cloud.Instance){
		func(i *cloud.Instance) { i.Tags["a"] = "2" },
		func(i *cloud.Instance) { i.ID, i.Name = "", "i" }, // the same text, cut elsewhere
		func(i *cloud.Instance) { i.Port = 1 },
		func(i *cloud.Instance) { i.PrivateIPs = []string{} },
	} {
		c := b
		c.Tags = map[string]string{"a": "1", "b": "2", "c": "3"}
		change(&c)
		assert.False(t, pack(&a).equal(pack(&c)), "%+v", c)
	}
}

// fill sets every field under v to a value of its own, counting them in n.
func fill(t *testing.T, v reflect.Value, n *int) {
	t.Helper()
	*n++
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", *n))
	case reflect.Int:
		v.SetInt(int64(*n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, v.Elem(), n)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range v.Len() {
			fill(t, v.Index(i), n)
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		for range 2 {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(t, k, n)
			fill(t, e, n)
			v.SetMapIndex(k, e)
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 11, 27, 10, 0, *n, 123, time.FixedZone("CET", 3600))))
			return
		}
		for i := range v.NumField() {
			fill(t, v.Field(i), n)
		}
	default:
		t.Fatalf("fill: a field of kind %s: teach pack, unpack and fill about it", v.Kind())
	}
}

// TestPackKeepsCreatedOfAnyYear: Created is kept whatever the instant, not only those whose
// nanoseconds since 1970 fit in an int64 (1678 to 2262): an unreadable OTC time is the zero time,
// but a readable one may be far off, and a wrapped one would make two instants pack equal (a
// change missed) and unpack another instant (an old instance taken for a new one, ownership.go).
func TestPackKeepsCreatedOfAnyYear(t *testing.T) {
	instants := []time.Time{
		time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC),
		time.Date(1677, 9, 21, 0, 12, 43, 145224191, time.UTC),
		time.Date(2262, 4, 11, 23, 47, 16, 854775808, time.UTC),
		time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
	}
	for _, at := range instants {
		in := cloud.Instance{ID: "i", Created: at}
		out := pack(&in).unpack()
		assert.True(t, at.Equal(out.Created), "Created: %v, want %v", out.Created, at)
	}
	for i, a := range instants {
		for _, b := range instants[i+1:] {
			assert.False(t, pack(&cloud.Instance{Created: a}).equal(pack(&cloud.Instance{Created: b})), "%v and %v pack equal", a, b)
		}
	}
	// 2300 in nanoseconds since 1970 wraps around an int64 to 1715.
	a, b := time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC), time.Unix(0, time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	assert.False(t, pack(&cloud.Instance{Created: a}).equal(pack(&cloud.Instance{Created: b})), "%v and %v pack equal", a, b)
}
