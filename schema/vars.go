package schema

import (
	"fmt"
	"os"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// Vars are variable values from the command line.
type Vars struct {
	Args  []string // "NAME=VALUE" from --var
	Files []string // --var-file
}

// variable is a decoded variable "x" {} block.
type variable struct {
	name        string
	typ         cty.Type
	def         cty.Value // cty.NilVal when there is no default
	decl        hcl.Range
	validations []validation
}

// validation is one validation {} block of a variable.
type validation struct {
	cond hcl.Expression
	msg  hcl.Expression
}

var variableNames = []string{"type", "default", "description", "sensitive", "nullable", "validation"}

// decodeVariable reads a variable block. Only the literal forms Terraform allows
// are accepted: default may not refer to other variables.
func decodeVariable(b *hclsyntax.Block, funcs *hcl.EvalContext, inline inlineBodies) (*variable, hcl.Diagnostics) {
	d := newDecoder(funcs, inline)
	v := &variable{name: b.Labels[0], typ: cty.DynamicPseudoType, decl: b.DefRange()}
	if !hclsyntax.ValidIdentifier(v.name) {
		d.errorf(b.LabelRanges[0], "Invalid variable name",
			"%q is not a valid name: use letters, digits, underscores and dashes, starting with a letter.", v.name)
	}
	var defExpr hcl.Expression
	for _, it := range d.blockItems(b) {
		switch {
		case it.block != nil && it.name == "validation":
			v.validations = append(v.validations, d.validation(it.block))
		case it.block == nil && it.name == "type":
			t, diags := typeexpr.TypeConstraint(it.expr)
			d.diags = append(d.diags, diags...)
			if !diags.HasErrors() {
				v.typ = t
			}
		case it.block == nil && it.name == "default":
			defExpr = it.expr
		case it.block == nil && (it.name == "description" || it.name == "sensitive" || it.name == "nullable"):
			d.eval(it.expr) // checked for errors; natsplan keeps no secrets in its output
		default:
			kind := "argument"
			if it.block != nil {
				kind = "block"
			}
			d.errorf(it.nameRange, "Unsupported "+kind, "%q is not expected in a variable block.%s", it.name, didYouMean(it.name, variableNames))
		}
	}
	if defExpr != nil {
		if val, ok := d.eval(defExpr); ok {
			cv, err := convert.Convert(val, v.typ)
			if err != nil {
				d.errorf(defExpr.Range(), "Invalid default value for variable", "The default of var.%s does not match its type: %s.", v.name, err)
				v.def = cty.DynamicVal // reported; not also "no value"
			} else {
				v.def = cv
			}
		} else if d.hasErrors() {
			v.def = cty.DynamicVal
		} else {
			v.def = cty.NullVal(v.typ)
		}
	}
	return v, d.diags
}

func (d *decoder) validation(b *hclsyntax.Block) validation {
	var val validation
	for _, it := range d.blockItems(b) {
		switch {
		case it.block == nil && it.name == "condition":
			val.cond = it.expr
		case it.block == nil && it.name == "error_message":
			val.msg = it.expr
		default:
			d.errorf(it.nameRange, "Unsupported argument", "%q is not expected in a validation block.%s",
				it.name, didYouMean(it.name, []string{"condition", "error_message"}))
		}
	}
	if val.cond == nil {
		d.errorf(b.DefRange(), "Missing condition", "A validation block needs condition = <bool expression>.")
	}
	return val
}

// resolveVariables computes every variable's value: its default, then the values of
// the environment being built (env, none without environments), then each var-file
// in order, then each --var in order (Terraform's precedence, with the environment's
// values between defaults and files), converted to its type, and runs the validations.
func resolveVariables(vars map[string]*variable, order []string, env []envValue, in Vars, files map[string]*hcl.File, ctx *hcl.EvalContext) (map[string]cty.Value, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	vals := map[string]cty.Value{}
	where := map[string]hcl.Range{}
	failed := map[string]bool{} // given a value that was refused: reported once, not also as missing
	set := func(name string, val cty.Value, r hcl.Range, raw bool) {
		v := vars[name]
		if raw && (v.typ.IsPrimitiveType() || v.typ == cty.DynamicPseudoType) {
			// --var values of primitive or unconstrained types are taken literally, as Terraform does.
			val = cty.StringVal(val.AsString())
		} else if raw {
			expr, ds := hclsyntax.ParseExpression([]byte(val.AsString()), r.Filename, hcl.InitialPos)
			if ds.HasErrors() {
				diags, failed[name] = append(diags, ds...), true
				return
			}
			ev, ds := expr.Value(ctx)
			if ds.HasErrors() {
				diags, failed[name] = append(diags, ds...), true
				return
			}
			val = ev
		}
		cv, err := convert.Convert(val, v.typ)
		if err != nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid value for variable",
				Detail: fmt.Sprintf("The value for var.%s is not a %s: %s.", name, v.typ.FriendlyName(), err), Subject: r.Ptr()})
			failed[name] = true
			return
		}
		vals[name], where[name] = cv, r
	}
	for _, name := range order {
		if v := vars[name]; v.def != cty.NilVal {
			vals[name], where[name] = v.def, v.decl
		}
	}
	for _, ev := range env {
		if vars[ev.name] == nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Value for undeclared variable",
				Detail: fmt.Sprintf("The environment's variables set %q, but no variable %q is declared.%s Declare it with variable %q {}, or remove it here.",
					ev.name, ev.name, didYouMean(ev.name, order), ev.name),
				Subject: ev.nameRange.Ptr()})
			continue
		}
		set(ev.name, ev.val, ev.rng, false)
	}
	for _, path := range in.Files {
		diags = append(diags, readVarFile(path, vars, files, ctx, set)...)
	}
	for _, arg := range in.Args {
		name, value, ok := strings.Cut(arg, "=")
		name = strings.TrimSpace(name)
		r := hcl.Range{Filename: "--var " + name}
		switch {
		case !ok || name == "":
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid --var option",
				Detail: fmt.Sprintf("%q is not NAME=VALUE; write --var replicas=3.", arg)})
		case vars[name] == nil:
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Value for undeclared variable",
				Detail: fmt.Sprintf("--var sets %q, but no variable %q is declared.%s Declare it with variable %q {}.", name, name, didYouMean(name, order), name)})
		default:
			set(name, cty.StringVal(value), r, true)
		}
	}
	for _, name := range order {
		if _, ok := vals[name]; !ok && !failed[name] {
			v := vars[name]
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "No value for required variable",
				Detail:  fmt.Sprintf("var.%s has no default and no value; set it with --var %s=VALUE, in a --var-file, or give it a default.", name, name),
				Subject: v.decl.Ptr()})
		}
	}
	if diags.HasErrors() {
		return vals, diags
	}
	return vals, append(diags, validateVariables(vars, order, vals, ctx)...)
}

