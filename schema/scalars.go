package schema

import (
	"math"
	"math/big"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// reservedMetaPrefixes are metadata key prefixes users may not set: the server owns
// _nats.*, and natsplan writes natsplan.* (ownership, prevent_destroy, groups) itself.
var reservedMetaPrefixes = []string{"_nats.", "natsplan."}

// scalar converts a non-object value to its JSON form for field f. goType is the Go
// type behind the field and bounds whole numbers.
func (d *decoder) scalar(v cty.Value, f *field, goType reflect.Type, r hcl.Range) (any, bool) {
	switch f.kind {
	case kString:
		s, ok := d.toString(v, f.json, r)
		return s, ok
	case kEnum:
		s, ok := d.toString(v, f.json, r)
		if !ok {
			return nil, false
		}
		if !slices.Contains(f.enum, s) {
			d.errorf(r, "Invalid "+f.json+" value", "%q is not a valid %s; use %s.%s", s, f.json, quoteList(f.enum), didYouMean(s, f.enum))
			return nil, false
		}
		return s, true
	case kBool:
		b, err := convert.Convert(v, cty.Bool)
		if err != nil {
			d.errorf(r, "Incorrect attribute value type", "%s must be true or false.", f.json)
			return nil, false
		}
		return b.True(), true
	case kInt:
		return d.whole(v, f.json, goType, r)
	case kSize:
		return d.size(v, f.json, goType, r)
	case kDuration:
		return d.duration(v, f.json, r)
	case kTime:
		s, ok := d.toString(v, f.json, r)
		if !ok {
			return nil, false
		}
		if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
			d.errorf(r, "Invalid time", "%s must be an RFC 3339 time such as \"2026-01-02T15:04:05Z\"; %q is not.", f.json, s)
			return nil, false
		}
		return s, true
	case kMap:
		return d.stringMap(v, f.json, r)
	}
	return d.list(v, f, goType, r)
}

// list converts the list kinds: strings, whole numbers, durations.
func (d *decoder) list(v cty.Value, f *field, goType reflect.Type, r hcl.Range) (any, bool) {
	t := v.Type()
	if !(t.IsListType() || t.IsTupleType() || t.IsSetType()) {
		example := map[kind]string{kStrings: `["a", "b"]`, kInts: "[1, 2]", kDurations: `["1s", "5s"]`}[f.kind]
		d.errorf(r, "Incorrect attribute value type", "%s must be a list, like %s = %s.", f.json, f.json, example)
		return nil, false
	}
	out := []any{}
	for it := v.ElementIterator(); it.Next(); {
		_, ev := it.Element()
		if ev.IsNull() {
			d.errorf(r, "Incorrect attribute value type", "%s must not contain null.", f.json)
			return nil, false
		}
		var x any
		var ok bool
		switch f.kind {
		case kStrings:
			x, ok = d.toString(ev, f.json, r)
		case kInts:
			var elem reflect.Type
			if goType != nil {
				elem = goType.Elem()
			}
			x, ok = d.whole(ev, f.json, elem, r)
		default:
			x, ok = d.duration(ev, f.json, r)
		}
		if !ok {
			return nil, false
		}
		out = append(out, x)
	}
	return out, true
}

func (d *decoder) toString(v cty.Value, name string, r hcl.Range) (string, bool) {
	if !v.Type().IsPrimitiveType() || v.Type() == cty.Bool {
		d.errorf(r, "Incorrect attribute value type", "%s must be a string.", name)
		return "", false
	}
	if v.Type() == cty.Number && v.AsBigFloat().MantExp(nil) > 3400 {
		// Beyond 1e1000: printing it would take minutes, and no string field wants it.
		d.errorf(r, "Incorrect attribute value type", "%s must be a string, not a huge number.", name)
		return "", false
	}
	s, err := convert.Convert(v, cty.String)
	if err != nil {
		d.errorf(r, "Incorrect attribute value type", "%s must be a string.", name)
		return "", false
	}
	return s.AsString(), true
}

// whole converts a number to int64 or uint64 within the range of goType.
func (d *decoder) whole(v cty.Value, name string, goType reflect.Type, r hcl.Range) (any, bool) {
	if v.Type() != cty.Number {
		n, err := convert.Convert(v, cty.Number)
		if err != nil || v.Type() == cty.Bool {
			d.errorf(r, "Incorrect attribute value type", "%s must be a whole number.", name)
			return nil, false
		}
		v = n
	}
	bf := v.AsBigFloat()
	if !bf.IsInt() {
		d.errorf(r, "Incorrect attribute value type", "%s must be a whole number.", name)
		return nil, false
	}
	return d.inRange(bf, name, goType, r)
}

