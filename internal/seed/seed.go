// Package seed creates a model's streams and consumers on a server the way apply
// sends them (normalised, pedantic), for tests that need the topology in place before
// they play workers against it.
package seed

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan"
)

// Create creates every stream of m, then every consumer.
func Create(ctx context.Context, api *jsapi.Client, m *model.Model) error {
	for _, name := range m.StreamNames() {
		cfg := plan.NormalizeStream(m.Streams[name].Config, nil)
		b, err := json.Marshal(cfg)
		if err != nil {
			return err
		}
		if _, err := api.CreateStream(ctx, name, b); err != nil {
			return fmt.Errorf("create stream %s: %w", name, err)
		}
	}
	for _, k := range m.ConsumerKeys() {
		st := plan.NormalizeStream(m.Streams[k.Stream].Config, nil)
		cfg := plan.NormalizeConsumer(m.Consumers[k].Config, &st, nil)
		b, err := json.Marshal(cfg)
		if err != nil {
			return err
		}
		if _, err := api.WriteConsumer(ctx, k.Stream, k.Name, b, jsapi.ConsumerCreate); err != nil {
			return fmt.Errorf("create consumer %s: %w", k, err)
		}
	}
	return nil
}
