package subject

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
)

// PartitionMapping is a validated partitioned subject transform: the stream's
// subject_transform, with exactly one {{partition()}} token in its destination.
type PartitionMapping struct {
	Source      string
	Destination string
	Partitions  int
	Key         []int
	// dtoks are the destination tokens; part is the index of the partition token.
	dtoks []string
	part  int
}

// MappingError is a subject_mapping that breaks the server's or natsplan's rules
// (NP201). Field is the attribute at fault: source, partitions, key or destination.
// ParseMapping returns it as an error; errors.As recovers the field.
type MappingError struct {
	Field string
	Msg   string
}

func (e *MappingError) Error() string { return e.Msg }

// mapFunc is a destination token's mapping function, lower-cased without spaces
// ("partition", "wildcard", ...), with its raw arguments; "" for a literal token.
func mapFunc(tok string) (name string, args []string) {
	if len(tok) > 1 && tok[0] == '$' {
		if _, err := strconv.Atoi(tok[1:]); err == nil {
			return "wildcard", []string{tok[1:]}
		}
		return "", nil
	}
	if !strings.HasPrefix(tok, "{{") || !strings.HasSuffix(tok, "}}") {
		return "", nil
	}
	body := strings.TrimSpace(tok[2 : len(tok)-2])
	open := strings.IndexByte(body, '(')
	if open < 0 || !strings.HasSuffix(body, ")") {
		return strings.ToLower(body), nil
	}
	name = strings.ToLower(strings.ReplaceAll(body[:open], " ", ""))
	for _, a := range strings.Split(body[open+1:len(body)-1], ",") {
		args = append(args, strings.TrimSpace(a))
	}
	return name, args
}

// multiToken lists the mapping functions that can turn one source token into several,
// so a lane's subject space could not be written as a filter.
var multiToken = []string{"split", "splitfromleft", "splitfromright", "slicefromleft", "slicefromright"}

// ParseMapping validates a subject_mapping with the server's own mapping validator and
// natsplan's stricter rules: at least one partition, key indexes within the source's
// wildcards, no literal source, and a destination holding exactly one partition()
// whose arguments are partitions and key. dest "" means defaultDestination. The
// error is a *MappingError.
func ParseMapping(src, dest string, n int, key []int) (*PartitionMapping, error) {
	if src == "" || !server.IsValidSubject(src) {
		return nil, &MappingError{"source", fmt.Sprintf("source %q is not a valid subject", src)}
	}
	nwc := len(wildcardPositions(src))
	if nwc == 0 && !strings.HasSuffix(src, ">") {
		return nil, &MappingError{"source", fmt.Sprintf("source %q is a literal subject: every message would land in one partition; use a wildcard for the key, e.g. %q", src, src+".*")}
	}
	if n < 1 {
		return nil, &MappingError{"partitions", fmt.Sprintf("partitions is %d: it must be at least 1", n)}
	}
	seen := map[int]bool{}
	for _, k := range key {
		if k < 1 || k > nwc {
			return nil, &MappingError{"key", fmt.Sprintf("key index %d is out of range: source %q has %d wildcard(s), numbered from 1", k, src, nwc)}
		}
		if seen[k] {
			return nil, &MappingError{"key", fmt.Sprintf("key lists wildcard %d twice", k)}
		}
		seen[k] = true
	}
	field := "destination"
	if dest == "" {
		dest, field = defaultDestination(src, n, key), "source"
	}
	if err := server.ValidateMapping(src, dest); err != nil {
		return nil, &MappingError{field, fmt.Sprintf("the server refuses the transform %q -> %q: %v", src, dest, err)}
	}
	pm := &PartitionMapping{Source: src, Destination: dest, Partitions: n, Key: key, dtoks: strings.Split(dest, "."), part: -1}
	for i, t := range pm.dtoks {
		name, args := mapFunc(t)
		switch {
		case name == "partition":
			if pm.part >= 0 {
				return nil, &MappingError{"destination", fmt.Sprintf("destination %q has more than one partition(): a message must have one lane", dest)}
			}
			pm.part = i
			want := []string{strconv.Itoa(n)}
			for _, k := range key {
				want = append(want, strconv.Itoa(k))
			}
			if !slices.Equal(args, want) {
				return nil, &MappingError{"destination", fmt.Sprintf("destination token %s disagrees with partitions = %d and key = %v: write {{partition(%s)}}", t, n, key, strings.Join(want, ","))}
			}
		case slices.Contains(multiToken, name):
			return nil, &MappingError{"destination", fmt.Sprintf("destination token %s can produce several tokens, so a lane's subjects can not be filtered; use wildcard(), left() or right()", t)}
		}
	}
	if pm.part < 0 {
		return nil, &MappingError{"destination", fmt.Sprintf("destination %q has no {{partition(%d,...)}} token", dest, n)}
	}
	return pm, nil
}

