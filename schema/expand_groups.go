package schema

import (
	"github.com/hashicorp/hcl/v2"

	"github.com/natsplan/natsplan/model"
)

// expandGroups turns subject_mapping and consumer_group blocks into what the server
// holds: stream subject transforms, one consumer per lane, dead-letter streams.
// Owned by the consumer-groups work (issue 3); Load calls it after decoding.
func expandGroups(m *model.Model) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, mp := range m.Mappings {
		diags = append(diags, notYet(mp.Decl, "subject_mapping"))
	}
	for _, g := range m.Groups {
		diags = append(diags, notYet(g.Decl, "consumer_group"))
	}
	return diags
}
