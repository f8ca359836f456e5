// Package jsapi is natsplan's thin client for the JetStream API. It speaks the wire
// format with the server's own types, so nothing is lost between the HCL and the
// server, and it sends create and update requests in pedantic mode so the server
// refuses rather than silently rewrites.
package jsapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Client sends JetStream API requests over one connection.
type Client struct {
	NC *nats.Conn
	// Prefix is "$JS.API", or "$JS.<domain>.API" for a JetStream domain.
	Prefix string
	// Timeout bounds each request when the context has no earlier deadline.
	Timeout time.Duration
	// Trace, when set, is shown every request and reply (--trace).
	Trace *Tracer
	// Denials, when set, fails a request whose publish the server denies at once.
	Denials *Denials
	// Fence, when set, is called before every write request; when it fails the
	// request is not sent and the write returns a *FencedError.
	Fence func(ctx context.Context) error
}

// FencedError is a write that was not sent because Client.Fence refused it.
type FencedError struct {
	Op  string
	Err error
}

func (e *FencedError) Error() string { return fmt.Sprintf("%s: not sent: %v", e.Op, e.Err) }

func (e *FencedError) Unwrap() error { return e.Err }

// fence asks Fence, if any, whether the write op may be sent now.
func (c *Client) fence(ctx context.Context, op string) error {
	if c.Fence == nil {
		return nil
	}
	if err := c.Fence(ctx); err != nil {
		return &FencedError{Op: op, Err: err}
	}
	return nil
}

// New returns a client for domain ("" for the connection's own JetStream).
func New(nc *nats.Conn, domain string, timeout time.Duration) *Client {
	prefix := "$JS.API"
	if domain != "" {
		prefix = "$JS." + domain + ".API"
	}
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	return &Client{NC: nc, Prefix: prefix, Timeout: timeout}
}

// Error is an error the JetStream API returned.
type Error struct {
	Op          string
	Code        int
	ErrCode     uint16
	Description string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s (%d/%d)", e.Op, e.Description, e.Code, e.ErrCode)
}

// IsNotFound reports whether err is the server's "stream not found" or "consumer not found".
func IsNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && (e.ErrCode == 10059 || e.ErrCode == 10014)
}

// ErrCode returns the JetStream error code of err, or 0.
func ErrCode(err error) uint16 {
	var e *Error
	if errors.As(err, &e) {
		return e.ErrCode
	}
	return 0
}

type apiResponse struct {
	Error *server.ApiError `json:"error,omitempty"`
}

// Request sends req (marshalled as JSON; nil sends an empty body) to Prefix+"."+subject
// and decodes the reply into resp. An API error becomes *Error.
func (c *Client) Request(ctx context.Context, op, subject string, req, resp any) error {
	var body []byte
	if req != nil {
		var err error
		if body, err = json.Marshal(req); err != nil {
			return fmt.Errorf("%s: encode request: %w", op, err)
		}
	}
	within := "in time"
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
		within = "within " + c.Timeout.String()
	}
	msg, err := c.watched(ctx, c.Prefix+"."+subject, body, c.request)
	if err != nil {
		if errors.Is(err, nats.ErrNoResponders) {
			return fmt.Errorf("%s: JetStream is not enabled for this account or domain (no responders on %s)", op, c.Prefix)
		}
		if errors.Is(err, nats.ErrReconnectBufExceeded) || errors.Is(err, nats.ErrConnectionReconnecting) {
			// With no reconnect buffer, nothing is queued while the connection is down.
			return fmt.Errorf("%s: not sent: the connection to the server is down: %w", op, err)
		}
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			// Say what "deadline exceeded" means here, and what to do.
			return fmt.Errorf("%s: no answer %s (%w): the server is overloaded or stalled, or, in a cluster, has no JetStream meta leader yet (just after a restart); try again, or raise --timeout", op, within, err)
		}
		return fmt.Errorf("%s: %w", op, err)
	}
	return decodeReply(op, msg.Data, resp)
}

// serverReply is what every reply type of the server's API has: the embedded
// ApiResponse, whose error ToError returns.
type serverReply interface{ ToError() error }

