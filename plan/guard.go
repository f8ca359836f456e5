package plan

import (
	"fmt"
	"strings"

	"github.com/natsplan/natsplan/model"
)

// TargetMismatchError is the refusal of the natsplan { expect {} } guard: the server
// read is not the one the files are meant for.
type TargetMismatchError struct {
	// Decl is where the expect block is ("shop.hcl:3:3"), or "".
	Decl string
	// Mismatches lists each expected field that differs, in field order.
	Mismatches []targetMismatch
}

// targetMismatch is one expected field and what the target reported.
type targetMismatch struct {
	Field    string
	Expected string
	Actual   string
}

// Error names every mismatch and what to do about it.
func (e *TargetMismatchError) Error() string {
	var b strings.Builder
	b.WriteString("wrong target: ")
	for i, m := range e.Mismatches {
		if i > 0 {
			b.WriteString(", ")
		}
		actual := m.Actual
		if actual == "" {
			actual = "none"
		} else {
			actual = fmt.Sprintf("%q", actual)
		}
		fmt.Fprintf(&b, "expected %s %q but connected to %s", m.Field, m.Expected, actual)
	}
	where := "the natsplan expect block"
	if e.Decl != "" {
		where += " at " + e.Decl
	}
	fmt.Fprintf(&b, "; nothing was read or changed: connect to the intended server (--server, --context, --js-domain) or fix %s", where)
	return b.String()
}

// CheckTarget enforces natsplan { expect { server, cluster, domain, account } }: every
// field the files set must equal the live target's. It returns nil when e is nil or
// sets nothing, and a *TargetMismatchError naming each mismatch otherwise. Callers
// check it before trusting any read and before any write.
func CheckTarget(e *model.Expect, t *model.Target) error {
	if e == nil {
		return nil
	}
	if t == nil {
		t = &model.Target{}
	}
	var mm []targetMismatch
	for _, f := range []struct{ name, want, got string }{
		{"server", e.Server, t.Server},
		{"cluster", e.Cluster, t.Cluster},
		{"domain", e.Domain, t.Domain},
		{"account", e.Account, t.Account},
	} {
		if f.want != "" && f.want != f.got {
			mm = append(mm, targetMismatch{Field: f.name, Expected: f.want, Actual: f.got})
		}
	}
	if len(mm) == 0 {
		return nil
	}
	return &TargetMismatchError{Decl: e.Decl.String(), Mismatches: mm}
}
