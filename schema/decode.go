package schema

import (
	"bytes"
	"cmp"
	"encoding"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// item is one thing written inside a body: an attribute, a nested block, or one key
// of an object value written in attribute form (placement = { cluster = "east" }).
type item struct {
	name      string
	nameRange hcl.Range // where the name is, for "unsupported argument"
	rng       hcl.Range // the whole attribute or block, recorded in Decl.Fields
	expr      hcl.Expression
	block     *hclsyntax.Block
}

// bodyItems lists a body's attributes and blocks in source order.
func bodyItems(body *hclsyntax.Body) []item {
	return appendBodyItems(make([]item, 0, len(body.Attributes)+len(body.Blocks)), body)
}

// appendBodyItems is bodyItems appending to items, which it sorts whole.
func appendBodyItems(items []item, body *hclsyntax.Body) []item {
	for _, a := range body.Attributes {
		items = append(items, item{name: a.Name, nameRange: a.NameRange, rng: a.SrcRange, expr: a.Expr})
	}
	for _, b := range body.Blocks {
		items = append(items, item{name: b.Type, nameRange: b.TypeRange, rng: b.Range(), block: b})
	}
	slices.SortStableFunc(items, func(a, b item) int { return cmp.Compare(a.rng.Start.Byte, b.rng.Start.Byte) })
	return items
}

// decoder turns items into the JSON the server's config types decode from, checking
// every value against the field table and recording where each field was set.
type decoder struct {
	ctx    *hcl.EvalContext
	inline inlineBodies
	diags  hcl.Diagnostics
	fields map[string]hcl.Range
}

func newDecoder(ctx *hcl.EvalContext, inline inlineBodies) *decoder {
	return &decoder{ctx: ctx, inline: inline, fields: map[string]hcl.Range{}}
}

// blockItems lists what a block's body holds, whether written over several lines or
// as a one-line block with commas.
func (d *decoder) blockItems(b *hclsyntax.Block) []item {
	if oc, ok := d.inline[b]; ok {
		items, _ := d.exprItems(oc, b.Type)
		return items
	}
	return bodyItems(b.Body)
}

func (d *decoder) errorf(subject hcl.Range, summary, format string, args ...any) {
	r := subject
	d.diags = append(d.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary,
		Detail: fmt.Sprintf(format, args...), Subject: &r})
}

// hasErrors reports whether decoding produced an error so far.
func (d *decoder) hasErrors() bool { return d.diags.HasErrors() }

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// object decodes the items of one object against spec. path is the JSON path of
// the object ("" for a config, "mirror" for its mirror).
// at is the object's block or attribute, where a missing required field is reported.
func (d *decoder) object(items []item, spec *objectSpec, path string, at hcl.Range) map[string]any {
	out := make(map[string]any, len(items))
	seen := make(map[string]seenAt, len(items))
	for _, it := range items {
		f, ok := spec.lookup(it.name)
		if !ok {
			d.unknown(it, spec)
			continue
		}
		if f.kind == kForbidden {
			d.errorf(it.nameRange, "Argument not allowed",
				"%q cannot be set in a %s block: %s.", f.json, spec.name, f.why)
			continue
		}
		if first, dup := seen[f.json]; dup && !(f.kind == kObjects && first.block && it.block != nil) {
			d.errorf(it.nameRange, "Duplicate argument",
				"%q is already set in this %s block at %s; set it once.", it.name, spec.name, rangeString(first.rng))
			continue
		} else if !dup {
			seen[f.json] = seenAt{rng: it.rng, block: it.block != nil}
		}
		p := joinPath(path, f.json)
		if it.block != nil {
			if v, ok := d.blockValue(it, f, spec, p, out); ok {
				out[f.json] = v
			}
			continue
		}
		if v, ok := d.attrValue(it, f, spec, p); ok {
			out[f.json] = v
			d.fields[p] = it.rng
		}
	}
	for _, r := range spec.required {
		if _, ok := seen[r]; !ok {
			d.errorf(at, "Missing required argument", "A %s block needs %s = <value>.", spec.name, r)
		}
	}
	return out
}

// seenAt is where a field was first set, and whether as a block.
type seenAt struct {
	rng   hcl.Range
	block bool
}

// unknown reports a name that is not in spec, with the closest known one.
func (d *decoder) unknown(it item, spec *objectSpec) {
	if it.block != nil {
		d.errorf(it.nameRange, "Unsupported block type",
			"Blocks of type %q are not expected in a %s block.%s", it.name, spec.name, didYouMean(it.name, spec.names()))
		return
	}
	d.errorf(it.nameRange, "Unsupported argument",
		"An argument named %q is not expected in a %s block.%s", it.name, spec.name, didYouMean(it.name, spec.names()))
}

