package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/permissions"
	"github.com/natsplan/natsplan/plan/render"
)

type permissionsOptions struct {
	Paths    []string
	Services []string
	Format   Format
}

func newCmdPermissions(f *Factory) *cobra.Command {
	o := &permissionsOptions{}
	c := &cobra.Command{
		Use:   "permissions [PATH...]",
		Short: "Print least-privilege NATS permissions for every service and for natsplan itself",
		Long: `permissions derives, from the files alone, the narrowest NATS permissions each service
block needs (its publishes, the pull, ack and info subjects of every lane it consumes,
the streams and buckets it reads and writes, and its own reply inbox), and those of
natsplan's two roles: natsplan-plan (read-only: plan, drift, status) and natsplan-apply
(create, update and delete this project's declared objects, and take its apply lock).
--format json prints one document; nats-server prints permissions {} blocks for a
server configuration's users; nsc prints the nsc commands for operator mode. No
server is needed. With --js-domain the JetStream API subjects are those of that domain.`,
		Example: `  natsplan permissions examples/shop
  natsplan permissions examples/shop --service fulfilment --format nats-server
  natsplan permissions --service natsplan-plan --format nsc`,
		RunE: func(c *cobra.Command, args []string) error {
			o.Paths = pathsOrDefault(args)
			if err := checkFormat(o.Format, formatJSON, formatNATSServer, formatNSC); err != nil {
				return err
			}
			return runPermissions(c.Context(), f, o)
		},
	}
	envFlag(c, f)
	c.Flags().StringArrayVar(&o.Services, "service", nil, "print only this service or role (repeatable)")
	formatFlag(c, &o.Format, formatJSON, formatNATSServer, formatNSC)
	return c
}

func runPermissions(ctx context.Context, f *Factory, o *permissionsOptions) error {
	return f.samePerEnvironment(ctx, o.Paths, "permissions", func(ef *Factory, desired *model.Model, w io.Writer) error {
		return derivePermissions(ef, desired, o, w)
	})
}

// derivePermissions writes the permissions of desired's services and natsplan's roles.
func derivePermissions(f *Factory, desired *model.Model, o *permissionsOptions, w io.Writer) error {
	domain, err := f.jsDomain()
	if err != nil {
		return err
	}
	roles := permissions.InDomain(permissions.Derive(desired), domain)
	if len(o.Services) > 0 {
		var names []string
		for _, r := range roles {
			names = append(names, r.Name)
		}
		for _, s := range o.Services {
			if !slices.Contains(names, s) {
				return usageErr("--service %s: no service %q is declared; the files declare %s", s, s, strings.Join(names, ", "))
			}
		}
		roles = slices.DeleteFunc(roles, func(r *permissions.Role) bool { return !slices.Contains(o.Services, r.Name) })
	}
	for _, is := range permissions.Check(desired) {
		if is.Severity == permissions.SevError {
			return fmt.Errorf("%s %s: %s; run natsplan validate for every finding", is.Code, is.Address, is.Message)
		}
	}
	switch o.Format {
	case formatNATSServer:
		return permissions.WriteServerConfig(w, roles)
	case formatNSC:
		return permissions.WriteNSC(w, roles)
	}
	return render.WriteJSON(w, permissions.Document(roles))
}