// readVarFile reads one tfvars-style file: NAME = value attributes.
func readVarFile(path string, vars map[string]*variable, files map[string]*hcl.File, ctx *hcl.EvalContext, set func(string, cty.Value, hcl.Range, bool)) hcl.Diagnostics {
	src, err := os.ReadFile(path)
	if err != nil {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Cannot read variables file",
			Detail: fmt.Sprintf("read --var-file %s: %s", path, err)}}
	}
	if diags := checkText(src, path); diags.HasErrors() {
		return diags
	}
	f, diags := hclsyntax.ParseConfig(src, path, hcl.InitialPos)
	if f != nil {
		files[path] = f
	}
	if diags.HasErrors() {
		return diags
	}
	toks, _ := hclsyntax.LexConfig(src, path, hcl.InitialPos)
	diags = append(diags, invisibleChars(toks)...)
	attrs, ds := f.Body.JustAttributes()
	diags = append(diags, ds...)
	names := make([]string, 0, len(vars))
	for n := range vars {
		names = append(names, n)
	}
	for _, a := range sortedAttrs(attrs) {
		if vars[a.Name] == nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Value for undeclared variable",
				Detail:  fmt.Sprintf("%s sets %q, but no variable %q is declared; the value is ignored.%s", path, a.Name, a.Name, didYouMean(a.Name, names)),
				Subject: a.NameRange.Ptr()})
			continue
		}
		val, ds := a.Expr.Value(ctx)
		diags = append(diags, ds...)
		if !ds.HasErrors() {
			set(a.Name, val, a.Expr.Range(), false)
		}
	}
	return diags
}

func sortedAttrs(attrs hcl.Attributes) []*hcl.Attribute {
	out := make([]*hcl.Attribute, 0, len(attrs))
	for _, a := range attrs {
		out = append(out, a)
	}
	sortByRange(out, func(a *hcl.Attribute) hcl.Range { return a.Range })
	return out
}