// blockValue decodes a nested block: a single object, or one more element of a list.
func (d *decoder) blockValue(it item, f *field, spec *objectSpec, p string, out map[string]any) (any, bool) {
	b := it.block
	switch {
	case f.kind != kObject && f.kind != kObjects:
		d.errorf(it.nameRange, "Unsupported block type",
			"%q is an argument, not a block, in a %s block: write %s = <value>.", it.name, spec.name, it.name)
		return nil, false
	case f.kind == kObjects && it.name != f.block:
		d.errorf(it.nameRange, "Unsupported block type",
			"Write one %s { ... } block per element, or %s = [{ ... }].", f.block, f.json)
		return nil, false
	case len(b.Labels) > 0:
		d.errorf(b.LabelRanges[0], "Extraneous label",
			"A %s block takes no labels; remove %q.", it.name, b.Labels[0])
		return nil, false
	}
	if f.kind == kObject {
		d.fields[p] = it.rng
		return d.object(d.blockItems(b), f.object, p, b.DefRange()), true
	}
	list, _ := out[f.json].([]any)
	ep := fmt.Sprintf("%s[%d]", p, len(list))
	d.fields[ep] = it.rng
	if len(list) == 0 {
		d.fields[p] = it.rng
	}
	return append(list, d.object(d.blockItems(b), f.object, ep, b.DefRange())), true
}

// attrValue decodes an attribute's value according to its field.
func (d *decoder) attrValue(it item, f *field, spec *objectSpec, p string) (any, bool) {
	switch f.kind {
	case kObject:
		items, ok := d.exprItems(it.expr, f.object.name)
		if !ok {
			return nil, false
		}
		return d.object(items, f.object, p, it.rng), true
	case kObjects:
		return d.exprList(it.expr, f, p)
	case kStrings:
		if list, ok := quotedList(it.expr); ok {
			return list, true
		}
	}
	v, ok := d.eval(it.expr)
	if !ok {
		return nil, false
	}
	return d.scalar(v, f, fieldType(spec.goType, f.json), it.expr.Range())
}

// eval evaluates expr; unknown or null values count as not set.
func (d *decoder) eval(expr hcl.Expression) (cty.Value, bool) {
	if v, ok := quotedValue(expr); ok {
		return v, true
	}
	v, diags := expr.Value(d.ctx)
	d.diags = append(d.diags, diags...)
	if diags.HasErrors() || !v.IsWhollyKnown() || v.IsNull() {
		return cty.NilVal, false
	}
	return v, true
}

// quotedValue is the value of a quoted string without interpolations ("1h"), which
// is the value of its one literal part; Value would copy it through a buffer. Strings
// are most of what blocks hold.
func quotedValue(expr hcl.Expression) (cty.Value, bool) {
	t, ok := expr.(*hclsyntax.TemplateExpr)
	if !ok || !t.IsStringLiteral() {
		return cty.NilVal, false
	}
	v := t.Parts[0].(*hclsyntax.LiteralValueExpr).Val
	if v.Type() != cty.String || !v.IsKnown() || v.IsNull() || v.IsMarked() {
		return cty.NilVal, false
	}
	return v, true
}

// quotedList is the value of a list of strings written as quoted strings without
// interpolations (subjects = ["a.>", "b.>"]), as list gives it for kStrings, without
// building the tuple value.
func quotedList(expr hcl.Expression) ([]any, bool) {
	tc, ok := expr.(*hclsyntax.TupleConsExpr)
	if !ok {
		return nil, false
	}
	out := make([]any, len(tc.Exprs))
	for i, e := range tc.Exprs {
		v, ok := quotedValue(e)
		if !ok {
			return nil, false
		}
		out[i] = v.AsString()
	}
	return out, true
}

// exprItems turns an object written as an attribute value into items, keeping the
// range of every key when the object is written literally.
func (d *decoder) exprItems(expr hcl.Expression, what string) ([]item, bool) {
	if oc, ok := expr.(*hclsyntax.ObjectConsExpr); ok {
		var items []item
		for _, kv := range oc.Items {
			name := hcl.ExprAsKeyword(kv.KeyExpr)
			if name == "" {
				kval, ok := d.eval(kv.KeyExpr)
				if !ok {
					continue
				}
				if kval.Type() != cty.String {
					d.errorf(kv.KeyExpr.Range(), "Incorrect attribute value type", "Keys of %s must be names.", what)
					continue
				}
				name = kval.AsString()
			}
			r := hcl.RangeBetween(kv.KeyExpr.Range(), kv.ValueExpr.Range())
			items = append(items, item{name: name, nameRange: kv.KeyExpr.Range(), rng: r, expr: kv.ValueExpr})
		}
		return items, true
	}
	v, ok := d.eval(expr)
	if !ok {
		return nil, false
	}
	t := v.Type()
	if !t.IsObjectType() && !t.IsMapType() {
		d.errorf(expr.Range(), "Incorrect attribute value type",
			"%s must be an object, like %s = { ... }, or a %s { ... } block.", what, what, what)
		return nil, false
	}
	var items []item
	for it := v.ElementIterator(); it.Next(); {
		k, ev := it.Element()
		r := expr.Range()
		items = append(items, item{name: k.AsString(), nameRange: r, rng: r, expr: hcl.StaticExpr(ev, r)})
	}
	return items, true
}

