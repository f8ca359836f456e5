// Package finding holds what natsplan's checks report: a Finding with its Severity and
// its Code. The codes are defined here, once, and each has its page
// docs/rules/<code>.md. The language (schema), the planner (plan), the preflight and
// the renderers share these types; the package depends on nothing of natsplan.
package finding

// Severity of a finding.
type Severity string

// The severities.
const (
	SevError   Severity = "error"
	SevWarning Severity = "warning"
	// SevInfo is a note for review that never fails a command.
	SevInfo Severity = "info"
)

// Code identifies the rule a finding breaks: NPxyz, documented in docs/rules/NPxyz.md.
type Code string

// The codes. NP1xx are consumer invariants, NP2xx partitioning, NP3xx what the server
// would lose or refuse, NP4xx the server and the account around the plan.
const (
	CodeFetchAboveAckPending Code = "NP101"
	CodeAckPendingPool       Code = "NP102"
	CodeFanOut               Code = "NP103"
	CodeAckWait              Code = "NP104"
	CodeCPUConcurrency       Code = "NP105"
	CodePerKeyOrdering       Code = "NP106"
	CodeGlobalSerialisation  Code = "NP107"
	CodeNoDeadLetter         Code = "NP108"
	CodePullLimits           Code = "NP109"
	CodeBadPartitioning      Code = "NP201"
	CodePartitionCoverage    Code = "NP202"
	CodeWorkqueueOverlap     Code = "NP203"
	CodeRepartition          Code = "NP204"
	CodeDeadFilter           Code = "NP205"
	CodeDataLoss             Code = "NP301"
	CodePurge                Code = "NP302"
	CodeRefused              Code = "NP303"
	CodeServerRefuses        Code = "NP304"
	CodeRewrite              Code = "NP305"
	CodeAPILevel             Code = "NP401"
	CodeOverlap              Code = "NP402"
	CodeAccountLimits        Code = "NP403"
	CodeForeignOwner         Code = "NP404"
	CodePreventDestroy       Code = "NP405"
	CodeOffline              Code = "NP406"
	CodeBadMetadata          Code = "NP407"
)

// OverrideDataLoss is the apply flag (without dashes) that accepts NP301 and NP302.
const OverrideDataLoss = "allow-data-loss"

// Finding is the result of a check.
type Finding struct {
	Code     Code     `json:"code"`
	Severity Severity `json:"severity"`
	Address  string   `json:"address"`
	Message  string   `json:"message"`
	Range    string   `json:"range,omitempty"`
	// Overridable names the apply flag that accepts this error ("allow-data-loss");
	// empty when nothing overrides it.
	Overridable string `json:"overridable,omitempty"`
	// Related is the address of the other object a finding about two is about (two
	// overlapping streams, two consumers reading the same subjects, a lane and its
	// group, a filter and its stream): a partial plan (--only) keeps the finding when
	// either takes part. A string, so that a Finding stays comparable.
	Related string `json:"related,omitempty"`
}

// Errors returns the findings of severity error, in order.
func Errors(fs []*Finding) []*Finding {
	var out []*Finding
	for _, f := range fs {
		if f.Severity == SevError {
			out = append(out, f)
		}
	}
	return out
}

// HasErrors reports whether any finding is an error.
func HasErrors(fs []*Finding) bool {
	for _, f := range fs {
		if f.Severity == SevError {
			return true
		}
	}
	return false
}
