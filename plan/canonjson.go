package plan

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/natsplan/natsplan/model"
)

// Hash's canonical JSON is json.Marshal of the generic form of v (keys sorted, numbers
// exact) with server metadata stripped. Building that generic form was most of a
// no-change plan's hashing time (BenchmarkPlanPhases), so canonicalJSON rewrites the
// marshalled bytes directly: it sorts object keys and strips metadata, copying numbers
// and plain strings as they are, which is what a decode and re-encode would write back.
// Anything whose round trip is not the identity (an escaped or unusual string, a
// duplicate key) is re-encoded exactly, or makes it give up so Hash takes the generic
// path; FuzzCanonicalJSON checks the two agree.

// errNotCanonical makes Hash fall back to the generic path.
var errNotCanonical = errors.New("not canonicalisable byte-wise")

// canonMode is what stripping applies where a value is written.
type canonMode int

const (
	// canonNormal strips the server keys of any "metadata" object member.
	canonNormal canonMode = iota
	// canonMeta is a "metadata" object: its server keys go, its values are left alone.
	canonMeta
	// canonRaw is inside a metadata value: nothing is stripped.
	canonRaw
)

// canonicalJSON returns the canonical form of in, which must be valid JSON (as
// json.Marshal writes it), or errNotCanonical.
func canonicalJSON(in []byte) ([]byte, error) {
	return canonicalValue(in, canonNormal)
}

// canonicalValue is canonicalJSON of a value written where mode applies, so that a
// document can be canonicalised one member at a time (desiredHash).
func canonicalValue(in []byte, mode canonMode) ([]byte, error) {
	c := canonWriter{in: in, out: make([]byte, 0, len(in))}
	c.skipSpace()
	if err := c.value(mode); err != nil {
		return nil, err
	}
	if c.skipSpace(); c.pos != len(in) {
		return nil, errNotCanonical
	}
	return c.out, nil
}

// canonWriter reads in from pos and appends the canonical form to out.
type canonWriter struct {
	in  []byte
	pos int
	out []byte
}

func (c *canonWriter) skipSpace() {
	for c.pos < len(c.in) {
		switch c.in[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
		default:
			return
		}
	}
}

// value copies one value.
func (c *canonWriter) value(mode canonMode) error {
	if c.pos >= len(c.in) {
		return errNotCanonical
	}
	switch c.in[c.pos] {
	case '{':
		return c.object(mode)
	case '[':
		return c.array(mode)
	case '"':
		_, err := c.str()
		return err
	}
	// A number or a literal: copied as it is, which is how json.Number and the
	// literals re-encode.
	start := c.pos
	for c.pos < len(c.in) && !strings.ContainsRune(",]} \t\n\r", rune(c.in[c.pos])) {
		c.pos++
	}
	c.out = append(c.out, c.in[start:c.pos]...)
	return nil
}

func (c *canonWriter) array(mode canonMode) error {
	c.pos++ // [
	c.out = append(c.out, '[')
	for first := true; ; first = false {
		c.skipSpace()
		if c.pos < len(c.in) && c.in[c.pos] == ']' {
			c.pos++
			c.out = append(c.out, ']')
			return nil
		}
		if !first {
			if c.pos >= len(c.in) || c.in[c.pos] != ',' {
				return errNotCanonical
			}
			c.pos++
			c.out = append(c.out, ',')
			c.skipSpace()
		}
		if err := c.value(mode); err != nil {
			return err
		}
	}
}

// member is one written member of an object: its decoded key and where its bytes are.
type member struct {
	key        string
	start, end int
}

// object writes the members, then reorders them by key. Stripping follows
// stripServerMeta: a "metadata" object member loses its server keys and goes when
// nothing is left; the values inside it are not looked into.
func (c *canonWriter) object(mode canonMode) error {
	c.pos++ // {
	base := len(c.out)
	var members []member
	for first := true; ; first = false {
		c.skipSpace()
		if c.pos < len(c.in) && c.in[c.pos] == '}' {
			c.pos++
			break
		}
		if !first {
			if c.pos >= len(c.in) || c.in[c.pos] != ',' {
				return errNotCanonical
			}
			c.pos++
			c.skipSpace()
		}
		start := len(c.out)
		key, err := c.str()
		if err != nil {
			return err
		}
		c.skipSpace()
		if c.pos >= len(c.in) || c.in[c.pos] != ':' {
			return errNotCanonical
		}
		c.pos++
		c.out = append(c.out, ':')
		c.skipSpace()
		valMode, valStart := canonRaw, len(c.out)
		switch {
		case mode == canonNormal && key == "metadata" && c.pos < len(c.in) && c.in[c.pos] == '{':
			valMode = canonMeta
		case mode == canonNormal:
			valMode = canonNormal
		}
		if err := c.value(valMode); err != nil {
			return err
		}
		if mode == canonMeta && strings.HasPrefix(key, model.ServerMetaPrefix) ||
			valMode == canonMeta && string(c.out[valStart:]) == "{}" {
			c.out = c.out[:start]
			continue
		}
		members = append(members, member{key, start, len(c.out)})
	}
	slices.SortStableFunc(members, func(a, b member) int { return strings.Compare(a.key, b.key) })
	for i := 1; i < len(members); i++ {
		if members[i].key == members[i-1].key {
			return errNotCanonical // a decode keeps the last one; leave that to it
		}
	}
	written := slices.Clone(c.out[base:])
	c.out = append(c.out[:base], '{')
	for i, m := range members {
		if i > 0 {
			c.out = append(c.out, ',')
		}
		c.out = append(c.out, written[m.start-base:m.end-base]...)
	}
	c.out = append(c.out, '}')
	return nil
}

// str copies a string and returns its decoded value. A string json.Marshal would write
// differently from how it reads is re-encoded by json.Marshal itself.
func (c *canonWriter) str() (string, error) {
	if c.pos >= len(c.in) || c.in[c.pos] != '"' {
		return "", errNotCanonical
	}
	start := c.pos
	plain := true
	c.pos++
	for {
		if c.pos >= len(c.in) {
			return "", errNotCanonical
		}
		b := c.in[c.pos]
		if b == '"' {
			break
		}
		if b == '\\' {
			plain = false
			c.pos++ // the escaped byte, so an escaped quote does not end the string
		} else if b < 0x20 || b == '<' || b == '>' || b == '&' || b >= utf8.RuneSelf {
			plain = false
		}
		c.pos++
	}
	c.pos++
	raw := c.in[start:c.pos]
	if plain {
		c.out = append(c.out, raw...)
		return string(raw[1 : len(raw)-1]), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", errNotCanonical
	}
	enc, err := json.Marshal(s)
	if err != nil {
		return "", errNotCanonical
	}
	c.out = append(c.out, enc...)
	return s, nil
}