// exprList decodes a list of objects written as an attribute (sources = [{...}]).
func (d *decoder) exprList(expr hcl.Expression, f *field, p string) (any, bool) {
	var elems []hcl.Expression
	if tc, ok := expr.(*hclsyntax.TupleConsExpr); ok {
		for _, e := range tc.Exprs {
			elems = append(elems, e)
		}
	} else {
		v, ok := d.eval(expr)
		if !ok {
			return nil, false
		}
		if !v.CanIterateElements() || v.Type().IsObjectType() || v.Type().IsMapType() {
			d.errorf(expr.Range(), "Incorrect attribute value type",
				"%s must be a list of objects, or written as %s { ... } blocks.", f.json, f.block)
			return nil, false
		}
		for it := v.ElementIterator(); it.Next(); {
			_, ev := it.Element()
			elems = append(elems, hcl.StaticExpr(ev, expr.Range()))
		}
	}
	list := []any{}
	for i, e := range elems {
		ep := fmt.Sprintf("%s[%d]", p, i)
		items, ok := d.exprItems(e, f.object.name)
		if !ok {
			continue
		}
		d.fields[ep] = e.Range()
		list = append(list, d.object(items, f.object, ep, e.Range()))
	}
	d.fields[p] = expr.Range()
	return list, true
}

// fieldType finds the Go type behind a JSON name of t (a struct), or nil. Every
// attribute of every block asks, so the answers are kept per struct type.
func fieldType(t reflect.Type, name string) reflect.Type {
	if t == nil {
		return nil
	}
	if byName, ok := fieldTypes.Load(t); ok {
		return byName.(map[string]reflect.Type)[name]
	}
	byName := map[string]reflect.Type{}
	for i := t.NumField() - 1; i >= 0; i-- { // the first field of a name wins
		sf := t.Field(i)
		if n := tagName(sf); n != "" {
			byName[n] = sf.Type
		}
	}
	fieldTypes.Store(t, byName)
	return byName[name]
}

// fieldTypes maps a struct type to its fields' types by JSON name (fieldType).
var fieldTypes sync.Map

// tagName is the JSON name of a struct field, or "" when it has none.
func tagName(sf reflect.StructField) string {
	tag, ok := sf.Tag.Lookup("json")
	if !ok || !sf.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(tag, ",")
	return name
}

// fromJSON decodes the JSON of m into dst strictly, as the server does.
//
// The values that encoding/json could only decode one way (a string, bool or whole
// number into a field of that kind, a list of strings, a map of strings, a string
// into a field with its own UnmarshalJSON) are set directly; the rest of m goes
// through JSON. When anything fails, dst is put back as it was and all of m goes
// through JSON, so that the error, and what is left decoded, are JSON's.
func fromJSON(m map[string]any, dst any) error {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return fromJSONOnly(m, dst)
	}
	v := rv.Elem()
	fields := jsonFields(v.Type())
	if fields == nil {
		return fromJSONOnly(m, dst)
	}
	// Put back by zeroing when it was zero, as it is for every caller: a copy of a
	// stream's config was a tenth of the bytes decoding allocated.
	var saved reflect.Value
	if !zeroMemory(v) {
		saved = reflect.New(v.Type()).Elem()
		saved.Set(v)
	}
	var rest map[string]any
	for k, x := range m {
		f, ok := fields[k]
		if !ok || !f.assign(v.Field(f.index), x) {
			if rest == nil {
				rest = make(map[string]any, len(m))
			}
			rest[k] = x
		}
	}
	if rest == nil {
		return nil
	}
	if fromJSONOnly(rest, dst) == nil {
		return nil
	}
	if saved.IsValid() {
		v.Set(saved)
	} else {
		v.SetZero()
	}
	return fromJSONOnly(m, dst)
}

// zeroMemory reports whether the memory of v (addressable) is all zero bytes, which
// makes v its type's zero value. It reads the bytes rather than asking v.IsZero,
// which visits every field of a server config one by one.
func zeroMemory(v reflect.Value) bool {
	mem := unsafe.Slice((*byte)(v.Addr().UnsafePointer()), v.Type().Size())
	for _, b := range mem {
		if b != 0 {
			return false
		}
	}
	return true
}