// validateVariables runs every validation block against the final values.
func validateVariables(vars map[string]*variable, order []string, vals map[string]cty.Value, ctx *hcl.EvalContext) hcl.Diagnostics {
	var diags hcl.Diagnostics
	vctx := ctx.NewChild()
	vctx.Variables = map[string]cty.Value{"var": cty.ObjectVal(vals)}
	for _, name := range order {
		for _, val := range vars[name].validations {
			if val.cond == nil {
				continue
			}
			ok, ds := val.cond.Value(vctx)
			diags = append(diags, ds...)
			if ds.HasErrors() || !ok.IsWhollyKnown() {
				continue
			}
			b, err := convert.Convert(ok, cty.Bool)
			if err != nil || b.IsNull() {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid validation condition",
					Detail: "A validation condition must be true or false.", Subject: val.cond.Range().Ptr()})
				continue
			}
			if b.True() {
				continue
			}
			msg := fmt.Sprintf("var.%s failed its validation.", name)
			if val.msg != nil {
				if m, ds := val.msg.Value(vctx); !ds.HasErrors() && m.Type() == cty.String && m.IsKnown() && !m.IsNull() {
					msg = m.AsString()
				}
			}
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid value for variable",
				Detail: fmt.Sprintf("var.%s: %s", name, msg), Subject: val.cond.Range().Ptr()})
		}
	}
	return diags
}

// evalLocals evaluates all locals in dependency order into ctx's "local" object.
func evalLocals(attrs []*hclsyntax.Attribute, ctx *hcl.EvalContext) hcl.Diagnostics {
	var diags hcl.Diagnostics
	declared := map[string]*hclsyntax.Attribute{}
	for _, a := range attrs {
		if first, dup := declared[a.Name]; dup {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Duplicate local value",
				Detail:  fmt.Sprintf("local.%s is already defined at %s; define it once.", a.Name, rangeString(first.NameRange)),
				Subject: a.NameRange.Ptr()})
			continue
		}
		declared[a.Name] = a
	}
	vals := map[string]cty.Value{}
	pending := map[string]*hclsyntax.Attribute{}
	for n, a := range declared {
		pending[n] = a
	}
	for len(pending) > 0 {
		progress := false
		for _, a := range sortedSyntaxAttrs(pending) {
			if waitsOn(a, pending) {
				continue
			}
			ctx.Variables["local"] = cty.ObjectVal(vals)
			v, ds := a.Expr.Value(ctx)
			diags = append(diags, ds...)
			if ds.HasErrors() {
				v = cty.DynamicVal // later uses stay quiet: one mistake, one diagnostic
			}
			vals[a.Name] = v
			delete(pending, a.Name)
			progress = true
		}
		if !progress {
			first := sortedSyntaxAttrs(pending)[0]
			var names []string
			for _, a := range sortedSyntaxAttrs(pending) {
				names = append(names, "local."+a.Name)
				vals[a.Name] = cty.DynamicVal
			}
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cycle in local values",
				Detail:  fmt.Sprintf("These local values refer to each other: %s; break the cycle.", strings.Join(names, ", ")),
				Subject: first.NameRange.Ptr()})
			break
		}
	}
	ctx.Variables["local"] = cty.ObjectVal(vals)
	return diags
}

// waitsOn reports whether a refers to a local that is not evaluated yet.
func waitsOn(a *hclsyntax.Attribute, pending map[string]*hclsyntax.Attribute) bool {
	for _, tr := range a.Expr.Variables() {
		if tr.RootName() != "local" || len(tr) < 2 {
			continue
		}
		if at, ok := tr[1].(hcl.TraverseAttr); ok && pending[at.Name] != nil && at.Name != a.Name {
			return true
		}
		if at, ok := tr[1].(hcl.TraverseAttr); ok && at.Name == a.Name {
			return true
		}
	}
	return false
}

func sortedSyntaxAttrs(m map[string]*hclsyntax.Attribute) []*hclsyntax.Attribute {
	out := make([]*hclsyntax.Attribute, 0, len(m))
	for _, a := range m {
		out = append(out, a)
	}
	sortByRange(out, func(a *hclsyntax.Attribute) hcl.Range { return a.SrcRange })
	return out
}
