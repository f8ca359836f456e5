package subject

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
)

// Partition returns the partition the server stores subject in under a stream subject
// transform with source src and destination {{partition(n,key...)}}: the FNV-1a 32 hash
// of the source tokens at the key's wildcard positions concatenated without a
// separator (the whole subject when key is empty), mod n. It matches
// subjectTransform.getHashPartition of nats-server v2.15.3.
func Partition(src, subject string, n int, key ...int) (int, error) {
	if n < 1 {
		return 0, fmt.Errorf("partitions must be at least 1, got %d", n)
	}
	if !server.IsValidLiteralSubject(subject) {
		return 0, fmt.Errorf("subject %q is not a valid literal subject", subject)
	}
	if src == "" {
		src = ">"
	}
	if !server.SubjectMatchesFilter(subject, src) {
		return 0, fmt.Errorf("subject %q does not match the mapping source %q", subject, src)
	}
	toks := strings.Split(subject, ".")
	var hashed []byte
	if len(key) == 0 {
		hashed = []byte(subject)
	} else {
		pos := wildcardPositions(src)
		for _, k := range key {
			if k < 1 || k > len(pos) {
				return 0, fmt.Errorf("key index %d is out of range: source %q has %d wildcards", k, src, len(pos))
			}
			hashed = append(hashed, toks[pos[k-1]]...)
		}
	}
	h := fnv.New32a()
	_, _ = h.Write(hashed)
	return int(h.Sum32() % uint32(n)), nil
}

// wildcardPositions returns the token positions of the `*` wildcards of a subject, in order.
func wildcardPositions(subject string) []int {
	var pos []int
	for i, t := range strings.Split(subject, ".") {
		if t == "*" {
			pos = append(pos, i)
		}
	}
	return pos
}

// defaultDestination is the destination natsplan writes for a subject_mapping without
// one: the partition number as the first token, then the source with each `*` replaced
// by its {{wildcard(i)}} and a trailing `>` kept, the layout orbit.go consumer groups
// expect.
func defaultDestination(src string, n int, key []int) string {
	args := []string{strconv.Itoa(n)}
	for _, k := range key {
		args = append(args, strconv.Itoa(k))
	}
	toks := []string{"{{partition(" + strings.Join(args, ",") + ")}}"}
	w := 0
	for _, t := range strings.Split(src, ".") {
		if t == "*" {
			w++
			t = fmt.Sprintf("{{wildcard(%d)}}", w)
		}
		toks = append(toks, t)
	}
	return strings.Join(toks, ".")
}
