package render

import (
	"encoding/json"
	"io"
)

// WriteJSON writes v as one indented JSON document: the one JSON writer of every
// command's --format json, so all of them indent alike and keep subjects readable
// ("orders.>", never "orders.\u003e": the output is read by people and by jq, not
// embedded in HTML).
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
