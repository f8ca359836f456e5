package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/model"
)

// warnEmbeddedMemory tells an --embedded run which declared objects live in memory:
// the embedded server runs only as long as one command, so they are gone on the next
// run and its plan creates them again.
func warnEmbeddedMemory(w io.Writer, m *model.Model) {
	var objs []string
	for _, s := range m.Streams {
		if s.Config.Storage == server.MemoryStorage {
			objs = append(objs, s.Address())
		}
	}
	for _, c := range m.Consumers {
		st := m.Streams[c.Stream]
		if c.Config.MemoryStorage && (st == nil || st.Config.Storage != server.MemoryStorage) {
			objs = append(objs, c.Address())
		}
	}
	if len(objs) == 0 {
		return
	}
	sort.Strings(objs)
	fmt.Fprintf(w, "Warning: --embedded runs its server only while this command runs, and memory storage does not "+
		"survive a restart: %s will be gone on the next run, whose plan creates them again. Use storage = \"file\" "+
		"(and no mem_storage) to keep them between runs.\n", strings.Join(objs, ", "))
}
