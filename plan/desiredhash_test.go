package plan

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/model"
)

// TestStreamedHashIsHash: desiredHash writes the document member by member; the hash
// must be Hash of the whole document, whatever the names and metadata hold.
func TestStreamedHashIsHash(t *testing.T) {
	t.Parallel()
	names := []string{"ORDERS", "metadata", "a<b>&c", "é", "_nats.x", "Z", "streams", "consumers", "project"}
	metas := []map[string]string{
		nil,
		{},
		{"owner": "team"},
		{"_nats.level": "1", "_nats.ver": "2.11"},
		{"_nats.req.level": "0", "k": "<v>&é\n\"q\""},
	}
	for i, project := range []string{"", "bench", "p<&>é"} {
		want := map[string]server.StreamConfig{}
		wantC := map[model.ConsumerKey]server.ConsumerConfig{}
		for j, name := range names {
			md := metas[(i+j)%len(metas)]
			want[name] = server.StreamConfig{Name: name, Subjects: []string{name + ".>"}, MaxAge: time.Hour,
				Storage: server.FileStorage, Replicas: 1, Metadata: md, Description: fmt.Sprintf("d%d\t%s", j, name)}
			for _, c := range names[:3] {
				wantC[model.ConsumerKey{Stream: name, Name: c}] = server.ConsumerConfig{Durable: c,
					AckPolicy: server.AckExplicit, MaxAckPending: 100, FilterSubjects: []string{name + ".a"}, Metadata: md}
			}
		}
		doc := hashDoc(project, want, wantC)
		got, ok := streamedHash(project, want, wantC)
		if !ok {
			t.Fatalf("project %q: the streamed hash gave up", project)
		}
		if whole := Hash(doc); got != whole {
			t.Errorf("project %q: streamed %s, whole document %s", project, got, whole)
		}
		if got != desiredHash(project, want, wantC) {
			t.Errorf("project %q: desiredHash differs from the streamed hash", project)
		}
	}
	// Empty maps.
	doc := hashDoc("x", map[string]server.StreamConfig{}, nil)
	if got, ok := streamedHash("x", map[string]server.StreamConfig{}, nil); !ok || got != Hash(doc) {
		t.Errorf("empty: streamed %s (ok %v), whole %s", got, ok, Hash(doc))
	}
}
