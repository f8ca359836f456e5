package testkit

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

var (
	metricName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
	labelName  = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
)

// Series is one sample of an exposition: the metric name, its labels in the order
// written, and the value.
type Series struct {
	Name   string
	Labels [][2]string
	Value  float64
}

// Label returns the value of the label name, and whether the series has it.
func (s Series) Label(name string) (string, bool) {
	for _, l := range s.Labels {
		if l[0] == name {
			return l[1], true
		}
	}
	return "", false
}

// ParseExposition checks text strictly against the Prometheus text exposition format
// (version 0.0.4) as natsplan writes it, and returns its samples in order. It refuses:
// a line that is neither a sample nor a # HELP or # TYPE line, a blank line, a missing
// final line feed; an invalid metric or label name, a repeated label, an escape other
// than \\, \" and \n in a label value (\\ and \n in HELP), an unparsable value; a second
// HELP or TYPE line for a family, a TYPE after the family's first sample, an unknown
// type; a family whose lines are not one contiguous group; a sample whose name does
// not belong to the family being written; and the same series (name and labels) twice.
func ParseExposition(text string) ([]Series, error) {
	if text == "" {
		return nil, nil
	}
	if !strings.HasSuffix(text, "\n") {
		return nil, fmt.Errorf("the exposition does not end with a line feed")
	}
	type fam struct {
		help, typ, sampled bool
		typeName           string
	}
	fams := map[string]*fam{}
	var current string // the family whose lines are being written
	closed := map[string]bool{}
	enter := func(name string) (*fam, error) {
		if name != current {
			if closed[name] {
				return nil, fmt.Errorf("the lines of family %s are not one group: it appears again after %s", name, current)
			}
			if current != "" {
				closed[current] = true
			}
			current = name
		}
		f := fams[name]
		if f == nil {
			f = &fam{}
			fams[name] = f
		}
		return f, nil
	}
	seen := map[string]bool{}
	var out []Series
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		n := i + 1
		fail := func(format string, a ...any) ([]Series, error) {
			return nil, fmt.Errorf("line %d %q: %s", n, line, fmt.Sprintf(format, a...))
		}
		switch {
		case line == "":
			return fail("blank line")
		case strings.HasPrefix(line, "#"):
			fields := strings.SplitN(line, " ", 4)
			if len(fields) < 4 || fields[0] != "#" || (fields[1] != "HELP" && fields[1] != "TYPE") {
				return fail("a comment that is neither # HELP NAME TEXT nor # TYPE NAME TYPE")
			}
			name := fields[2]
			if !metricName.MatchString(name) {
				return fail("invalid metric name %q", name)
			}
			f, err := enter(name)
			if err != nil {
				return fail("%v", err)
			}
			if fields[1] == "HELP" {
				if f.help {
					return fail("a second HELP line for %s", name)
				}
				if _, err := unescape(fields[3], false); err != nil {
					return fail("HELP text: %v", err)
				}
				f.help = true
				continue
			}
			if f.typ {
				return fail("a second TYPE line for %s", name)
			}
			if f.sampled {
				return fail("TYPE after a sample of %s", name)
			}
			if !slices.Contains([]string{"counter", "gauge", "histogram", "summary", "untyped"}, fields[3]) {
				return fail("unknown type %q", fields[3])
			}
			f.typ, f.typeName = true, fields[3]
		default:
			s, err := parseSample(line)
			if err != nil {
				return fail("%v", err)
			}
			family := s.Name
			if f := fams[current]; f != nil && current != s.Name {
				suffixes := map[string][]string{"histogram": {"_bucket", "_sum", "_count"}, "summary": {"_sum", "_count"}}[f.typeName]
				for _, suf := range suffixes {
					if s.Name == current+suf {
						family = current
					}
				}
			}
			f, err := enter(family)
			if err != nil {
				return fail("%v", err)
			}
			f.sampled = true
			labels := slices.Clone(s.Labels)
			slices.SortFunc(labels, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
			key := fmt.Sprint(s.Name, labels)
			if seen[key] {
				return fail("the same series twice")
			}
			seen[key] = true
			out = append(out, s)
		}
	}
	return out, nil
}

