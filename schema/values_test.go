package schema

import (
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want time.Duration
		err  bool
	}{
		{"90s", 90 * time.Second, false},
		{"1h30m", 90 * time.Minute, false},
		{"7d", 7 * 24 * time.Hour, false},
		{"1d12h", 36 * time.Hour, false},
		{"1.5d", 36 * time.Hour, false},
		{"100ms", 100 * time.Millisecond, false},
		{"0", 0, false},
		{"0s", 0, false},
		{" 5m ", 5 * time.Minute, false},
		{"", 0, true},
		{"5", 0, true},
		{"-1s", 0, true},
		{"3 days", 0, true},
		{"1w", 0, true},
		{"d", 0, true},
		{"999999999999d", 0, true},
	}
	for _, c := range cases {
		got, err := parseDuration(c.in)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("parseDuration(%q) = %v, %v; want %v, error %v", c.in, got, err, c.want, c.err)
		}
	}
}

func TestParseSize(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want int64
		err  bool
	}{
		{"512", 512, false},
		{"512B", 512, false},
		{"10KB", 10000, false},
		{"10kb", 10000, false},
		{"10GB", 10_000_000_000, false},
		{"1TB", 1_000_000_000_000, false},
		{"512MiB", 512 << 20, false},
		{"10GiB", 10 << 30, false},
		{"2tib", 2 << 40, false},
		{"1.5KiB", 1536, false},
		{"1 MiB", 1 << 20, false},
		{"-1", -1, false},
		{"0.5B", 0, true},
		{"10GX", 0, true},
		{"GiB", 0, true},
		{"-2", 0, true},
		{"99999999TiB", 0, true},
	}
	for _, c := range cases {
		got, err := parseSize(c.in)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("parseSize(%q) = %v, %v; want %v, error %v", c.in, got, err, c.want, c.err)
		}
	}
}

func TestDidYouMean(t *testing.T) {
	t.Parallel()
	cases := []struct {
		given string
		want  string
	}{
		{"max_agee", ` Did you mean "max_age"?`},
		{"retension", ` Did you mean "retention"?`},
		{"zzzzzzzzzzzz", ""},
	}
	for _, c := range cases {
		if got := didYouMean(c.given, []string{"max_age", "retention", "subjects"}); got != c.want {
			t.Errorf("didYouMean(%q) = %q, want %q", c.given, got, c.want)
		}
	}
}
