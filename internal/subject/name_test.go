package subject

import (
	"strings"
	"testing"
)

func TestValidName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"ORDERS": true, "orders-1_x": true, "": false, "a.b": false, "a b": false, "a*": false,
		"a>": false, "a/b": false, `a\b`: false, "a\tb": false, strings.Repeat("x", 255): true, strings.Repeat("x", 256): false,
	} {
		if got := ValidName(name); got != want {
			t.Errorf("ValidName(%q) = %v, want %v", name, got, want)
		}
	}
}
