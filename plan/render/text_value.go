package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/natsplan/natsplan/model"
)

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
		if size, ok := model.FormatSize(i); err == nil && ok && model.IsSizeField(name) {
			return size
		}
	}
	if model.IsDurationField(name) {
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

// decodeNumbers decodes JSON keeping numbers exact.
func decodeNumbers(raw []byte, out any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(out)
}
