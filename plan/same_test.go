package plan

import (
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats-server/v2/server"
)

// fill sets every settable field reachable from v to a non-zero value: strings and
// string slices out of order, server metadata beside user metadata, times outside UTC,
// enums to 1 (a valid value of every server enum). A server upgrade that adds a field
// is covered without touching the test.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.Type() == reflect.TypeFor[*time.Time]() {
			t := time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 7200))
			v.Set(reflect.ValueOf(&t))
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 7200))))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		fill(s.Index(0))
		fill(s.Index(1))
		if s.Index(0).Kind() == reflect.String {
			s.Index(0).SetString("z.>")
			s.Index(1).SetString("a.*")
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		m.SetMapIndex(reflect.ValueOf("_nats.req.level"), reflect.ValueOf("1"))
		m.SetMapIndex(reflect.ValueOf("team"), reflect.ValueOf("a<b>&c"))
		v.Set(m)
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	}
}

func filled[T any]() T {
	var v T
	fill(reflect.ValueOf(&v).Elem())
	return v
}

// filledStream is a stream config with every field set; storage has no valid value 1.
func filledStream() server.StreamConfig {
	c := filled[server.StreamConfig]()
	c.Storage = server.MemoryStorage
	return c
}

// TestSameMatchesCanonicalJSON checks the fast comparison against the JSON one it
// short-cuts: a config's canonical value marshals to exactly the document canonStream
// (canonConsumer) compares, and the caller's config is left as it was.
func TestSameMatchesCanonicalJSON(t *testing.T) {
	streams := map[string]server.StreamConfig{
		"zero":   {Storage: server.FileStorage},
		"filled": filledStream(),
		"empty slices": {Name: "E", Storage: server.FileStorage, Subjects: []string{}, Sources: []*server.StreamSource{nil, {Name: "O"}},
			Placement: &server.Placement{Tags: []string{}}, Metadata: map[string]string{}},
	}
	for name, cfg := range streams {
		t.Run("stream "+name, func(t *testing.T) {
			before := mapOf(cfg)
			if before == nil {
				t.Fatal("the config does not marshal")
			}
			if d := cmp.Diff(canonStream(cfg), mapOf(canonStreamValue(cfg))); d != "" {
				t.Errorf("canonical forms differ (-json +fast):\n%s", d)
			}
			if d := cmp.Diff(before, mapOf(cfg)); d != "" {
				t.Errorf("the config was modified:\n%s", d)
			}
		})
	}
	consumers := map[string]server.ConsumerConfig{
		"zero":   {},
		"filled": filled[server.ConsumerConfig](),
		"empty slices": {Durable: "c", FilterSubjects: []string{}, BackOff: []time.Duration{},
			Metadata: map[string]string{"_nats.ver": "2"}},
	}
	for name, cfg := range consumers {
		for _, replicas := range []int{1, 3} {
			t.Run("consumer "+name, func(t *testing.T) {
				before := mapOf(cfg)
				if before == nil {
					t.Fatal("the config does not marshal")
				}
				if d := cmp.Diff(canonConsumer(cfg, replicas), mapOf(canonConsumerValue(cfg, replicas))); d != "" {
					t.Errorf("canonical forms differ (-json +fast):\n%s", d)
				}
				if d := cmp.Diff(before, mapOf(cfg)); d != "" {
					t.Errorf("the config was modified:\n%s", d)
				}
			})
		}
	}
}

// TestSameAgreesWithDiff checks both answers of the fast comparison against diffMaps:
// what it calls the same has no diff, and every single-field change it sees is one.
func TestSameAgreesWithDiff(t *testing.T) {
	base := filledStream()
	reordered := base
	reordered.Subjects = []string{base.Subjects[1], base.Subjects[0]}
	reordered.Metadata = map[string]string{"team": base.Metadata["team"]}
	if !sameStream(base, reordered) {
		t.Error("subjects in another order and without server metadata: not the same")
	}
	changed := []func(*server.StreamConfig){
		func(c *server.StreamConfig) { c.MaxAge++ },
		func(c *server.StreamConfig) { c.Subjects = []string{"a.*"} },
		func(c *server.StreamConfig) { c.Metadata = map[string]string{"team": "b"} },
		func(c *server.StreamConfig) { t := time.Now(); c.Sources[1].OptStartTime = &t },
		func(c *server.StreamConfig) { c.Placement = &server.Placement{Cluster: "y"} },
	}
	for i, mod := range changed {
		c := filledStream()
		mod(&c)
		same := sameStream(base, c)
		diff := len(diffMaps("", canonStream(base), canonStream(c))) == 0
		if same || diff {
			t.Errorf("stream change %d: same %v, no diff %v; want both false", i, same, diff)
		}
	}
	cbase := filled[server.ConsumerConfig]()
	paused := cbase
	later := cbase.PauseUntil.Add(time.Hour)
	paused.PauseUntil = &later
	if !sameConsumer(cbase, paused, 1) {
		t.Error("pause_until is compared apart, but it made the consumers differ")
	}
	c := cbase
	c.MaxAckPending++
	if sameConsumer(cbase, c, 1) || len(diffMaps("", canonConsumer(cbase, 1), canonConsumer(c, 1))) == 0 {
		t.Error("a max_ack_pending change is not seen")
	}
}

// TestSameUserMetadata checks the metadata comparison against the copies it does without.
func TestSameUserMetadata(t *testing.T) {
	mds := []map[string]string{nil, {}, {"_nats.ver": "2"}, {"team": "a"}, {"team": "b"}, {"team": "a", "_nats.ver": "2"},
		{"team": "a", "owner": "x"}, {"owner": "a"}, {"_nats.ver": "3", "_nats.level": "1"}}
	for _, a := range mds {
		for _, b := range mds {
			want := reflect.DeepEqual(userMetadata(a), userMetadata(b))
			if got := sameUserMetadata(a, b); got != want {
				t.Errorf("sameUserMetadata(%q, %q) = %v, want %v", a, b, got, want)
			}
		}
	}
}
