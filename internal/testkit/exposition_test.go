package testkit

import (
	"strings"
	"testing"
)

// TestParseExposition: the checker accepts the format and refuses each way of
// breaking it, naming the line.
func TestParseExposition(t *testing.T) {
	good := "# HELP a_total Things, \\\\ and \\n.\n# TYPE a_total counter\na_total{x=\"1\\\"\\\\\\n\",y=\"\"} 3\na_total{x=\"2\"} 1e+06\n# TYPE b gauge\nb -Inf\nb{z=\"{,}\"} 0.5 1700000000000\n"
	series, err := ParseExposition(good)
	if err != nil {
		t.Fatalf("valid exposition refused: %v", err)
	}
	if len(series) != 4 || series[0].Labels[0][1] != "1\"\\\n" || series[1].Value != 1e6 {
		t.Fatalf("parsed %+v", series)
	}
	if v, ok := series[3].Label("z"); !ok || v != "{,}" {
		t.Errorf("label z = %q, %v", v, ok)
	}
	bad := map[string]string{
		"no final line feed":       "# TYPE a gauge\na 1",
		"blank line":               "# TYPE a gauge\n\na 1\n",
		"other comment":            "# hello there\n",
		"second HELP":              "# HELP a x\n# HELP a y\n",
		"second TYPE":              "# TYPE a gauge\n# TYPE a gauge\n",
		"TYPE after a sample":      "a 1\n# TYPE a gauge\n",
		"unknown type":             "# TYPE a meter\n",
		"family split":             "# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\na{x=\"1\"} 2\n",
		"duplicate series":         "a{x=\"1\",y=\"2\"} 1\na{y=\"2\",x=\"1\"} 2\n",
		"bad metric name":          "1a 1\n",
		"bad label name":           "a{1x=\"1\"} 1\n",
		"reserved label name":      "a{__x=\"1\"} 1\n",
		"repeated label":           "a{x=\"1\",x=\"2\"} 1\n",
		"unknown escape":           "a{x=\"\\t\"} 1\n",
		"unterminated value":       "a{x=\"1} 1\n",
		"no value":                 "a{x=\"1\"}\n",
		"two spaces":               "a  1\n",
		"not a number":             "a one\n",
		"bad timestamp":            "a 1 soon\n",
		"quote escape in HELP":     "# HELP a say \\\"hi\\\"\n",
		"garbage after labels":     "a{x=\"1\"y=\"2\"} 1\n",
		"sample of another family": "# TYPE a counter\nb 1\na 2\n",
	}
	for name, text := range bad {
		if _, err := ParseExposition(text); err == nil {
			t.Errorf("%s: accepted %q", name, text)
		} else if name != "no final line feed" && !strings.Contains(err.Error(), "line ") {
			t.Errorf("%s: the error does not name the line: %v", name, err)
		}
	}
}
