package main

import (
	"encoding/json"
	"fmt"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/spf13/cobra"
)

func newCmdVersion(f *Factory) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "version",
		Short: "Print natsplan's version and the JetStream API level it was built against",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			v := struct {
				Version  string `json:"version"`
				Server   string `json:"nats_server"`
				APILevel int    `json:"api_level"`
			}{version, server.VERSION, server.JSApiLevel}
			if asJSON {
				return json.NewEncoder(f.IO.Out).Encode(v)
			}
			_, err := fmt.Fprintf(f.IO.Out, "natsplan %s (nats-server %s, JetStream API level %d)\n", v.Version, v.Server, v.APILevel)
			return err
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return c
}