// Space is the subject space of partition p as stored: the destination with the
// partition token replaced by p and every other function or wildcard token by `*`.
func (pm *PartitionMapping) Space(p int) string {
	out := make([]string, len(pm.dtoks))
	for i, t := range pm.dtoks {
		switch name, _ := mapFunc(t); {
		case i == pm.part:
			out[i] = strconv.Itoa(p)
		case name != "":
			out[i] = "*"
		default:
			out[i] = t
		}
	}
	return strings.Join(out, ".")
}

// Spaces returns the subject space of every partition, indexed by partition.
func (pm *PartitionMapping) Spaces() []string {
	out := make([]string, pm.Partitions)
	for p := range out {
		out[p] = pm.Space(p)
	}
	return out
}

// PartitionOf returns the partition a stored subject belongs to, or -1 when it is not
// in any partition's space.
func (pm *PartitionMapping) PartitionOf(stored string) int {
	toks := strings.Split(stored, ".")
	if pm.part >= len(toks) {
		return -1
	}
	p, err := strconv.Atoi(toks[pm.part])
	if err != nil || p < 0 || p >= pm.Partitions || !server.SubjectMatchesFilter(stored, pm.Space(p)) {
		return -1
	}
	return p
}

// Locate returns the partition a published subject lands in and the subject the
// server stores it under, computed by the server's own transform code.
func (pm *PartitionMapping) Locate(subject string) (int, string, error) {
	p, err := Partition(pm.Source, subject, pm.Partitions, pm.Key...)
	if err != nil {
		return 0, "", err
	}
	tr, err := server.NewSubjectTransform(pm.Source, pm.Destination)
	if err != nil {
		return 0, "", fmt.Errorf("transform %s -> %s: %w", pm.Source, pm.Destination, err)
	}
	stored, err := tr.Match(subject)
	if err != nil {
		return 0, "", fmt.Errorf("subject %q: %w", subject, err)
	}
	return p, stored, nil
}

// Transform returns the stream subject_transform that carries the mapping.
func (pm *PartitionMapping) Transform() *server.SubjectTransformConfig {
	return &server.SubjectTransformConfig{Source: pm.Source, Destination: pm.Destination}
}

// LiveMapping recognises a partitioned transform on a live stream, so plan can tell
// when its partition count changes. It returns nil when tr is not one.
func LiveMapping(tr *server.SubjectTransformConfig) *PartitionMapping {
	if tr == nil || tr.Destination == "" {
		return nil
	}
	for _, t := range strings.Split(tr.Destination, ".") {
		name, args := mapFunc(t)
		if name != "partition" || len(args) == 0 {
			continue
		}
		n, err := strconv.Atoi(args[0])
		if err != nil {
			return nil
		}
		var key []int
		for _, a := range args[1:] {
			k, err := strconv.Atoi(a)
			if err != nil {
				return nil
			}
			key = append(key, k)
		}
		pm, err := ParseMapping(tr.Source, tr.Destination, n, key)
		if err != nil {
			return nil
		}
		return pm
	}
	return nil
}
