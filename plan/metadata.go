package plan

import (
	"fmt"
	"sort"
	"strings"

	"github.com/natsplan/natsplan/internal/finding"
	"github.com/natsplan/natsplan/model"
)

// metaProblems lists the natsplan.* metadata of an object that natsplan can not read:
// a key it does not know, or a value it does not accept. Values are compared exactly:
// "TRUE" is not "true". Metadata decides what natsplan deletes, so a mark it can not read
// is never taken to mean "not protected".
func metaProblems(md map[string]string) []string {
	// Most objects' marks are all readable: those are told without sorting the keys.
	clean := true
	for k, v := range md {
		if strings.HasPrefix(k, model.MetaPrefix) && metaProblem(k, v) != "" {
			clean = false
			break
		}
	}
	if clean {
		return nil
	}
	var out []string
	for _, k := range sortedMetaKeys(md) {
		if p := metaProblem(k, md[k]); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// metaProblem is what metaProblems says of the natsplan.* key k with value v; "" when
// natsplan can read it.
func metaProblem(k, v string) string {
	var want string
	switch {
	case k == model.MetaProject:
		if !model.ValidProject(v) {
			want = "a project name: 1 to 64 letters, digits, '_', '-' or '.', starting with a letter or digit"
		}
	case k == model.MetaPreventDestroy:
		if v != "true" && v != "false" {
			want = `"true" or "false", in lower case`
		}
	case k == model.MetaRole:
		if v != model.RoleLock {
			want = fmt.Sprintf("%q (the apply lock's bucket)", model.RoleLock)
		}
	case k == model.MetaGroup:
		if name, ok := strings.CutPrefix(v, "consumer_group."); !ok || name == "" {
			want = `"consumer_group.<name>"`
		}
	case strings.HasPrefix(k, model.MetaWorkersPrefix):
		// Written for the worker processes to read; natsplan never reads them.
	default:
		return fmt.Sprintf("%s = %q is not a key natsplan knows (it reads %s, %s, %s and %s)",
			k, v, model.MetaProject, model.MetaPreventDestroy, model.MetaGroup, model.MetaRole)
	}
	if want != "" {
		return fmt.Sprintf("%s = %q is not a value natsplan accepts (it accepts %s)", k, v, want)
	}
	return ""
}

func sortedMetaKeys(md map[string]string) []string {
	var keys []string
	for k := range md {
		if strings.HasPrefix(k, model.MetaPrefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// What NP407 stops, for a declared object and for one the plan would delete.
const (
	metaRefusal       = "apply refuses to run until it is corrected"
	metaDeleteRefusal = "natsplan does not delete it, and apply refuses to run until it is corrected"
)

// keptByMetadata reports whether an object's metadata keeps natsplan from deleting it:
// prevent_destroy is "true", or natsplan metadata it can not read (fail safe).
func keptByMetadata(md map[string]string) bool {
	return md[model.MetaPreventDestroy] == "true" || len(metaProblems(md)) > 0
}

// badMetadata raises NP407 for the natsplan metadata of the object at addr that natsplan
// can not read, once per object, and reports whether there was any. what says what the
// finding stops ("natsplan does not delete it").
func (c *computer) badMetadata(addr string, d *model.Decl, md map[string]string, what string) bool {
	problems := metaProblems(md)
	if len(problems) == 0 {
		return false
	}
	if c.badMeta[addr] {
		return true
	}
	c.badMeta[addr] = true
	c.finding(finding.CodeBadMetadata, finding.SevError, addr, d.String(), fmt.Sprintf(
		"%s has metadata natsplan can not read: %s; %s. Correct or remove the key on the server and plan again",
		addr, strings.Join(problems, "; "), what))
	return true
}
