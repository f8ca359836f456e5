package observe

import (
	"slices"
	"strings"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/model"
)

// classify tells what a stream is to the user, from the shapes nats.go's jetstream
// package creates: a KV bucket is stream KV_<b> with subjects ["$KV.<b>.>"] (or, as a
// KV mirror, no subjects and a mirror of another KV_ stream); an object store is
// stream OBJ_<b> with subjects "$O.<b>.C.>" and "$O.<b>.M.>". Anything else is a
// plain stream. It returns the kind and the bucket name ("" for a stream).
func classify(cfg *server.StreamConfig) (model.Kind, string) {
	if b, ok := strings.CutPrefix(cfg.Name, "KV_"); ok && b != "" {
		if slices.Equal(cfg.Subjects, []string{"$KV." + b + ".>"}) {
			return model.KindKV, b
		}
		if len(cfg.Subjects) == 0 && cfg.Mirror != nil && strings.HasPrefix(cfg.Mirror.Name, "KV_") {
			return model.KindKV, b
		}
	}
	if b, ok := strings.CutPrefix(cfg.Name, "OBJ_"); ok && b != "" && len(cfg.Subjects) == 2 {
		subs := slices.Sorted(slices.Values(cfg.Subjects))
		if slices.Equal(subs, []string{"$O." + b + ".C.>", "$O." + b + ".M.>"}) {
			return model.KindObjectStore, b
		}
	}
	return model.KindStream, ""
}
