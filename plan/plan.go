// Package plan computes the difference between the desired and the live model, checks
// the invariants, and holds the result as a value: the plan document. It never does I/O.
package plan

import (
	"bytes"
	"encoding/json"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/model"
)

// FormatVersion is the version of the plan document.
const FormatVersion = "1"

// Action is what a change does to one object. The set is closed.
type Action string

// The actions.
const (
	ActCreate  Action = "create"
	ActUpdate  Action = "update"
	ActDelete  Action = "delete"
	ActReplace Action = "replace"
	ActAdopt   Action = "adopt"
)

// Rule is how the server treats a change of one field.
type Rule string

// The field rules.
const (
	RuleInPlace      Rule = "in_place"
	RuleImmutable    Rule = "immutable"
	RuleOneWay       Rule = "one_way"
	RuleCreateOnly   Rule = "create_only"
	RuleSeparateStep Rule = "separate_step"
)

// Plan is the plan document (docs/commands/plan.md, "The plan document"). Renderers only read it; apply executes it.
type Plan struct {
	FormatVersion   string             `json:"format_version"`
	NatsplanVersion string             `json:"natsplan_version"`
	Target          Target             `json:"target"`
	DesiredHash     string             `json:"desired_hash"`
	Changes         []*Change          `json:"changes"`
	Findings        []*finding.Finding `json:"findings"`
	Drift           []*Drift           `json:"drift"`
	Unmanaged       []*Object          `json:"unmanaged"`
	Summary         Summary            `json:"summary"`
	// Lock is the apply lock the configuration asks for, so that applying a saved plan
	// takes the same lock as planning and applying in one go.
	Lock *LockSpec `json:"lock,omitempty"`
	// Environment names the environment block the plan is for; empty without environments.
	Environment string `json:"environment,omitempty"`
	// Connection is how apply reaches the environment of a saved multi-environment
	// plan: settings and references (env var names, file paths), never a secret.
	Connection *model.Connection `json:"connection,omitempty"`
	// Error says why the environment could not be planned (unreachable, refused
	// target, invalid configuration there); such a plan has no changes.
	Error string `json:"error,omitempty"`
	// Only lists the --only addresses of a partial plan: changes outside them and
	// their dependencies were left out.
	Only []string `json:"only,omitempty"`
	// LeftOut counts the changes of the whole plan a partial plan leaves out (a split
	// change counts once); 0 otherwise.
	LeftOut int `json:"left_out,omitempty"`
	// Checksum is the sha256 of the document without it; set when the plan is saved.
	Checksum string `json:"checksum,omitempty"`

	// hashDesired computes DesiredHash for a plan Compute made; see FillDesiredHash.
	hashDesired func() string
}

// FillDesiredHash sets DesiredHash, which Compute leaves to be computed when it is
// first needed: hashing every desired config is a large part of computing a plan, and
// only the plan document shows the hash. MarshalJSON calls it. Like every change of a
// plan, it is not safe to call while another goroutine reads the plan.
func (p *Plan) FillDesiredHash() {
	if p.DesiredHash == "" && p.hashDesired != nil {
		p.DesiredHash = p.hashDesired()
	}
}

