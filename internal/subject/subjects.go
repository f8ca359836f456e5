package subject

import (
	"slices"
	"strconv"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
)

// Intersect returns the subject pattern matching exactly the subjects both a and b
// match, and false when no subject matches both.
func Intersect(a, b string) (string, bool) {
	if !server.SubjectsCollide(a, b) {
		return "", false
	}
	ta, tb := strings.Split(a, "."), strings.Split(b, ".")
	var out []string
	for i := 0; ; i++ {
		switch {
		case i == len(ta) && i == len(tb):
			return strings.Join(out, "."), true
		case i < len(ta) && ta[i] == ">":
			if i == len(tb) {
				return "", false
			}
			return strings.Join(append(out, tb[i:]...), "."), true
		case i < len(tb) && tb[i] == ">":
			if i == len(ta) {
				return "", false
			}
			return strings.Join(append(out, ta[i:]...), "."), true
		case i == len(ta) || i == len(tb):
			return "", false
		case ta[i] == "*":
			out = append(out, tb[i])
		case tb[i] == "*" || ta[i] == tb[i]:
			out = append(out, ta[i])
		default:
			return "", false
		}
	}
}

// StoredSpaces returns patterns covering every subject a stream with these subjects
// and this subject_transform can store: transformed holds what the transform's source
// matches, stored transformed; passthrough the stream subjects stored as published
// (some of their subjects may be transformed too). Where a destination function can
// not be followed exactly the pattern widens (`*`, or `>` for functions that may emit
// several tokens), so the result never misses a stored subject.
func StoredSpaces(subjects []string, tr *server.SubjectTransformConfig) (transformed, passthrough []string) {
	if tr == nil || tr.Destination == "" {
		return nil, slices.Clone(subjects)
	}
	src := transformSource(tr)
	for _, s := range subjects {
		switch {
		case server.SubjectMatchesFilter(s, src):
			transformed = append(transformed, transformPattern(s, src, tr.Destination))
		case server.SubjectsCollide(s, src):
			in, _ := Intersect(s, src)
			transformed = append(transformed, transformPattern(in, src, tr.Destination))
			passthrough = append(passthrough, s)
		default:
			passthrough = append(passthrough, s)
		}
	}
	return transformed, passthrough
}

// FilterCanMatch reports whether a consumer filter can match any subject a stream with
// these subjects and transform stores. It errs towards true.
func FilterCanMatch(filter string, subjects []string, tr *server.SubjectTransformConfig) bool {
	transformed, passthrough := StoredSpaces(subjects, tr)
	for _, t := range transformed {
		if server.SubjectsCollide(filter, t) {
			return true
		}
	}
	// Every subject the filter matches is one the transform rewrites: none is stored as published.
	if tr != nil && tr.Destination != "" && server.SubjectMatchesFilter(filter, transformSource(tr)) {
		return false
	}
	for _, p := range passthrough {
		if server.SubjectsCollide(filter, p) {
			return true
		}
	}
	return false
}

// StoredFilter rewrites a filter written against published subjects into the stored
// subjects tr turns them into; false when tr does not transform what filter matches.
func StoredFilter(filter string, tr *server.SubjectTransformConfig) (string, bool) {
	if tr == nil || !server.SubjectMatchesFilter(filter, transformSource(tr)) {
		return "", false
	}
	return transformPattern(filter, transformSource(tr), tr.Destination), true
}

func transformSource(tr *server.SubjectTransformConfig) string {
	if tr.Source == "" {
		return ">"
	}
	return tr.Source
}

// transformPattern applies the transform src -> dest to a subject pattern s that src
// matches, keeping s's literal tokens where the destination copies them.
func transformPattern(s, src, dest string) string {
	stoks, srcToks := strings.Split(s, "."), strings.Split(src, ".")
	wpos := wildcardPositions(src)
	wildcard := func(arg string) (string, bool) {
		k, err := strconv.Atoi(arg)
		if err != nil || k < 1 || k > len(wpos) || wpos[k-1] >= len(stoks) {
			return "*", false
		}
		t := stoks[wpos[k-1]]
		return t, t != "*" && t != ">"
	}
	var out []string
	for _, t := range strings.Split(dest, ".") {
		name, args := mapFunc(t)
		switch {
		case t == ">":
			rest := stoks[min(len(srcToks)-1, len(stoks)):]
			if len(rest) == 0 {
				rest = []string{">"}
			}
			return strings.Join(append(out, rest...), ".")
		case name == "":
			out = append(out, t)
		case name == "wildcard" && len(args) == 1:
			v, _ := wildcard(args[0])
			out = append(out, v)
		case name == "partition":
			out = append(out, partitionPattern(s, src, args))
		case slices.Contains(multiToken, name):
			return strings.Join(append(out, ">"), ".")
		default:
			out = append(out, "*")
		}
	}
	return strings.Join(out, ".")
}

// partitionPattern is the partition token of a stored pattern: the partition number
// when every key token of s is literal, else `*`.
func partitionPattern(s, src string, args []string) string {
	if len(args) == 0 {
		return "*"
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 1 {
		return "*"
	}
	var key []int
	for _, a := range args[1:] {
		k, err := strconv.Atoi(a)
		if err != nil {
			return "*"
		}
		key = append(key, k)
	}
	if !server.IsValidLiteralSubject(s) && len(key) == 0 {
		return "*"
	}
	stoks, wpos := strings.Split(s, "."), wildcardPositions(src)
	lit := make([]string, len(stoks))
	copy(lit, stoks)
	for _, k := range key {
		if k < 1 || k > len(wpos) || wpos[k-1] >= len(stoks) || stoks[wpos[k-1]] == "*" || stoks[wpos[k-1]] == ">" {
			return "*"
		}
	}
	// Only key tokens are hashed, so the other wildcards may be any literal.
	for i, t := range lit {
		if t == "*" {
			lit[i] = "x"
		}
	}
	litSubj := strings.Join(lit, ".")
	if strings.HasSuffix(litSubj, ".>") || litSubj == ">" {
		litSubj = strings.TrimSuffix(litSubj, ">") + "x"
	}
	p, err := Partition(src, litSubj, n, key...)
	if err != nil {
		return "*"
	}
	return strconv.Itoa(p)
}

// ValidName reports whether name is a valid stream or consumer name, as the server checks it.
func ValidName(name string) bool {
	return name != "" && len(name) <= 255 && !strings.ContainsAny(name, " \t\r\n\f.*>\\/")
}
