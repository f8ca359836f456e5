package schema

import (
	"github.com/hashicorp/hcl/v2"

	"github.com/natsplan/natsplan/model"
)

// notYet is the diagnostic for a block whose semantics are not built yet. It is an
// error, never a silent skip: a plan must not pretend a declared object is handled.
func notYet(d *model.Decl, block string) *hcl.Diagnostic {
	diag := &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Unsupported block",
		Detail:   "The " + block + " block is not supported by this version of natsplan yet; remove it or upgrade natsplan.",
	}
	if d != nil {
		r := d.Range
		diag.Subject = &r
	}
	return diag
}
