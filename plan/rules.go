package plan

import (
	"fmt"
	"strings"
)

// fieldRule is how the server treats a change of one top-level config field, from
// configUpdateCheckLocked (streams) and checkNewConsumerConfig (consumers) of v2.15.3.
type fieldRule struct {
	rule Rule
	// recipe says what to do instead when the server refuses the change.
	recipe string
}

// streamRules lists every stream field whose rule is not in_place.
var streamRules = map[string]fieldRule{
	"storage": {RuleImmutable, "storage can not change after creation: create a new stream with the new storage, " +
		"source the old one into it, switch producers, then delete the old one"},
	"retention": {RuleImmutable, "retention can not change to or from workqueue: create a new stream with the new " +
		"retention, source the old one into it, move the consumers, then delete the old one"},
	"allow_msg_counter": {RuleImmutable, "allow_msg_counter can not change after creation: create a new stream " +
		"with the setting and source the old one into it"},
	"persist_mode": {RuleImmutable, "persist_mode can not change after creation: create a new stream with the new " +
		"persist_mode, source the old one into it, switch producers, then delete the old one"},
	"mirror": {RuleImmutable, "mirror can not be added or changed after creation, only removed (which promotes " +
		"the stream): create a new mirror stream and delete the old one"},
	"sealed":              {RuleOneWay, "sealed can not be turned off: copy the stream into a new one to write again"},
	"deny_delete":         {RuleOneWay, "deny_delete can not be turned off: copy the stream into a new one without it"},
	"deny_purge":          {RuleOneWay, "deny_purge can not be turned off: copy the stream into a new one without it"},
	"allow_msg_ttl":       {RuleOneWay, "allow_msg_ttl can not be turned off: copy the stream into a new one without it"},
	"allow_msg_schedules": {RuleOneWay, "allow_msg_schedules can not be turned off: copy the stream into a new one without it"},
	"first_seq": {RuleCreateOnly, "first_seq is only honoured at creation; changing it later purges messages on " +
		"the next restart: remove the change, or create a new stream with this first_seq"},
	"placement":    {RuleSeparateStep, ""},
	"num_replicas": {RuleSeparateStep, ""},
	"name":         {RuleImmutable, "the name is the stream's identity: declare a new stream instead"},
}

// consumerRules lists every consumer field whose rule is not in_place.
var consumerRules = map[string]fieldRule{
	"deliver_policy": {RuleImmutable, ""},
	"opt_start_seq":  {RuleImmutable, ""},
	"opt_start_time": {RuleImmutable, ""},
	"ack_policy":     {RuleImmutable, ""},
	"replay_policy":  {RuleImmutable, ""},
	"mem_storage":    {RuleImmutable, ""},
	"idle_heartbeat": {RuleImmutable, ""},
	"flow_control":   {RuleImmutable, ""},
	"max_waiting":    {RuleImmutable, ""},
	"direct":         {RuleImmutable, ""},
	"sourcing":       {RuleImmutable, ""},
	"durable_name":   {RuleImmutable, ""},
	"name":           {RuleImmutable, ""},
}

// consumerRecipe is the advice for every refused consumer change.
const consumerRecipe = "set lifecycle { replace_on_change = true } to delete and re-create the consumer " +
	"(its ack state and position are lost), or give the consumer a new durable name"

// topKey is the top-level field of a dotted path.
func topKey(path string) string {
	k, _, _ := strings.Cut(path, ".")
	return k
}

// streamFieldRule classifies one changed stream field.
func streamFieldRule(f *FieldChange) Rule {
	k := topKey(f.Path)
	switch k {
	case "retention":
		if f.Before == "workqueue" || f.After == "workqueue" {
			return RuleImmutable
		}
		return RuleInPlace
	case "mirror":
		if f.Path == "mirror" && f.After == nil {
			return RuleInPlace // removing the mirror promotes the stream
		}
	}
	if r, ok := streamRules[k]; ok {
		return r.rule
	}
	return RuleInPlace
}

// consumerFieldRule classifies one changed consumer field.
func consumerFieldRule(f *FieldChange) Rule {
	k := topKey(f.Path)
	if k == "deliver_subject" {
		// push -> push is an update; pull <-> push is not.
		if f.Before == nil || f.After == nil {
			return RuleImmutable
		}
		return RuleInPlace
	}
	if r, ok := consumerRules[k]; ok {
		return r.rule
	}
	return RuleInPlace
}

// refused reports whether the server refuses a change of a field with this rule.
func refused(f *FieldChange) bool {
	switch f.Rule {
	case RuleImmutable, RuleCreateOnly:
		return true
	case RuleOneWay:
		return f.Before == true && f.After != true
	}
	return false
}

// streamRefusal is the NP303 message for a refused stream field: the recipe, with the
// values inserted after what the server refuses.
func streamRefusal(f *FieldChange) string {
	what, how, _ := strings.Cut(streamRules[topKey(f.Path)].recipe, ": ")
	if f.Path != topKey(f.Path) {
		what = f.Path + ": " + what
	}
	return fmt.Sprintf("%s (%s -> %s): %s", what, show(f.Before), show(f.After), how)
}

// show renders a JSON value for a message.
func show(v any) string {
	if v == nil {
		return "unset"
	}
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	b, err := jsonCompact(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return b
}
