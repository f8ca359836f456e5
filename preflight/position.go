package preflight

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan"
)

// changedFirst orders the attributes a refusal names so that those an update changes
// come first: of "max_age" and "duplicate_window", the one the update lowered is the
// one to point at.
func changedFirst(paths []string, ch *plan.Change) []string {
	if len(ch.Fields) == 0 || len(paths) < 2 {
		return paths
	}
	changed := func(p string) bool {
		top, _, _ := strings.Cut(listIndex.ReplaceAllString(p, ""), ".")
		for _, f := range ch.Fields {
			if ftop, _, _ := strings.Cut(f.Path, "."); ftop == top {
				return true
			}
		}
		return false
	}
	out := slices.Clone(paths)
	slices.SortStableFunc(out, func(a, b string) int {
		switch ca, cb := changed(a), changed(b); {
		case ca && !cb:
			return -1
		case cb && !ca:
			return 1
		}
		return 0
	})
	return out
}

// hint names the attributes to change as the language spells them ("source.filter_subject"),
// at most two, leaving out a block whose attribute is already named.
func hint(paths []string) string {
	var names []string
	for _, p := range paths {
		n := strings.NewReplacer("sources[]", "source", "sources", "source", "subject_transforms[]", "subject_transform", "subject_transforms", "subject_transform", "[]", "").Replace(p)
		if !slices.ContainsFunc(names, func(have string) bool { return have == n || strings.HasPrefix(have, n+".") }) {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return "; change " + strings.Join(names[:min(2, len(names))], " or ")
}

// rangeOf renders the position of the first of paths the declaration sets, else the
// block's. A path matches an attribute or a block of that name and whatever is inside
// it; "[]" matches any element of a list ("sources[].filter_subject"). Of several
// matches the first in the file wins.
func rangeOf(d *model.Decl, paths []string) string {
	if d == nil {
		return ""
	}
	for _, p := range paths {
		var hits []hcl.Range
		for k, rg := range d.Fields {
			k = listIndex.ReplaceAllString(k, "[]")
			if k == p || strings.HasPrefix(k, p+".") || strings.HasPrefix(k, p+"[") {
				hits = append(hits, rg)
			}
		}
		if len(hits) > 0 {
			slices.SortFunc(hits, func(a, b hcl.Range) int { return a.Start.Byte - b.Start.Byte })
			return pos(hits[0])
		}
	}
	return pos(d.Range)
}

// listIndex is a list index in a field path ("sources[2]").
var listIndex = regexp.MustCompile(`\[\d+\]`)

func pos(rg hcl.Range) string {
	if rg.Filename == "" {
		return ""
	}
	return fmt.Sprintf("%s:%d:%d", rg.Filename, rg.Start.Line, rg.Start.Column)
}