// decodeReply decodes a reply into resp, or returns the API error it carries as
// *Error. A reply type that embeds the server's ApiResponse (all of them do) is
// decoded once, its error read from it; the list replies of a large account are a
// real share of a plan's CPU, and decoding each twice cost a third more. Any other
// resp, a nil one, or a reply that does not decode into resp is first read for its
// error alone, so that the server's refusal, not a decode error, is what is reported.
func decodeReply(op string, data []byte, resp any) error {
	if r, ok := resp.(serverReply); ok {
		if json.Unmarshal(data, resp) == nil {
			return apiError(op, r.ToError())
		}
	}
	var ar apiResponse
	if err := json.Unmarshal(data, &ar); err != nil {
		return fmt.Errorf("%s: decode reply: %w", op, err)
	}
	if ar.Error != nil {
		return apiError(op, ar.Error)
	}
	if resp != nil {
		if err := json.Unmarshal(data, resp); err != nil {
			return fmt.Errorf("%s: decode reply: %w", op, err)
		}
	}
	return nil
}

// apiError is the server's error err (nil, or an *server.ApiError) as *Error.
func apiError(op string, err error) error {
	var e *server.ApiError
	if !errors.As(err, &e) || e == nil {
		return err
	}
	return &Error{Op: op, Code: e.Code, ErrCode: e.ErrCode, Description: e.Description}
}

// request sends one request, traced when Trace is set.
func (c *Client) request(ctx context.Context, subject string, body []byte) (*nats.Msg, error) {
	if c.Trace == nil {
		return c.NC.RequestWithContext(ctx, subject, body)
	}
	n, start := c.Trace.request(subject, body), time.Now()
	msg, err := c.NC.RequestWithContext(ctx, subject, body)
	var data []byte
	if msg != nil {
		data = msg.Data
	}
	c.Trace.reply(n, subject, time.Since(start), data, err)
	return msg, err
}

// AccountInfo returns the account's JetStream usage, limits and API level.
func (c *Client) AccountInfo(ctx context.Context) (*server.JetStreamAccountStats, error) {
	var r server.JSApiAccountInfoResponse
	if err := c.Request(ctx, "account info", "INFO", nil, &r); err != nil {
		return nil, err
	}
	if r.JetStreamAccountStats == nil {
		return nil, fmt.Errorf("account info: empty reply")
	}
	return r.JetStreamAccountStats, nil
}

// StreamPage is one page of STREAM.LIST.
type StreamPage struct {
	Total   int
	Streams []*server.StreamInfo
	Missing []string
	Offline map[string]string
}

// ListStreams reads one page of STREAM.LIST starting at offset (at most 256 streams).
func (c *Client) ListStreams(ctx context.Context, offset int) (*StreamPage, error) {
	var r server.JSApiStreamListResponse
	if err := c.Request(ctx, "list streams", "STREAM.LIST", server.JSApiStreamListRequest{ApiPagedRequest: server.ApiPagedRequest{Offset: offset}}, &r); err != nil {
		return nil, err
	}
	return &StreamPage{Total: r.Total, Streams: r.Streams, Missing: r.Missing, Offline: r.Offline}, nil
}

// ConsumerPage is one page of CONSUMER.LIST.
type ConsumerPage struct {
	Total     int
	Consumers []*server.ConsumerInfo
	Missing   []string
	Offline   map[string]string
}

// ListConsumers reads one page of CONSUMER.LIST of stream starting at offset.
func (c *Client) ListConsumers(ctx context.Context, stream string, offset int) (*ConsumerPage, error) {
	var r server.JSApiConsumerListResponse
	if err := c.Request(ctx, "list consumers of "+stream, "CONSUMER.LIST."+stream, server.ApiPagedRequest{Offset: offset}, &r); err != nil {
		return nil, err
	}
	return &ConsumerPage{Total: r.Total, Consumers: r.Consumers, Missing: r.Missing, Offline: r.Offline}, nil
}