// MarshalJSON encodes the plan document, with its desired hash. Characters such as
// '>' are written as they are: an encoder that escapes them (json.Marshal) escapes
// them again, one that does not (SetEscapeHTML(false)) keeps subjects readable.
func (p *Plan) MarshalJSON() ([]byte, error) {
	p.FillDesiredHash()
	type document Plan // without the method
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode((*document)(p)); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Multi is the plan document of a configuration with environment blocks: one plan per
// selected environment, in the order the files declare them.
type Multi struct {
	FormatVersion   string  `json:"format_version"`
	NatsplanVersion string  `json:"natsplan_version"`
	Environments    []*Plan `json:"environments"`
	// Checksum is the sha256 of the document without it; set when the plan is saved.
	Checksum string `json:"checksum,omitempty"`
}

// Target identifies the server a plan was made against.
type Target struct {
	URL      string `json:"url"`
	Server   string `json:"server"`
	Cluster  string `json:"cluster"`
	Domain   string `json:"domain"`
	Account  string `json:"account"`
	APILevel int    `json:"api_level"`
}

// Change is one action on one object. Changes are listed in execution order.
type Change struct {
	Address string `json:"address"`
	// Kind is stream, consumer, kv or object_store.
	Kind model.Kind `json:"kind"`
	// Name is the JetStream name: the stream name, or the consumer's durable name.
	Name string `json:"name"`
	// Stream is the consumer's stream (consumers only).
	Stream string `json:"stream,omitempty"`
	Action Action `json:"action"`
	// Step is the ordering step; changes in one step may run in parallel.
	Step   int            `json:"step"`
	Fields []*FieldChange `json:"fields,omitempty"`
	// Before is the normalised live config; After the config apply sends (nil on delete).
	Before json.RawMessage `json:"before,omitempty"`
	After  json.RawMessage `json:"after,omitempty"`
	// LiveHash is the hash of the normalised live config ("" when the object is absent).
	LiveHash    string `json:"live_hash"`
	Destructive bool   `json:"destructive"`
	// Reason explains a replace, a delete or an adopt.
	Reason string `json:"reason,omitempty"`
	Decl   string `json:"decl,omitempty"`
	Group  string `json:"group,omitempty"`
	// DependsOn lists the addresses that must succeed before this change runs.
	DependsOn []string `json:"depends_on,omitempty"`
	// Phase numbers the parts of a change the server only accepts in separate updates
	// (placement, replicas, retention): "1/2", "2/2"; empty for a single-part change.
	Phase string `json:"phase,omitempty"`
	// Blocked says why apply can not make this change: the server refuses to change
	// some of its fields (those marked blocked; NP303 findings say what to do). A
	// blocked change is listed with every difference so that review sees them all,
	// and it keeps the plan from being applied. Empty for a change apply can make.
	Blocked string `json:"blocked,omitempty"`
}

// FieldChange is one changed field.
type FieldChange struct {
	Path   string `json:"path"`
	Before any    `json:"before"`
	After  any    `json:"after"`
	Rule   Rule   `json:"rule"`
	// Via names the API apply must use for this field instead of the config update:
	// "pause" for pause_until, which the server ignores on update.
	Via string `json:"via,omitempty"`
	// Blocked marks a field the server refuses to change (immutable, one-way back,
	// create-only): the reason its change is blocked.
	Blocked bool `json:"blocked,omitempty"`
}

// Drift is an owned object whose live config differs from the files, or is gone.
type Drift struct {
	Address string         `json:"address"`
	Kind    model.Kind     `json:"kind"`
	Status  DriftStatus    `json:"status"`
	Fields  []*FieldChange `json:"fields,omitempty"`
	// Blocked is the plan change's Blocked: apply can not restore what the files say.
	Blocked string `json:"blocked,omitempty"`
}

// Object names a live object natsplan does not manage.
type Object struct {
	Address string     `json:"address"`
	Kind    model.Kind `json:"kind"`
	Name    string     `json:"name"`
	Owner   string     `json:"owner,omitempty"`
	Reason  string     `json:"reason,omitempty"`
}

// Summary counts the changes by action.
type Summary struct {
	Create  int `json:"create"`
	Update  int `json:"update"`
	Delete  int `json:"delete"`
	Replace int `json:"replace"`
	Adopt   int `json:"adopt"`
	// Blocked counts the changes apply can not make (Change.Blocked); they are not
	// counted by action.
	Blocked int `json:"blocked,omitempty"`
}

// HasChanges reports whether the server differs from the files: the plan lists a
// change, one apply can make or a blocked one.
func (p *Plan) HasChanges() bool { return len(p.Changes) > 0 }

// HasBlocked reports whether a change of the plan is blocked.
func (p *Plan) HasBlocked() bool {
	for _, ch := range p.Changes {
		if ch.Blocked != "" {
			return true
		}
	}
	return false
}

// HasErrors reports whether any finding is an error.
func (p *Plan) HasErrors() bool { return finding.HasErrors(p.Findings) }

// LockSpec is the natsplan { lock {} } setting of the configuration a plan came from.
type LockSpec struct {
	Project string `json:"project"`
	Bucket  string `json:"bucket,omitempty"`
	TTL     string `json:"ttl,omitempty"`
}

// Touched returns the streams and consumers the plan's changes act on.
func (p *Plan) Touched() (streams []string, consumers []model.ConsumerKey) {
	seenS := map[string]bool{}
	seenC := map[model.ConsumerKey]bool{}
	for _, c := range p.Changes {
		if c.Kind == model.KindConsumer {
			k := model.ConsumerKey{Stream: c.Stream, Name: c.Name}
			if !seenC[k] {
				seenC[k] = true
				consumers = append(consumers, k)
			}
			continue
		}
		if !seenS[c.Name] {
			seenS[c.Name] = true
			streams = append(streams, c.Name)
		}
	}
	return streams, consumers
}
