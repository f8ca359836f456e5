package emit

import (
	"encoding/json"
	"fmt"
	"github.com/natsplan/natsplan/model"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
)

// How JSON fields are written in the natsplan language (docs/language.md): nested
// objects are blocks, repeatable ones are blocks named in the singular, durations and
// sizes are strings with units, everything else is the JSON value.

// blockName returns the block a field is written as: its own name for an object,
// the singular for a list of objects, or "" for an attribute.
func blockName(field string) (string, bool) {
	switch field {
	case "placement", "mirror", "subject_transform", "republish", "consumer_limits", "external", "consumer":
		return field, false
	case "sources":
		return "source", true
	case "subject_transforms":
		return "subject_transform", true
	}
	return "", false
}

// nestedOrder is the order of attributes inside nested blocks, as in the server's types.
func nestedOrder() []string {
	return []string{"name", "src", "dest", "headers_only", "cluster", "tags", "opt_start_seq", "opt_start_time",
		"filter_subject", "api", "deliver", "deliver_subject", "inactive_threshold", "max_ack_pending"}
}

// writeFields writes m into body: attributes in order (then any others sorted),
// then blocks in the same order. A nested block (order nil) leaves out zero values,
// which its JSON writes but which mean the same as nothing.
func writeFields(body *hclwrite.Body, m map[string]any, order []string) error {
	nested := order == nil
	if nested {
		order = nestedOrder()
	}
	keys := orderedKeys(m, order)
	for _, k := range keys {
		if isBlock(k, m[k]) || nested && isZero(m[k]) {
			continue
		}
		v, ok, err := attrValue(k, m[k])
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		if ok {
			body.SetAttributeValue(k, v)
		}
	}
	for _, k := range keys {
		if !isBlock(k, m[k]) {
			continue
		}
		name, _ := blockName(k)
		switch v := m[k].(type) {
		case map[string]any:
			if name == "" {
				name = k
			}
			if err := writeFields(body.AppendNewBlock(name, nil).Body(), v, nil); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
		case []any:
			for i, e := range v {
				em, ok := e.(map[string]any)
				if !ok {
					return fmt.Errorf("%s[%d]: not an object", k, i)
				}
				if err := writeFields(body.AppendNewBlock(name, nil).Body(), em, nil); err != nil {
					return fmt.Errorf("%s[%d]: %w", k, i, err)
				}
			}
		}
	}
	return nil
}

func isZero(v any) bool {
	switch x := v.(type) {
	case string:
		return x == ""
	case bool:
		return !x
	case json.Number:
		return x.String() == "0"
	}
	return false
}

// isBlock reports whether field's value v is written as blocks: a nested object
// (metadata is a map attribute), or a list of objects that repeats a block.
func isBlock(field string, v any) bool {
	if _, obj := v.(map[string]any); obj {
		return field != "metadata"
	}
	_, repeated := blockName(field)
	_, list := v.([]any)
	return repeated && list
}

// attrValue converts one JSON value to the attribute's value; false when there is
// nothing to write (null, an empty list or map).
func attrValue(field string, v any) (cty.Value, bool, error) {
	switch x := v.(type) {
	case nil:
		return cty.NilVal, false, nil
	case json.Number:
		n, err := x.Int64()
		switch {
		case err != nil:
			val, perr := cty.ParseNumberVal(x.String())
			return val, perr == nil, perr
		case model.IsDurationField(field):
			return cty.StringVal(model.FormatDuration(time.Duration(n))), true, nil
		case model.IsSizeField(field):
			return sizeValue(n), true, nil
		}
		return cty.NumberIntVal(n), true, nil
	case string:
		return cty.StringVal(x), true, nil
	case bool:
		return cty.BoolVal(x), true, nil
	case []any:
		if len(x) == 0 {
			return cty.NilVal, false, nil
		}
		vals := make([]cty.Value, len(x))
		for i, e := range x {
			ev, ok, err := attrValue(field, e)
			if err != nil || !ok {
				return cty.NilVal, false, fmt.Errorf("element %d: unsupported value %v", i, e)
			}
			vals[i] = ev
		}
		return cty.TupleVal(vals), true, nil
	case map[string]any:
		if len(x) == 0 {
			return cty.NilVal, false, nil
		}
		vals := map[string]cty.Value{}
		for k, e := range x {
			ev, ok, err := attrValue(k, e)
			if err != nil {
				return cty.NilVal, false, err
			}
			if ok {
				vals[k] = ev
			}
		}
		return cty.ObjectVal(vals), true, nil
	}
	return cty.NilVal, false, fmt.Errorf("unsupported value %v", v)
}

// sizeValue writes a byte count with a binary unit when one divides it exactly.
func sizeValue(n int64) cty.Value {
	if s, ok := model.FormatSize(n); ok {
		return cty.StringVal(s)
	}
	return cty.NumberIntVal(n)
}

// jsonOrder lists the JSON names of a struct's fields in declaration order.
func jsonOrder(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

// orderedKeys returns m's keys: those in order first, in that order, then the rest sorted.
func orderedKeys(m map[string]any, order []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, k := range order {
		if _, ok := m[k]; ok {
			out = append(out, k)
			seen[k] = true
		}
	}
	var rest []string
	for k := range m {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}
