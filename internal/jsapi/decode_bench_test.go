package jsapi

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/internal/testsrv"
)

// BenchmarkDecodeReply decodes the server's own list replies (a page of 256 streams,
// and the consumers of one stream with 2) the way Request does (once, the error read
// from the reply type) and the way it did before (the error alone first, then the
// reply): the difference is what a read of a large account saves.
//
//	go test ./internal/jsapi -run '^$' -bench DecodeReply -benchmem
func BenchmarkDecodeReply(b *testing.B) {
	c := New(testsrv.Connect(b, testsrv.Start(b)), "", 30*time.Second)
	ctx := context.Background()
	for i := range 256 {
		name := fmt.Sprintf("S%03d", i)
		if _, err := c.CreateStream(ctx, name, json.RawMessage(fmt.Sprintf(`{"name":%q,"subjects":["s%d.>"],"max_age":3600000000000,"metadata":{"natsplan.project":"bench"}}`, name, i))); err != nil {
			b.Fatal(err)
		}
	}
	for _, n := range []string{"a", "b"} {
		cfg := fmt.Sprintf(`{"stream_name":"S000","config":{"durable_name":%q,"ack_policy":"explicit","max_ack_pending":100,"metadata":{"natsplan.project":"bench"}}}`, n)
		if err := c.Request(ctx, "create", "CONSUMER.DURABLE.CREATE.S000."+n, json.RawMessage(cfg), nil); err != nil {
			b.Fatal(err)
		}
	}
	reply := func(subject string) []byte {
		msg, err := c.NC.Request("$JS.API."+subject, []byte(`{"offset":0}`), 5*time.Second)
		if err != nil {
			b.Fatal(err)
		}
		return msg.Data
	}
	cases := []struct {
		name string
		data []byte
		resp func() any
	}{
		{"streams", reply("STREAM.LIST"), func() any { return &server.JSApiStreamListResponse{} }},
		{"consumers", reply("CONSUMER.LIST.S000"), func() any { return &server.JSApiConsumerListResponse{} }},
	}
	for _, tc := range cases {
		b.Run(tc.name+"/once", func(b *testing.B) {
			b.SetBytes(int64(len(tc.data)))
			for b.Loop() {
				if err := decodeReply("list", tc.data, tc.resp()); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(tc.name+"/error-first", func(b *testing.B) {
			b.SetBytes(int64(len(tc.data)))
			for b.Loop() {
				// What Request did before, and still does for a type without ToError.
				var ar apiResponse
				if err := json.Unmarshal(tc.data, &ar); err != nil || ar.Error != nil {
					b.Fatal(err, ar.Error)
				}
				if err := json.Unmarshal(tc.data, tc.resp()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