// inRange checks n against the range of goType (int when unknown) and returns it as
// int64 or uint64. It compares before converting: a literal like 1e99999999 must not
// be expanded into a huge integer.
func (d *decoder) inRange(n *big.Float, name string, goType reflect.Type, r hcl.Range) (any, bool) {
	k := reflect.Int
	if goType != nil {
		k = goType.Kind()
	}
	// Most numbers are an int64 within the range, which needs no big bounds.
	if i, acc := n.Int64(); acc == big.Exact {
		switch k {
		case reflect.Int32:
			if i >= math.MinInt32 && i <= math.MaxInt32 {
				return i, true
			}
		case reflect.Uint64, reflect.Uint:
			if i >= 0 {
				return i, true
			}
		default:
			return i, true
		}
	}
	lo, hi := big.NewFloat(math.MinInt64), new(big.Float).SetUint64(math.MaxInt64)
	switch k {
	case reflect.Int32:
		lo, hi = big.NewFloat(math.MinInt32), big.NewFloat(math.MaxInt32)
	case reflect.Uint64, reflect.Uint:
		lo, hi = big.NewFloat(0), new(big.Float).SetUint64(math.MaxUint64)
	}
	if n.Cmp(lo) < 0 || n.Cmp(hi) > 0 {
		f, _ := n.Float64()
		d.errorf(r, "Value out of range", "%s must be between %s and %s; %.6g is not.", name, lo.Text('f', 0), hi.Text('f', 0), f)
		return nil, false
	}
	if i, acc := n.Int64(); acc == big.Exact {
		return i, true
	}
	u, _ := n.Uint64()
	return u, true
}

// size converts a byte count or a size string.
func (d *decoder) size(v cty.Value, name string, goType reflect.Type, r hcl.Range) (any, bool) {
	var n int64
	switch v.Type() {
	case cty.Number:
		x, ok := d.whole(v, name, nil, r)
		if !ok {
			return nil, false
		}
		n = x.(int64)
	case cty.String:
		x, err := parseSize(v.AsString())
		if err != nil {
			d.errorf(r, "Invalid size", "%s: %s. Write a number of bytes or a string with a unit: \"512MiB\", \"10GB\" (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB).", name, err)
			return nil, false
		}
		n = x
	default:
		d.errorf(r, "Incorrect attribute value type", "%s must be a size: a number of bytes or a string like \"512MiB\".", name)
		return nil, false
	}
	if n < -1 {
		d.errorf(r, "Invalid size", "%s must be at least 0, or -1 for unlimited; %d is not.", name, n)
		return nil, false
	}
	return d.inRange(new(big.Float).SetInt64(n), name, goType, r)
}

// duration converts a duration string (or the number 0) to nanoseconds.
func (d *decoder) duration(v cty.Value, name string, r hcl.Range) (any, bool) {
	switch v.Type() {
	case cty.Number:
		if v.Equals(cty.Zero).True() {
			return int64(0), true
		}
		d.errorf(r, "Invalid duration", "%s is a duration: write a string with a unit, like \"30s\", \"1h30m\" or \"7d\" (0 means none).", name)
		return nil, false
	case cty.String:
		dur, err := parseDuration(v.AsString())
		if err != nil {
			d.errorf(r, "Invalid duration", "%s: %s. Use Go duration syntax plus d for days: \"90s\", \"1h30m\", \"7d\".", name, err)
			return nil, false
		}
		return int64(dur), true
	}
	d.errorf(r, "Incorrect attribute value type", "%s must be a duration string, like \"30s\".", name)
	return nil, false
}

// stringMap converts a map of strings, refusing reserved metadata keys.
func (d *decoder) stringMap(v cty.Value, name string, r hcl.Range) (any, bool) {
	t := v.Type()
	if !t.IsMapType() && !t.IsObjectType() {
		d.errorf(r, "Incorrect attribute value type", "%s must be a map of strings, like %s = { owner = \"team-a\" }.", name, name)
		return nil, false
	}
	out := map[string]string{}
	for it := v.ElementIterator(); it.Next(); {
		k, ev := it.Element()
		key := k.AsString()
		for _, p := range reservedMetaPrefixes {
			if strings.HasPrefix(key, p) {
				d.errorf(r, "Reserved metadata key", "%s key %q starts with %q, which is reserved (the server owns _nats.*, natsplan writes natsplan.* itself); rename the key.", name, key, p)
				return nil, false
			}
		}
		if ev.IsNull() {
			continue
		}
		s, ok := d.toString(ev, name+"."+key, r)
		if !ok {
			return nil, false
		}
		out[key] = s
	}
	return out, true
}
