package model

import (
	"fmt"
	"strings"
	"time"
)

// durationFields are the JSON names (of stream, consumer, KV and object-store
// configs) whose values are durations, in nanoseconds on the wire.
var durationFields = map[string]bool{
	"max_age": true, "duplicate_window": true, "subject_delete_marker_ttl": true, "inactive_threshold": true,
	"ack_wait": true, "backoff": true, "idle_heartbeat": true, "max_expires": true, "priority_timeout": true,
	"ttl": true, "limit_marker_ttl": true,
}

// sizeFields are the JSON names whose values are byte counts.
var sizeFields = map[string]bool{"max_bytes": true, "max_msg_size": true, "max_value_size": true}

// IsDurationField reports whether the field named name holds a duration.
func IsDurationField(name string) bool { return durationFields[name] }

// IsSizeField reports whether the field named name holds a number of bytes.
func IsSizeField(name string) bool { return sizeFields[name] }

// FormatDuration writes d the way people write durations in natsplan files: "3d",
// "1h30m", "500ms", "0s". The language reads it back to the same value.
func FormatDuration(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	var b strings.Builder
	if d < 0 {
		b.WriteString("-")
		d = -d
	}
	const day = 24 * time.Hour
	for _, u := range []struct {
		unit time.Duration
		name string
	}{{day, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}, {time.Millisecond, "ms"}, {time.Microsecond, "us"}, {time.Nanosecond, "ns"}} {
		if n := d / u.unit; n > 0 {
			fmt.Fprintf(&b, "%d%s", n, u.name)
			d -= n * u.unit
		}
	}
	return b.String()
}

// FormatSize writes a positive byte count with the largest binary unit that divides
// it exactly ("5GiB"); ok is false when no unit does, and the plain number is better.
func FormatSize(n int64) (s string, ok bool) {
	if n <= 0 {
		return "", false
	}
	for _, u := range []struct {
		factor int64
		name   string
	}{{1 << 40, "TiB"}, {1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if n%u.factor == 0 {
			return fmt.Sprintf("%d%s", n/u.factor, u.name), true
		}
	}
	return "", false
}
