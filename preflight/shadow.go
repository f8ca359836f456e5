package preflight

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/natsplan/natsplan/internal/jsapi"
)

// shadowStore is the storage the shadow may reserve: far above any real limit, so that
// the shadow itself never refuses for size. Account and server sizes are the target's,
// checked by plan (NP403).
const shadowStore = 1 << 62

// shadowTimeout bounds each request to the shadow. It answers in microseconds; the
// bound only keeps a wedged shadow from hanging the command.
const shadowTimeout = 10 * time.Second

// shadow is a private in-process nats-server with JetStream: no listener, no logs, a
// temporary store removed when it stops.
type shadow struct {
	srv *server.Server
	nc  *nats.Conn
	js  *jsapi.Client
	dir string
}

// startShadow starts the shadow server, with the target's server-wide JetStream limits
// as the files declare them, and connects to it in process.
func startShadow(ctx context.Context, limits server.JSLimitOpts) (*shadow, error) {
	dir, err := os.MkdirTemp("", "natsplan-preflight-")
	if err != nil {
		return nil, fmt.Errorf("preflight: a temporary store for the check server: %w (set TMPDIR to a writable folder)", err)
	}
	sh := &shadow{dir: dir}
	opts := &server.Options{
		ServerName:         "natsplan-preflight",
		DontListen:         true,
		NoLog:              true,
		NoSigs:             true,
		JetStream:          true,
		StoreDir:           dir,
		JetStreamMaxMemory: shadowStore,
		JetStreamMaxStore:  shadowStore,
		JetStreamLimits:    limits,
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		sh.stop()
		return nil, fmt.Errorf("preflight: start the check server: %w", err)
	}
	sh.srv = srv
	go srv.Start()
	if !srv.ReadyForConnections(shadowTimeout) {
		sh.stop()
		return nil, fmt.Errorf("preflight: the check server did not start within %s", shadowTimeout)
	}
	if err := ctx.Err(); err != nil {
		sh.stop()
		return nil, err
	}
	nc, err := nats.Connect("", nats.InProcessServer(srv), nats.Name("natsplan-preflight"), nats.NoReconnect())
	if err != nil {
		sh.stop()
		return nil, fmt.Errorf("preflight: connect to the check server: %w", err)
	}
	sh.nc = nc
	sh.js = jsapi.New(nc, "", shadowTimeout)
	return sh, nil
}

// stop closes the connection, shuts the server down and removes its store. It is
// safe on a partly started shadow.
func (sh *shadow) stop() {
	if sh.nc != nil {
		sh.nc.Close()
	}
	if sh.srv != nil {
		sh.srv.Shutdown()
		sh.srv.WaitForShutdown()
	}
	if sh.dir != "" {
		os.RemoveAll(sh.dir)
	}
}
