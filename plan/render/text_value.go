package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// sizeFields hold bytes; the text plan shows them with a binary unit.
var sizeFields = map[string]bool{"max_bytes": true, "max_msg_size": true}

// unlimitedFields use -1 for "no limit".
var unlimitedFields = map[string]bool{
	"max_bytes": true, "max_msg_size": true, "max_msgs": true, "max_msgs_per_subject": true,
	"max_consumers": true, "max_deliver": true, "max_ack_pending": true,
}

// textValue renders a field value for people: durations as Go durations, sizes with
// units, -1 as unlimited, everything else as compact JSON.
func textValue(path string, v any) string {
	if v == nil {
		return "(unset)"
	}
	name := path[strings.LastIndex(path, ".")+1:]
	if n, ok := v.(json.Number); ok {
		i, err := n.Int64()
		if err == nil && i == -1 && unlimitedFields[name] {
			return "-1 (unlimited)"
		}
		if err == nil && sizeFields[name] && i > 0 {
			return humanBytes(i)
		}
	}
	if mdDurationField(name) {
		return mdValue(path, v)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSpace(b.String())
}

// humanBytes renders n with the largest binary unit that divides it exactly, keeping
// exact values exact.
func humanBytes(n int64) string {
	units := []string{"KiB", "MiB", "GiB", "TiB"}
	unit, v := "", n
	for _, u := range units {
		if v%1024 != 0 {
			break
		}
		v /= 1024
		unit = u
	}
	if unit == "" {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%d %s", v, unit)
}

// decodeNumbers decodes JSON keeping numbers exact.
func decodeNumbers(raw []byte, out any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(out)
}
