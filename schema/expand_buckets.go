package schema

import (
	"github.com/hashicorp/hcl/v2"

	"github.com/natsplan/natsplan/model"
)

// expandBuckets turns kv and object_store blocks into the streams that hold them.
// Owned by the KV and object-store work (issue 4); Load calls it after decoding.
func expandBuckets(m *model.Model) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, kv := range m.KVs {
		diags = append(diags, notYet(kv.Decl, "kv"))
	}
	for _, o := range m.ObjectStores {
		diags = append(diags, notYet(o.Decl, "object_store"))
	}
	return diags
}
