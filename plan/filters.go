package plan

import "github.com/nats-io/nats-server/v2/server"

// filtersOf is a consumer's filter set; an empty set means everything.
func filtersOf(cfg server.ConsumerConfig) []string {
	if cfg.FilterSubject != "" {
		return []string{cfg.FilterSubject}
	}
	if len(cfg.FilterSubjects) == 0 {
		return []string{">"}
	}
	return cfg.FilterSubjects
}

// narrows reports whether some subject matched by before is matched by nothing in after.
func narrows(before, after []string) bool {
	for _, b := range before {
		covered := false
		for _, a := range after {
			if server.SubjectMatchesFilter(b, a) {
				covered = true
				break
			}
		}
		if !covered {
			return true
		}
	}
	return false
}
