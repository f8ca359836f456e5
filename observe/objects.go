package observe

import (
	"context"
	"fmt"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/model"
)

// ReadObjects re-reads the target and just the named streams and consumers, with
// STREAM.INFO and CONSUMER.INFO, to verify a saved plan against the server. An object
// that does not exist is absent from the model; configs are the same values Read
// returns for the same objects.
func ReadObjects(ctx context.Context, c *jsapi.Client, streams []string, consumers []model.ConsumerKey) (*model.Model, error) {
	m := model.New()
	t, err := readTarget(ctx, c)
	if err != nil {
		return nil, err
	}
	m.Target = t
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(DefaultParallelism)
	var mu sync.Mutex
	for _, name := range streams {
		g.Go(func() error {
			si, err := c.StreamInfo(gctx, name)
			if err != nil {
				return fmt.Errorf("observe stream %s: %w", name, err)
			}
			if si == nil {
				return nil
			}
			s := toStream(si)
			mu.Lock()
			defer mu.Unlock()
			m.Streams[s.Name] = s
			return nil
		})
	}
	for _, k := range consumers {
		g.Go(func() error {
			ci, err := c.ConsumerInfo(gctx, k.Stream, k.Name)
			if err != nil {
				return fmt.Errorf("observe consumer %s: %w", k, err)
			}
			if ci == nil || ci.Config == nil {
				return nil
			}
			cn := toConsumer(k.Stream, ci)
			mu.Lock()
			defer mu.Unlock()
			m.Consumers[cn.Key()] = cn
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return m, nil
}

// ReadState reads what apply's data-loss checks need at the moment it runs: the named
// streams with their state, then every consumer of those for which listConsumers is true.
func ReadState(ctx context.Context, c *jsapi.Client, streams []string, listConsumers func(*model.Stream) bool) (*model.Model, error) {
	m, err := ReadObjects(ctx, c, streams, nil)
	if err != nil {
		return nil, err
	}
	if err := readAllConsumers(ctx, c, m, DefaultParallelism, listConsumers); err != nil {
		return nil, err
	}
	return m, nil
}
