package render

import (
	"encoding/json"
	"github.com/natsplan/natsplan/model"
	"strconv"
	"strings"
	"time"
)

// Object names and messages come from the files and the server, so everything
// written into the comment is escaped for where it lands: inline code, a table cell,
// plain text, or a fenced code block.

// mdCode writes s as inline code, with a fence longer than any backtick run in s.
func mdCode(s string) string {
	s = oneLine(s)
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// mdPlainEscaper escapes what GitHub markdown would read as formatting or HTML.
var mdPlainEscaper = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "<", "&lt;", ">", "&gt;",
	"[", `\[`, "]", `\]`, "|", `\|`, "~", `\~`,
)

// mdPlain is s as plain text on one line.
func mdPlain(s string) string { return mdPlainEscaper.Replace(oneLine(s)) }

// mdCell is s as a table cell.
func mdCell(s string) string { return mdPlain(s) }

// mdReason is ": reason" in plain text, or "" when there is none.
func mdReason(s string) string {
	if s == "" {
		return ""
	}
	return ": " + mdPlain(s)
}

// mdFence keeps s from closing the fenced code block it is written into.
func mdFence(s string) string { return strings.ReplaceAll(oneLine(s), "```", "`\u200b``") }

// oneLine folds line breaks so one item stays one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.NewReplacer("\r", " ", "\n", " ").Replace(s)), " ")
}

// mdValue renders one field value compactly: durations (nanoseconds in the JSON)
// as Go durations, everything else as JSON.
func mdValue(path string, v any) string {
	if v == nil {
		return "(none)"
	}
	name := path[strings.LastIndex(path, ".")+1:]
	if model.IsDurationField(name) {
		if list, ok := v.([]any); ok {
			parts := make([]string, len(list))
			for i, e := range list {
				parts[i] = mdDuration(e)
			}
			return "[" + strings.Join(parts, ", ") + "]"
		}
		return mdDuration(v)
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the value lands in a code block, where < and > are literal
	if err := enc.Encode(v); err != nil {
		return "?"
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func mdDuration(v any) string {
	var n int64
	switch x := v.(type) {
	case json.Number:
		i, err := x.Int64()
		if err != nil {
			return x.String()
		}
		n = i
	case float64:
		n = int64(x)
	case int64:
		n = x
	case int:
		n = int64(x)
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
	if n < 0 {
		return strconv.FormatInt(n, 10)
	}
	return model.FormatDuration(time.Duration(n))
}
