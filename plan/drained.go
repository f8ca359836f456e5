package plan

import (
	"fmt"
	"sort"
	"strings"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/model"
)

// Repartitioned returns the streams whose subject transform a saved plan changes while
// it carries NP204 as a warning (every lane was drained when it was made): the streams
// whose lanes RecheckDrained must see when the plan is applied.
func Repartitioned(p *Plan) []string {
	warned := false
	for _, f := range p.Findings {
		warned = warned || f.Code == finding.CodeRepartition && f.Severity == finding.SevWarning
	}
	if !warned {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, ch := range p.Changes {
		for _, fc := range ch.Fields {
			if ch.Kind == model.KindStream && strings.HasPrefix(fc.Path, "subject_transform") && !seen[ch.Name] {
				seen[ch.Name] = true
				out = append(out, ch.Name)
			}
		}
	}
	sort.Strings(out)
	return out
}

// RecheckDrained judges NP204 again when a saved plan is applied: lanes drained when
// the plan was made fill up again while it waits for review. live holds the consumers
// of the streams Repartitioned names, as they are now. When a lane of a group the
// plan touches holds messages, it returns for each NP204 warning the NP204 error that
// apply refuses without --allow-reorder.
func RecheckDrained(p *Plan, live *model.Model) []*finding.Finding {
	streams := Repartitioned(p)
	if len(streams) == 0 {
		return nil
	}
	groups := map[string]bool{}
	for _, ch := range p.Changes {
		if ch.Kind == model.KindConsumer && ch.Group != "" {
			groups[ch.Group] = true
		}
	}
	var busy []string
	for _, stream := range streams {
		for _, c := range live.ConsumersOf(stream) {
			st := c.State
			if !groups[c.Config.Metadata[model.MetaGroup]] || st == nil || st.NumPending == 0 && st.NumAckPending == 0 {
				continue
			}
			busy = append(busy, fmt.Sprintf("%s %d pending, %d in flight", c.Name, st.NumPending, st.NumAckPending))
		}
	}
	if len(busy) == 0 {
		return nil
	}
	var out []*finding.Finding
	for _, f := range p.Findings {
		if f.Code != finding.CodeRepartition || f.Severity != finding.SevWarning {
			continue
		}
		out = append(out, &finding.Finding{Code: finding.CodeRepartition, Severity: finding.SevError, Address: f.Address, Range: f.Range, Overridable: OverrideReorder,
			Message: fmt.Sprintf("the lanes were drained when this plan was made, but now hold messages: %s. Repartitioning "+
				"now breaks per-key order for their keys: let them drain and apply again, or run apply with --%s",
				strings.Join(busy, "; "), OverrideReorder)})
	}
	return out
}
