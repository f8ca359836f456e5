package model

import "strings"

// Identity names the target for a heading: the redacted URL, then the server, cluster,
// JetStream domain and account when known ("nats://a:4222, server n1, cluster east").
// It holds nothing secret: URL is always the redacted one.
func (t *Target) Identity() string {
	if t == nil {
		return ""
	}
	var parts []string
	if t.URL != "" {
		parts = append(parts, t.URL)
	}
	for _, p := range [][2]string{{"server", t.Server}, {"cluster", t.Cluster}, {"domain", t.Domain}, {"account", t.Account}} {
		if p[1] != "" {
			parts = append(parts, p[0]+" "+p[1])
		}
	}
	return strings.Join(parts, ", ")
}
