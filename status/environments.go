package status

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan"
	"github.com/natsplan/natsplan/plan/render"
)

// EnvReport is one environment's status for the renderers of several environments:
// its report, or the error that kept it from having one.
type EnvReport struct {
	// Name is the environment block's name.
	Name string
	// Target is the server that answered; nil when none did. A report's own Target
	// is used when this is nil.
	Target *model.Target
	// Report is the environment's status; nil when Err is set.
	Report *Report
	// Err is why there is no report: unreachable, refused by the expect guard, an
	// invalid configuration. Its message must hold no secret.
	Err error
}

// target is who answered, from the report when the environment does not say.
func (e *EnvReport) target() *model.Target {
	if e.Target == nil && e.Report != nil {
		return e.Report.Target
	}
	return e.Target
}

// Identity names the environment's target for a heading, as plan and drift name
// theirs: the redacted URL, then the server, cluster, domain, account and API level, or
// "not reached".
func (e *EnvReport) Identity() string {
	t := e.target()
	if t == nil {
		return render.TargetIdentity(plan.Target{})
	}
	return render.TargetIdentity(plan.Target{URL: t.URL, Server: t.Server, Cluster: t.Cluster, Domain: t.Domain, Account: t.Account, APILevel: t.APILevel})
}

// envDoc is one environment in the JSON document: "environment" then the report's
// fields, or the target (when known) and "error".
type envDoc struct {
	Environment string `json:"environment"`
	*Report
	Error string `json:"error,omitempty"`
}

type envErrDoc struct {
	Environment string        `json:"environment"`
	Target      *model.Target `json:"target,omitempty"`
	Error       string        `json:"error"`
}

// JSONEnvironments writes the reports of several environments as one document,
// {"environments": [...]}, each element the single-environment document with
// "environment" first, or {"environment", "target", "error"} for an environment
// that has no report. compact writes it on one line (a stream of samples).
func JSONEnvironments(w io.Writer, envs []*EnvReport, compact bool) error {
	docs := make([]any, len(envs))
	for i, e := range envs {
		if e.Report == nil {
			docs[i] = &envErrDoc{Environment: e.Name, Target: e.Target, Error: errText(e.Err)}
			continue
		}
		docs[i] = &envDoc{Environment: e.Name, Report: e.Report.withLists()}
	}
	doc := struct {
		Environments []any `json:"environments"`
	}{docs}
	if !compact {
		return render.WriteJSON(w, &doc)
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(&doc)
}

func errText(err error) string {
	if err == nil {
		return "no report"
	}
	return err.Error()
}

// TextEnvironments writes the reports of several environments for people, as plan and
// drift write theirs: one section per environment in the order given, headed with its
// name and target identity, the single-environment text under it (or the error), then
// one line that sums every environment up.
func TextEnvironments(w io.Writer, envs []*EnvReport, color bool) error {
	paint := func(code, s string) string {
		if !color {
			return s
		}
		return code + s + ansiReset
	}
	var b bytes.Buffer
	var summary []string
	for i, e := range envs {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s\n", paint(ansiBold, fmt.Sprintf("=== environment %s: %s", e.Name, e.Identity())))
		switch r := e.Report; {
		case r == nil:
			fmt.Fprintf(&b, "%s\n", paint(ansiRed, "Error: "+errText(e.Err)))
			summary = append(summary, e.Name+": failed")
		default:
			if err := Text(&b, r, color); err != nil {
				return err
			}
			if r.Healthy() {
				summary = append(summary, e.Name+": healthy")
			} else {
				summary = append(summary, fmt.Sprintf("%s: %d condition(s), %d missing consumer(s)", e.Name, len(r.Findings), len(r.Missing())))
			}
		}
	}
	fmt.Fprintf(&b, "\nEnvironments (%d): %s.\n", len(envs), strings.Join(summary, "; "))
	_, err := w.Write(b.Bytes())
	return err
}
