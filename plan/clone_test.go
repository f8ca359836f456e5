package plan

import (
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// mutate walks the exported fields reachable from v, depth first, counting in *n the
// ways each one can be set to an awkward value (nil, empty, not UTF-8, an unknown enum,
// a time that does not marshal...), and makes the i-th of them. It returns where it
// did, or "" when there are fewer. Like fill, it reaches a field a server upgrade adds.
func mutate(v reflect.Value, path string, i int, n *int) string {
	try := func(what string, set func()) string {
		*n++
		if *n-1 != i {
			return ""
		}
		set()
		return path + " = " + what
	}
	first := func(results ...func() string) string {
		for _, r := range results {
			if s := r(); s != "" {
				return s
			}
		}
		return ""
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return ""
		}
		if s := try("nil", func() { v.Set(reflect.Zero(v.Type())) }); s != "" {
			return s
		}
		if v.Type() == reflect.TypeFor[*time.Time]() {
			local := time.Date(2026, 1, 2, 3, 4, 5, 6, time.Local)
			for _, t := range []time.Time{time.Now(), local, time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
				time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), {}} {
				if s := try(fmt.Sprint(t), func() { v.Set(reflect.ValueOf(&t)) }); s != "" {
					return s
				}
			}
			return ""
		}
		return mutate(v.Elem(), path, i, n)
	case reflect.Struct:
		for f := range v.NumField() {
			if v.Type().Field(f).IsExported() {
				if s := mutate(v.Field(f), path+"."+v.Type().Field(f).Name, i, n); s != "" {
					return s
				}
			}
		}
	case reflect.Slice:
		return first(
			func() string { return try("empty", func() { v.Set(reflect.MakeSlice(v.Type(), 0, 1)) }) },
			func() string { return try("nil", func() { v.Set(reflect.Zero(v.Type())) }) },
			func() string {
				for e := range v.Len() {
					if s := mutate(v.Index(e), fmt.Sprintf("%s[%d]", path, e), i, n); s != "" {
						return s
					}
				}
				return ""
			})
	case reflect.Map:
		for _, m := range []map[string]string{{}, nil, {"bad\xff": "x"}, {"team": "bad\xfe"}, {"a\xffb": "1", "a\xfeb": "2"}} {
			if s := try(fmt.Sprintf("%q", m), func() { v.Set(reflect.ValueOf(m)) }); s != "" {
				return s
			}
		}
	case reflect.String:
		for _, s := range []string{"bad\xff", "", "<&>\u2028é"} {
			if r := try(fmt.Sprintf("%q", s), func() { v.SetString(s) }); r != "" {
				return r
			}
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		// Every enum's known values, and some it does not know.
		for _, x := range []int64{-1, 0, 2, 3, 4, 5, 6, 7, 22, 33, 99} {
			if s := try(fmt.Sprint(x), func() { v.SetInt(x) }); s != "" {
				return s
			}
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		for _, x := range []uint64{0, math.MaxUint32} {
			if s := try(fmt.Sprint(x), func() { v.SetUint(x) }); s != "" {
				return s
			}
		}
	case reflect.Bool:
		return try("false", func() { v.SetBool(false) })
	}
	return ""
}

// disjoint fails t when a and b share memory anywhere: a pointer, a slice's array or a
// map, exported field or not. A kind it does not know how to compare fails too, so a
// server upgrade that adds one is noticed.
func disjoint(t *testing.T, a, b reflect.Value, path string) {
	t.Helper()
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return
		}
		if a.Pointer() == b.Pointer() {
			t.Errorf("%s: the copy shares the pointer", path)
			return
		}
		disjoint(t, a.Elem(), b.Elem(), path)
	case reflect.Slice:
		if a.Cap() > 0 && b.Cap() > 0 && a.Pointer() == b.Pointer() {
			t.Errorf("%s: the copy shares the slice", path)
			return
		}
		for i := range min(a.Len(), b.Len()) {
			disjoint(t, a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
	case reflect.Map:
		if !a.IsNil() && !b.IsNil() && a.Pointer() == b.Pointer() {
			t.Errorf("%s: the copy shares the map", path)
		}
		if k := a.Type().Elem().Kind(); k != reflect.String {
			t.Errorf("%s: a map of %s, which disjoint does not look into", path, k)
		}
	case reflect.Struct:
		for f := range a.NumField() {
			disjoint(t, a.Field(f), b.Field(f), path+"."+a.Type().Field(f).Name)
		}
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
	default:
		t.Errorf("%s: a %s, which disjoint does not know", path, a.Kind())
	}
}

// checkClone checks a typed clone against the JSON round trip on every mutation of
// base: the same value, and, where the typed copy was taken, no memory shared with the
// original. It returns how many mutations took the typed copy and how many the round trip.
func checkClone[T any](t *testing.T, base func() T, clone func(T) T, typed func(T) (T, bool)) (fast, slow int) {
	t.Helper()
	for i := 0; ; i++ {
		cfg := base()
		n := 0
		what := "unchanged"
		if i > 0 {
			if what = mutate(reflect.ValueOf(&cfg).Elem(), "", i-1, &n); what == "" {
				return fast, slow
			}
		}
		want, got := cloneJSON(cfg), clone(cfg)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the clone is\n%+v\nthe round trip gives\n%+v", what, got, want)
		}
		if _, ok := typed(cfg); ok {
			fast++
			disjoint(t, reflect.ValueOf(got), reflect.ValueOf(cfg), "("+what+") config")
		} else {
			slow++
		}
	}
}

// TestCloneMatchesCloneJSON checks cloneStream and cloneConsumer against the JSON round
// trip they replace, field by field, and that the copies they make are their own.
func TestCloneMatchesCloneJSON(t *testing.T) {
	fast, slow := checkClone(t, filledStream, cloneStream, copyStream)
	t.Logf("streams: %d typed copies, %d round trips", fast, slow)
	if fast < 100 || slow < 20 {
		t.Errorf("streams: %d typed copies and %d round trips: the mutations miss one way", fast, slow)
	}
	fast, slow = checkClone(t, filled[server.ConsumerConfig], cloneConsumer, copyConsumer)
	t.Logf("consumers: %d typed copies, %d round trips", fast, slow)
	if fast < 100 || slow < 20 {
		t.Errorf("consumers: %d typed copies and %d round trips: the mutations miss one way", fast, slow)
	}
	// Configs as the files and the server give them.
	for _, cfg := range []server.StreamConfig{{Storage: server.FileStorage}, {Name: "S", Subjects: []string{"a"}, Storage: server.MemoryStorage,
		Metadata: map[string]string{"natsplan.io/project": "p"}}} {
		if got, want := cloneStream(cfg), cloneJSON(cfg); !reflect.DeepEqual(got, want) {
			t.Errorf("stream %+v: the clone is %+v, the round trip gives %+v", cfg, got, want)
		}
	}
	for _, cfg := range []server.ConsumerConfig{{}, {Durable: "c", AckPolicy: server.AckExplicit, FilterSubjects: []string{"a"}}} {
		if got, want := cloneConsumer(cfg), cloneJSON(cfg); !reflect.DeepEqual(got, want) {
			t.Errorf("consumer %+v: the clone is %+v, the round trip gives %+v", cfg, got, want)
		}
	}
}
