package permissions

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Document is the JSON form of roles: each role's name mapped to its permissions.
func Document(roles []*Role) map[string]Permissions {
	doc := make(map[string]Permissions, len(roles))
	for _, r := range roles {
		doc[r.Name] = r.Permissions
	}
	return doc
}

// describe is the one-line comment above a role in the text formats.
func describe(r *Role) string {
	if r.Service == nil {
		switch r.Name {
		case PlanRole:
			return "natsplan-plan: natsplan's read-only role (plan, drift, status)"
		default:
			return "natsplan-apply: natsplan's apply role (this project's declared objects and its apply lock)"
		}
	}
	where := ""
	if d := r.Service.Decl.String(); d != "" {
		where = ", declared at " + d
	}
	return fmt.Sprintf("service %s%s; its clients set the inbox prefix %s", r.Name, where, r.InboxPrefix)
}

// WriteServerConfig writes one permissions {} block per role, in the nats-server
// configuration syntax, to paste into the matching user of an accounts or
// authorization block.
func WriteServerConfig(w io.Writer, roles []*Role) error {
	return eachRole(w, roles, func(b *strings.Builder, r *Role) {
		b.WriteString("permissions {\n")
		serverDirection(b, "publish", r.Permissions.Publish)
		serverDirection(b, "subscribe", r.Permissions.Subscribe)
		b.WriteString("}\n")
	})
}

// eachRole writes every role, a blank line apart, each after a comment describing it.
func eachRole(w io.Writer, roles []*Role, write func(*strings.Builder, *Role)) error {
	var b strings.Builder
	for i, r := range roles {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "# %s\n", describe(r))
		write(&b, r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func serverDirection(b *strings.Builder, name string, s Subjects) {
	fmt.Fprintf(b, "  %s {\n", name)
	serverList(b, "allow", s.Allow)
	if len(s.Deny) > 0 {
		serverList(b, "deny", s.Deny)
	}
	b.WriteString("  }\n")
}

func serverList(b *strings.Builder, key string, subjects []string) {
	fmt.Fprintf(b, "    %s = [\n", key)
	for _, s := range subjects {
		// Quoted, so that '$' is not read as a variable reference.
		fmt.Fprintf(b, "      %s\n", strconv.Quote(s))
	}
	b.WriteString("    ]\n")
}

// WriteNSC writes the nsc commands that create each role's user in operator mode and
// set its permissions. The account is nsc's current one unless the user adds
// --account.
func WriteNSC(w io.Writer, roles []*Role) error {
	return eachRole(w, roles, func(b *strings.Builder, r *Role) {
		fmt.Fprintf(b, "nsc add user --name %s\n", shellQuote(r.Name))
		fmt.Fprintf(b, "nsc edit user --name %s", shellQuote(r.Name))
		nscFlags(b, "--allow-pub", r.Permissions.Publish.Allow)
		nscFlags(b, "--deny-pub", r.Permissions.Publish.Deny)
		nscFlags(b, "--allow-sub", r.Permissions.Subscribe.Allow)
		nscFlags(b, "--deny-sub", r.Permissions.Subscribe.Deny)
		b.WriteString("\n")
	})
}

func nscFlags(b *strings.Builder, flag string, subjects []string) {
	for _, s := range subjects {
		fmt.Fprintf(b, " \\\n  %s %s", flag, shellQuote(s))
	}
}

// shellQuote quotes s for a POSIX shell: subjects hold '$', '*' and '>'.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
