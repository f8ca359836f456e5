package schema

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/agext/levenshtein"
)

// durationToken is one number-and-unit part of a duration such as "1d12h".
var durationToken = regexp.MustCompile(`^([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h|d)`)

// parseDuration parses Go duration syntax extended with a "d" (24h) unit: "90s",
// "1h30m", "7d", "1d12h". Negative durations are refused: no JetStream field takes one.
func parseDuration(s string) (time.Duration, error) {
	if d, ok := goDuration(s); ok {
		return d, nil
	}
	return parseDurationTokens(s)
}

// goDuration reads s when it is a duration in Go's own syntax ("30s", "1h30m"), as
// parseDurationTokens would, without its regular expression: most durations are
// written so. It leaves to parseDurationTokens a negative one (which it refuses), the
// "d" unit, surrounding spaces and everything time.ParseDuration refuses.
func goDuration(s string) (time.Duration, bool) {
	if strings.HasPrefix(s, "-") {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	return d, err == nil
}

// parseDurationTokens is parseDuration for every string.
func parseDurationTokens(s string) (time.Duration, error) {
	in := strings.TrimSpace(s)
	if in == "" {
		return 0, fmt.Errorf("empty duration")
	}
	if in == "0" {
		return 0, nil
	}
	if strings.HasPrefix(in, "-") {
		return 0, fmt.Errorf("negative duration %q", s)
	}
	var total time.Duration
	rest := strings.TrimPrefix(in, "+")
	for rest != "" {
		m := durationToken.FindStringSubmatch(rest)
		if m == nil {
			return 0, fmt.Errorf("invalid duration %q", s)
		}
		var part time.Duration
		if m[2] == "d" {
			f, err := strconv.ParseFloat(m[1], 64)
			if err != nil || f*24*float64(time.Hour) > math.MaxInt64 {
				return 0, fmt.Errorf("invalid duration %q", s)
			}
			part = time.Duration(f * 24 * float64(time.Hour))
		} else {
			d, err := time.ParseDuration(m[0])
			if err != nil {
				return 0, fmt.Errorf("invalid duration %q", s)
			}
			part = d
		}
		if total > math.MaxInt64-part {
			return 0, fmt.Errorf("duration %q is too long", s)
		}
		total += part
		rest = rest[len(m[0]):]
	}
	return total, nil
}

// sizeUnits maps a lower-case size unit to its number of bytes.
var sizeUnits = map[string]int64{
	"": 1, "b": 1,
	"kb": 1000, "mb": 1000 * 1000, "gb": 1000 * 1000 * 1000, "tb": 1000 * 1000 * 1000 * 1000,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
}

var sizePattern = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)$`)

// parseSize parses a byte size: a whole number, or a number with a unit B, KB, MB,
// GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024), in any case.
// "-1" is returned as -1 for fields where the server reads it as unlimited.
func parseSize(s string) (int64, error) {
	in := strings.TrimSpace(s)
	if in == "-1" {
		return -1, nil
	}
	m := sizePattern.FindStringSubmatch(in)
	if m == nil {
		return 0, fmt.Errorf("invalid size %q", s)
	}
	unit, ok := sizeUnits[strings.ToLower(m[2])]
	if !ok {
		return 0, fmt.Errorf("unknown size unit %q in %q", m[2], s)
	}
	n, ok := new(big.Rat).SetString(m[1])
	if !ok {
		return 0, fmt.Errorf("invalid size %q", s)
	}
	n.Mul(n, new(big.Rat).SetInt64(unit))
	if !n.IsInt() {
		return 0, fmt.Errorf("size %q is not a whole number of bytes", s)
	}
	if !n.Num().IsInt64() {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return n.Num().Int64(), nil
}

// didYouMean returns a " Did you mean "x"?" suffix naming the closest candidate, or "".
func didYouMean(given string, candidates []string) string {
	best, bestDist := "", 1<<30
	for _, c := range candidates {
		d := levenshtein.Distance(given, c, nil)
		if d < bestDist {
			best, bestDist = c, d
		}
	}
	if best == "" || bestDist > 3 && bestDist > len(given)/2 {
		return ""
	}
	return fmt.Sprintf(" Did you mean %q?", best)
}

// quoteList renders values as "a", "b" or "c".
func quoteList(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = strconv.Quote(v)
	}
	if len(q) < 2 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
