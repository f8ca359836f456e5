package status

import (
	"context"
	"time"

	"github.com/natsplan/natsplan/internal/jsapi"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/observe"
)

// Read takes one sample: every stream (paged, to find the declared ones and the
// dead-letter streams' depth) and the consumer lists of the streams desired declares,
// paged and a bounded number at a time, the way plan reads. A consumer or stream
// deleted while it is read is simply absent.
func Read(ctx context.Context, c *jsapi.Client, desired *model.Model, o observe.Options) (*Sample, error) {
	streams := Streams(desired)
	o.ConsumersOf = func(name string) bool { return streams[name] }
	live, err := observe.Read(ctx, c, o)
	if err != nil {
		return nil, err
	}
	return &Sample{Time: time.Now().UTC(), Live: live}, nil
}

// Streams are the streams whose consumers status reads: every declared stream, the
// streams declared consumers read, and their dead-letter streams.
func Streams(desired *model.Model) map[string]bool {
	out := map[string]bool{}
	for name := range desired.Streams {
		out[name] = true
	}
	for _, c := range desired.Consumers {
		out[c.Stream] = true
		if c.DeadLetter != nil && c.DeadLetter.Stream != "" {
			out[c.DeadLetter.Stream] = true
		}
	}
	return out
}
