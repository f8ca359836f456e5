package schema

import (
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// TestFieldTableCoversServerConfigs walks the JSON tags of the server's
// StreamConfig and ConsumerConfig (and every nested struct) and checks that the
// field table has exactly those fields, so a server upgrade that adds a field fails
// here rather than leaving it inexpressible.
func TestFieldTableCoversServerConfigs(t *testing.T) {
	t.Parallel()
	for _, spec := range []*objectSpec{streamSpec(), consumerSpec()} {
		t.Run(spec.name, func(t *testing.T) {
			compareSpec(t, spec.name, spec.goType, spec)
		})
	}
}

func compareSpec(t *testing.T, path string, goType reflect.Type, spec *objectSpec) {
	t.Helper()
	if spec.goType != goType {
		t.Errorf("%s: table decodes into %v, the server uses %v", path, spec.goType, goType)
	}
	var tags []string
	for i := 0; i < goType.NumField(); i++ {
		sf := goType.Field(i)
		name := tagName(sf)
		if name == "" || name == "-" {
			continue
		}
		tags = append(tags, name)
		f, ok := spec.lookup(name)
		if !ok || f.json != name {
			t.Errorf("%s.%s (%s %v) is not in the field table", path, name, sf.Name, sf.Type)
			continue
		}
		checkKind(t, path+"."+name, f, sf.Type)
		if f.kind == kObject || f.kind == kObjects {
			elem := sf.Type
			for elem.Kind() == reflect.Pointer || elem.Kind() == reflect.Slice {
				elem = elem.Elem()
			}
			compareSpec(t, path+"."+name, elem, f.object)
		}
	}
	for _, f := range spec.fields {
		if !slices.Contains(tags, f.json) {
			t.Errorf("%s.%s is in the field table but not in %v", path, f.json, goType)
		}
	}
}

// checkKind checks that the table's kind fits the Go type the server decodes.
func checkKind(t *testing.T, path string, f *field, typ reflect.Type) {
	t.Helper()
	durationType, timeType := reflect.TypeFor[time.Duration](), reflect.TypeFor[*time.Time]()
	ok := true
	switch f.kind {
	case kString:
		ok = typ.Kind() == reflect.String
	case kBool:
		ok = typ.Kind() == reflect.Bool
	case kInt, kSize:
		ok = typ != durationType && (typ.Kind() >= reflect.Int && typ.Kind() <= reflect.Uint64)
	case kDuration:
		ok = typ == durationType
	case kDurations:
		ok = typ == reflect.SliceOf(durationType)
	case kStrings:
		ok = typ == reflect.TypeFor[[]string]()
	case kMap:
		ok = typ == reflect.TypeFor[map[string]string]()
	case kTime:
		ok = typ == timeType
	case kObject:
		ok = typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Struct
	case kObjects:
		ok = typ.Kind() == reflect.Slice
	case kEnum:
		// Every value must be one the server's own JSON decoding accepts.
		for _, v := range f.enum {
			p := reflect.New(typ)
			if err := json.Unmarshal([]byte(`"`+v+`"`), p.Interface()); err != nil {
				t.Errorf("%s: the server refuses enum value %q: %v", path, v, err)
			}
		}
	}
	if !ok {
		t.Errorf("%s: table kind %d does not fit Go type %v", path, f.kind, typ)
	}
}

// TestForbiddenFields documents the server fields that cannot be set, and why.
func TestForbiddenFields(t *testing.T) {
	t.Parallel()
	var got []string
	var walk func(string, *objectSpec)
	walk = func(path string, spec *objectSpec) {
		for _, f := range spec.fields {
			switch {
			case f.kind == kForbidden:
				got = append(got, joinPath(path, f.json))
				if f.why == "" {
					t.Errorf("%s has no reason", joinPath(path, f.json))
				}
			case f.object != nil:
				walk(joinPath(path, f.json), f.object)
			}
		}
	}
	walk("stream", streamSpec())
	walk("consumer", consumerSpec())
	sort.Strings(got)
	want := []string{"consumer.direct", "consumer.durable_name", "consumer.name", "consumer.sourcing", "stream.name", "stream.placement.preferred"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("forbidden fields = %v, want %v", got, want)
	}
}

// TestEnumValuesMatchServer checks that the enum lists are complete: every value the
// server marshals for its enum types is in the table.
func TestEnumValuesMatchServer(t *testing.T) {
	t.Parallel()
	cases := []struct {
		values []string
		vals   []any
	}{
		{retentionValues, []any{server.LimitsPolicy, server.InterestPolicy, server.WorkQueuePolicy}},
		{discardValues, []any{server.DiscardPolicy(server.DiscardOld), server.DiscardPolicy(server.DiscardNew)}},
		{storageValues, []any{server.FileStorage, server.MemoryStorage}},
		{compressionValues, []any{server.NoCompression, server.S2Compression}},
		{persistValues, []any{server.DefaultPersistMode, server.AsyncPersistMode}},
		{deliverValues, []any{server.DeliverAll, server.DeliverLast, server.DeliverNew, server.DeliverByStartSequence, server.DeliverByStartTime, server.DeliverLastPerSubject}},
		{ackValues, []any{server.AckNone, server.AckAll, server.AckExplicit, server.AckFlowControl}},
		{replayValues, []any{server.ReplayInstant, server.ReplayOriginal}},
		{priorityValues, []any{server.PriorityNone, server.PriorityOverflow, server.PriorityPinnedClient, server.PriorityPrioritized}},
	}
	for _, c := range cases {
		var got []string
		for _, v := range c.vals {
			// Through a pointer, so MarshalJSON methods on either receiver apply.
			p := reflect.New(reflect.TypeOf(v))
			p.Elem().Set(reflect.ValueOf(v))
			b, err := json.Marshal(p.Interface())
			if err != nil {
				t.Fatal(err)
			}
			var s string
			if err := json.Unmarshal(b, &s); err != nil {
				t.Fatalf("%T marshals as %s: %v", v, b, err)
			}
			got = append(got, s)
		}
		if strings.Join(got, ",") != strings.Join(c.values, ",") {
			t.Errorf("enum values %v, server marshals %v", c.values, got)
		}
	}
}
