package render

import (
	"fmt"
	"sort"
	"strconv"
)

// nameRun is a name, or a numbered run of names written as one range.
type nameRun struct {
	text  string
	count int
}

// compressRuns writes names that differ only in a trailing number as shell-style
// ranges, "worker-{0..63}" for worker-0 to worker-63 (the width of zero-padded
// numbers is kept), so that generated consumers of a group take one entry. Runs of
// fewer than three stay as names. Names without a number come first, in their order.
func compressRuns(names []string) []nameRun {
	type key struct {
		stem  string
		width int // digits of a zero-padded number; 0 when unpadded
	}
	nums := map[key][]int{}
	var keys []key
	var out []nameRun
	for _, n := range names {
		stem, digits := splitNumber(n)
		v, err := strconv.Atoi(digits)
		if digits == "" || err != nil {
			out = append(out, nameRun{n, 1})
			continue
		}
		k := key{stem: stem}
		if len(digits) > 1 && digits[0] == '0' {
			k.width = len(digits)
		}
		if _, ok := nums[k]; !ok {
			keys = append(keys, k)
		}
		nums[k] = append(nums[k], v)
	}
	for _, k := range keys {
		vs := nums[k]
		sort.Ints(vs)
		format := func(v int) string { return fmt.Sprintf("%s%0*d", k.stem, k.width, v) }
		for i := 0; i < len(vs); {
			j := i
			for j+1 < len(vs) && vs[j+1] == vs[j]+1 {
				j++
			}
			if j-i+1 >= 3 {
				out = append(out, nameRun{fmt.Sprintf("%s{%0*d..%0*d}", k.stem, k.width, vs[i], k.width, vs[j]), j - i + 1})
			} else {
				for m := i; m <= j; m++ {
					out = append(out, nameRun{format(vs[m]), 1})
				}
			}
			i = j + 1
		}
	}
	return out
}

// splitNumber splits "worker-007" into "worker-" and "007".
func splitNumber(s string) (string, string) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	return s[:i], s[i:]
}