// parseSample parses NAME{LABEL="VALUE",...} VALUE [TIMESTAMP].
func parseSample(line string) (Series, error) {
	var s Series
	end := strings.IndexAny(line, "{ ")
	if end < 0 {
		return s, fmt.Errorf("a sample without a value")
	}
	s.Name = line[:end]
	if !metricName.MatchString(s.Name) {
		return s, fmt.Errorf("invalid metric name %q", s.Name)
	}
	rest := line[end:]
	if strings.HasPrefix(rest, "{") {
		rest = rest[1:]
		names := map[string]bool{}
		for !strings.HasPrefix(rest, "}") {
			eq := strings.Index(rest, `="`)
			if eq < 0 {
				return s, fmt.Errorf("a label without =\"VALUE\"")
			}
			name := rest[:eq]
			if !labelName.MatchString(name) || strings.HasPrefix(name, "__") {
				return s, fmt.Errorf("invalid label name %q", name)
			}
			if names[name] {
				return s, fmt.Errorf("label %s twice", name)
			}
			names[name] = true
			rest = rest[eq+2:]
			closing := -1
			for i := 0; i < len(rest); i++ {
				if rest[i] == '\\' {
					i++
					continue
				}
				if rest[i] == '"' {
					closing = i
					break
				}
			}
			if closing < 0 {
				return s, fmt.Errorf("label %s: an unterminated value", name)
			}
			value, err := unescape(rest[:closing], true)
			if err != nil {
				return s, fmt.Errorf("label %s: %v", name, err)
			}
			s.Labels = append(s.Labels, [2]string{name, value})
			rest = rest[closing+1:]
			switch {
			case strings.HasPrefix(rest, ","):
				rest = rest[1:]
			case !strings.HasPrefix(rest, "}"):
				return s, fmt.Errorf("label %s: neither , nor } after the value", name)
			}
		}
		rest = rest[1:]
	}
	if !strings.HasPrefix(rest, " ") {
		return s, fmt.Errorf("no single space before the value")
	}
	fields := strings.Split(rest[1:], " ")
	if len(fields) > 2 || fields[0] == "" {
		return s, fmt.Errorf("expected VALUE [TIMESTAMP] after the labels")
	}
	v, err := parseValue(fields[0])
	if err != nil {
		return s, err
	}
	s.Value = v
	if len(fields) == 2 {
		if _, err := strconv.ParseInt(fields[1], 10, 64); err != nil {
			return s, fmt.Errorf("timestamp %q is not milliseconds", fields[1])
		}
	}
	return s, nil
}

func parseValue(v string) (float64, error) {
	switch v {
	case "+Inf", "-Inf", "NaN":
	default:
		if strings.ContainsAny(v, "_xXpP") || strings.EqualFold(v, "inf") || strings.EqualFold(v, "nan") {
			return 0, fmt.Errorf("value %q is not a Go float as the format writes it", v)
		}
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, fmt.Errorf("value %q is not a number", v)
	}
	return f, nil
}

// unescape reads an escaped label value (quote true: \\, \" and \n) or HELP text
// (\\ and \n), refusing any other escape, a raw line feed, and in a label value a raw
// double quote.
func unescape(s string, quote bool) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\n':
			return "", fmt.Errorf("a raw line feed")
		case c == '"' && quote:
			return "", fmt.Errorf("an unescaped double quote")
		case c != '\\':
			b.WriteByte(c)
			continue
		}
		if i+1 == len(s) {
			return "", fmt.Errorf("a lone backslash at the end")
		}
		i++
		switch s[i] {
		case '\\':
			b.WriteByte('\\')
		case 'n':
			b.WriteByte('\n')
		case '"':
			if !quote {
				return "", fmt.Errorf(`\" in HELP text, which only escapes \\ and \n`)
			}
			b.WriteByte('"')
		default:
			return "", fmt.Errorf(`the escape \%c`, s[i])
		}
	}
	return b.String(), nil
}