// jsonField is a field of a struct that fromJSON may set directly.
type jsonField struct {
	index int
	// unmarshaler is whether the field has its own UnmarshalJSON, text whether it has
	// UnmarshalText (and not UnmarshalJSON), which JSON then uses for strings.
	unmarshaler, text bool
}

// jsonFields maps the JSON names of t's fields that fromJSON may set directly to
// them, or is nil when t has an embedded field (whose promoted fields encoding/json
// matches by rules fromJSON does not repeat). A name two fields share, or with the
// ",string" option, is left out: JSON decodes those.
func jsonFields(t reflect.Type) map[string]jsonField {
	if byName, ok := jsonFieldIndexes.Load(t); ok {
		return byName.(map[string]jsonField)
	}
	byName := map[string]jsonField{}
	twice := map[string]bool{}
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			byName = nil
			break
		}
		tag, ok := sf.Tag.Lookup("json")
		if !ok || !sf.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" || name == "-" && opts == "" || slices.Contains(strings.Split(opts, ","), "string") {
			twice[name] = true
			continue
		}
		if _, dup := byName[name]; dup {
			twice[name] = true
		}
		pt := reflect.PointerTo(sf.Type)
		u := pt.Implements(jsonUnmarshaler)
		byName[name] = jsonField{index: i, unmarshaler: u, text: !u && pt.Implements(textUnmarshaler)}
	}
	for name := range twice {
		delete(byName, name)
	}
	jsonFieldIndexes.Store(t, byName)
	return byName
}

// jsonFieldIndexes caches jsonFields by struct type.
var jsonFieldIndexes sync.Map

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	stringSlice     = reflect.TypeFor[[]string]()
	stringMap       = reflect.TypeFor[map[string]string]()
	jsonNumber      = reflect.TypeFor[json.Number]() // a string JSON checks is a number
)

// assign sets f to x as encoding/json would decode x's JSON into f, when that
// cannot fail and is done without JSON, and reports whether it did. When it reports
// false, x is left to JSON, which sets f (a field with its own UnmarshalJSON may have
// been written to).
func (jf jsonField) assign(f reflect.Value, x any) bool {
	t := f.Type()
	if jf.unmarshaler {
		s, ok := x.(string)
		if !ok {
			return false
		}
		b, err := quoteJSON(s)
		if err != nil {
			return false
		}
		// On an error JSON decodes x into f again, and fromJSON then puts dst back.
		return f.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(b) == nil
	}
	if jf.text {
		return false
	}
	switch x := x.(type) {
	case string:
		if t.Kind() != reflect.String || t == jsonNumber || !utf8.ValidString(x) {
			return false
		}
		f.SetString(x)
	case bool:
		if t.Kind() != reflect.Bool {
			return false
		}
		f.SetBool(x)
	case int64:
		return setInt(f, x)
	case uint64:
		if x > math.MaxInt64 {
			if !f.CanUint() || f.OverflowUint(x) {
				return false
			}
			f.SetUint(x)
			return true
		}
		return setInt(f, int64(x))
	case []any:
		if t != stringSlice || !f.IsNil() {
			return false
		}
		out := make([]string, len(x))
		for i, e := range x {
			s, ok := e.(string)
			if !ok || !utf8.ValidString(s) {
				return false
			}
			out[i] = s
		}
		*f.Addr().Interface().(*[]string) = out // no interface holding a copy of the slice
	case map[string]string:
		if t != stringMap || !f.IsNil() {
			return false
		}
		for k, s := range x {
			if !utf8.ValidString(k) || !utf8.ValidString(s) {
				return false
			}
		}
		*f.Addr().Interface().(*map[string]string) = maps.Clone(x)
	default:
		return false
	}
	return true
}

// quoteJSON is json.Marshal(s), without its work when s is plain ASCII that JSON
// writes as it is (no quote, backslash, control character, or <, > and &, which it
// escapes for HTML).
func quoteJSON(s string) ([]byte, error) {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return json.Marshal(s)
		}
	}
	b := make([]byte, 0, len(s)+2)
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"'), nil
}

// setInt sets f, a field of a whole-number kind, to n when n fits it.
func setInt(f reflect.Value, n int64) bool {
	switch {
	case f.CanInt() && !f.OverflowInt(n):
		f.SetInt(n)
	case f.CanUint() && n >= 0 && !f.OverflowUint(uint64(n)):
		f.SetUint(uint64(n))
	default:
		return false
	}
	return true
}

// fromJSONOnly decodes the JSON of m into dst strictly, as the server does.
func fromJSONOnly(m map[string]any, dst any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode config: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return fmt.Errorf("decode config: %w", err)
	}
	return nil
}

// rangeString renders a range's start as file:line:col.
func rangeString(r hcl.Range) string {
	return fmt.Sprintf("%s:%d:%d", r.Filename, r.Start.Line, r.Start.Column)
}
