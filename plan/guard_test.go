package plan

import (
	"errors"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/natsplan/natsplan/model"
)

func TestCheckTarget(t *testing.T) {
	live := &model.Target{Server: "n1", Cluster: "prod-east", Domain: "hub", Account: "SHOP"}
	decl := &model.Decl{Range: hcl.Range{Filename: "shop.hcl", Start: hcl.Pos{Line: 3, Column: 3}}}
	cases := []struct {
		name   string
		expect *model.Expect
		target *model.Target
		// fields are the mismatching fields, in order; none means the guard passes.
		fields []string
		want   []string // substrings of the error
	}{
		{name: "no expect block", expect: nil, target: live},
		{name: "empty expect block", expect: &model.Expect{}, target: live},
		{name: "all match", expect: &model.Expect{Server: "n1", Cluster: "prod-east", Domain: "hub", Account: "SHOP"}, target: live},
		{name: "only cluster set and matching", expect: &model.Expect{Cluster: "prod-east"}, target: live},
		{name: "cluster differs", expect: &model.Expect{Cluster: "prod-west", Decl: decl}, target: live,
			fields: []string{"cluster"},
			want:   []string{`expected cluster "prod-west" but connected to "prod-east"`, "shop.hcl:3:3", "--server"}},
		{name: "domain expected, none served", expect: &model.Expect{Domain: "hub"}, target: &model.Target{Server: "n1"},
			fields: []string{"domain"}, want: []string{`expected domain "hub" but connected to none`}},
		{name: "every field differs", expect: &model.Expect{Server: "x", Cluster: "y", Domain: "z", Account: "w"}, target: live,
			fields: []string{"server", "cluster", "domain", "account"},
			want:   []string{`server "x"`, `cluster "y"`, `domain "z"`, `account "w"`, `"SHOP"`}},
		{name: "case matters", expect: &model.Expect{Account: "shop"}, target: live, fields: []string{"account"}},
		{name: "no target read", expect: &model.Expect{Server: "n1"}, target: nil, fields: []string{"server"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckTarget(tc.expect, tc.target)
			if len(tc.fields) == 0 {
				if err != nil {
					t.Fatalf("guard refused a matching target: %v", err)
				}
				return
			}
			var mm *TargetMismatchError
			if !errors.As(err, &mm) {
				t.Fatalf("want a *TargetMismatchError, got %v", err)
			}
			var got []string
			for _, m := range mm.Mismatches {
				got = append(got, m.Field)
			}
			if strings.Join(got, ",") != strings.Join(tc.fields, ",") {
				t.Errorf("mismatches = %v, want %v", got, tc.fields)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if msg := err.Error(); strings.HasSuffix(msg, ".") || msg != strings.ToLower(msg[:1])+msg[1:] {
				t.Errorf("error %q must start lower case and not end with punctuation", msg)
			}
		})
	}
}