// StreamInfo returns a stream's info, or nil, nil when it does not exist.
func (c *Client) StreamInfo(ctx context.Context, name string) (*server.StreamInfo, error) {
	var r server.JSApiStreamInfoResponse
	if err := c.Request(ctx, "stream info "+name, "STREAM.INFO."+name, nil, &r); err != nil {
		if IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return r.StreamInfo, nil
}

// ConsumerInfo returns a consumer's info, or nil, nil when it does not exist.
func (c *Client) ConsumerInfo(ctx context.Context, stream, name string) (*server.ConsumerInfo, error) {
	var r server.JSApiConsumerCreateResponse
	if err := c.Request(ctx, "consumer info "+stream+"/"+name, "CONSUMER.INFO."+stream+"."+name, nil, &r); err != nil {
		if IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return r.ConsumerInfo, nil
}

// streamRequest is the body of STREAM.CREATE and STREAM.UPDATE. It is built from raw
// JSON so the config is sent exactly as planned.
func streamRequest(cfg json.RawMessage, pedantic bool) (json.RawMessage, error) {
	if !pedantic {
		return cfg, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(cfg, &m); err != nil {
		return nil, err
	}
	m["pedantic"] = json.RawMessage("true")
	return json.Marshal(m)
}

// CreateStream creates a stream from its config JSON, in pedantic mode.
func (c *Client) CreateStream(ctx context.Context, name string, cfg json.RawMessage) (*server.StreamInfo, error) {
	return c.writeStream(ctx, "create stream "+name, "STREAM.CREATE."+name, cfg)
}

// UpdateStream updates a stream to the config JSON, in pedantic mode.
func (c *Client) UpdateStream(ctx context.Context, name string, cfg json.RawMessage) (*server.StreamInfo, error) {
	return c.writeStream(ctx, "update stream "+name, "STREAM.UPDATE."+name, cfg)
}

func (c *Client) writeStream(ctx context.Context, op, subject string, cfg json.RawMessage) (*server.StreamInfo, error) {
	body, err := streamRequest(cfg, true)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if err := c.fence(ctx, op); err != nil {
		return nil, err
	}
	var r server.JSApiStreamCreateResponse
	if err := c.Request(ctx, op, subject, body, &r); err != nil {
		return nil, err
	}
	return r.StreamInfo, nil
}

// DeleteStream deletes a stream and all its messages.
func (c *Client) DeleteStream(ctx context.Context, name string) error {
	op := "delete stream " + name
	if err := c.fence(ctx, op); err != nil {
		return err
	}
	return c.Request(ctx, op, "STREAM.DELETE."+name, nil, nil)
}

// ConsumerAction is the action of a CONSUMER.CREATE request.
type ConsumerAction string

// The consumer actions.
const (
	ConsumerCreate ConsumerAction = "create"
	ConsumerUpdate ConsumerAction = "update"
)

// WriteConsumer creates or updates a durable consumer from its config JSON, in pedantic mode.
func (c *Client) WriteConsumer(ctx context.Context, stream, name string, cfg json.RawMessage, action ConsumerAction) (*server.ConsumerInfo, error) {
	req := struct {
		Stream   string          `json:"stream_name"`
		Config   json.RawMessage `json:"config"`
		Action   ConsumerAction  `json:"action"`
		Pedantic bool            `json:"pedantic"`
	}{stream, cfg, action, true}
	op := string(action) + " consumer " + stream + "/" + name
	subject := "CONSUMER.CREATE." + stream + "." + name
	if err := c.fence(ctx, op); err != nil {
		return nil, err
	}
	var r server.JSApiConsumerCreateResponse
	if err := c.Request(ctx, op, subject, req, &r); err != nil {
		return nil, err
	}
	return r.ConsumerInfo, nil
}

// DeleteConsumer deletes a consumer and its delivery state.
func (c *Client) DeleteConsumer(ctx context.Context, stream, name string) error {
	op := "delete consumer " + stream + "/" + name
	if err := c.fence(ctx, op); err != nil {
		return err
	}
	return c.Request(ctx, op, "CONSUMER.DELETE."+stream+"."+name, nil, nil)
}

// PauseConsumer pauses a consumer until t; a zero t resumes it.
func (c *Client) PauseConsumer(ctx context.Context, stream, name string, until time.Time) error {
	var req any
	if !until.IsZero() {
		req = server.JSApiConsumerPauseRequest{PauseUntil: until.UTC()}
	}
	op := "pause consumer " + stream + "/" + name
	if err := c.fence(ctx, op); err != nil {
		return err
	}
	return c.Request(ctx, op, "CONSUMER.PAUSE."+stream+"."+name, req, nil)
}
