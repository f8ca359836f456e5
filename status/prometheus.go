package status

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/natsplan/natsplan/internal/finding"
)

// Prometheus writes r in the Prometheus text exposition format: gauges per consumer,
// lane and group labelled stream, consumer, group and lane; the dead-letter depth;
// and, for every NP5xx code, how many findings of it hold (zero included), so a
// node-exporter textfile or a cron job can feed alerting.
func Prometheus(w io.Writer, r *Report) error {
	p := &promWriter{}
	for _, fam := range families {
		p.family(fam.name, fam.help, fam.typ)
		fam.samples(r, func(labels [][2]string, v float64) { p.sample(fam.name, labels, v) })
	}
	_, err := w.Write(p.b.Bytes())
	return err
}

// PrometheusEnvironments writes the reports of several environments as one exposition:
// each metric family once (one HELP and one TYPE line), its series from every
// environment in order, each series labelled environment="NAME" first. An environment
// with no report has no series but natsplan_environment_up 0, so an alert can see it.
func PrometheusEnvironments(w io.Writer, envs []*EnvReport) error {
	p := &promWriter{}
	p.family("natsplan_environment_up", "1 when the environment's server was read, 0 when it could not be (unreachable, refused by its expect guard, invalid configuration).", "gauge")
	for _, e := range envs {
		p.sample("natsplan_environment_up", [][2]string{{"environment", e.Name}}, boolValue(e.Report != nil))
	}
	for _, fam := range families {
		p.family(fam.name, fam.help, fam.typ)
		for _, e := range envs {
			if e.Report == nil {
				continue
			}
			fam.samples(e.Report, func(labels [][2]string, v float64) {
				p.sample(fam.name, append([][2]string{{"environment", e.Name}}, labels...), v)
			})
		}
	}
	_, err := w.Write(p.b.Bytes())
	return err
}

// family is one metric family: its HELP and TYPE, and the samples one report gives.
type family struct {
	name, help, typ string
	samples         func(r *Report, emit func(labels [][2]string, v float64))
}

// perConsumer is a family with one sample per consumer.
func perConsumer(name, help, typ string, value func(*Consumer) float64) family {
	return family{name, help, typ, func(r *Report, emit func([][2]string, float64)) {
		for _, c := range r.Consumers {
			emit(consumerLabels(c), value(c))
		}
	}}
}

// perGroup is a gauge with one sample per group.
func perGroup(name, help string, value func(*Group) float64) family {
	return family{name, help, "gauge", func(r *Report, emit func([][2]string, float64)) {
		for _, g := range r.Groups {
			emit([][2]string{{"stream", g.Stream}, {"group", g.Name}}, value(g))
		}
	}}
}

// families are the metric families in the order they are written.
var families = []family{
	perConsumer("natsplan_consumer_up", "1 when the declared consumer exists on the server, 0 when it is missing.", "gauge", func(c *Consumer) float64 { return boolValue(!c.Missing) }),
	perConsumer("natsplan_consumer_pending", "Messages waiting for delivery (num_pending).", "gauge", func(c *Consumer) float64 { return float64(c.NumPending) }),
	perConsumer("natsplan_consumer_ack_pending", "Messages in flight, delivered and not yet acknowledged (num_ack_pending).", "gauge", func(c *Consumer) float64 { return float64(c.NumAckPending) }),
	perConsumer("natsplan_consumer_max_ack_pending", "The in-flight limit shared by every worker of the consumer (max_ack_pending; -1 unlimited).", "gauge", func(c *Consumer) float64 { return float64(c.MaxAckPending) }),
	perConsumer("natsplan_consumer_redelivered", "Messages in flight delivered more than once (num_redelivered).", "gauge", func(c *Consumer) float64 { return float64(c.NumRedelivered) }),
	perConsumer("natsplan_consumer_waiting", "Pull requests parked on the consumer (num_waiting).", "gauge", func(c *Consumer) float64 { return float64(c.NumWaiting) }),
	perConsumer("natsplan_consumer_delivered_total", "Deliveries made, first and repeated (delivered.consumer_seq).", "counter", func(c *Consumer) float64 { return float64(c.Delivered) }),
	perConsumer("natsplan_consumer_ack_floor_total", "Deliveries below which every one is acknowledged (ack_floor.consumer_seq).", "counter", func(c *Consumer) float64 { return float64(c.AckFloor) }),
	{"natsplan_consumer_last_delivery_seconds", "Seconds since the last delivery; absent when there was none.", "gauge", func(r *Report, emit func([][2]string, float64)) {
		for _, c := range r.Consumers {
			if c.LastDelivery != nil {
				emit(consumerLabels(c), r.Time.Sub(*c.LastDelivery).Seconds())
			}
		}
	}},
	perGroup("natsplan_group_pending", "Messages waiting for delivery, summed over the group's consumers.", func(g *Group) float64 { return float64(g.NumPending) }),
	perGroup("natsplan_group_ack_pending", "Messages in flight, summed over the group's consumers.", func(g *Group) float64 { return float64(g.NumAckPending) }),
	perGroup("natsplan_group_max_ack_pending", "The in-flight limits of the group's consumers, summed.", func(g *Group) float64 { return float64(g.MaxAckPending) }),
	perGroup("natsplan_group_redelivered", "Messages in flight delivered more than once, summed over the group's consumers.", func(g *Group) float64 { return float64(g.NumRedelivered) }),
	perGroup("natsplan_group_waiting", "Pull requests parked, summed over the group's consumers.", func(g *Group) float64 { return float64(g.NumWaiting) }),
	{"natsplan_dead_letter_messages", "Messages held by a dead-letter stream.", "gauge", func(r *Report, emit func([][2]string, float64)) {
		for _, d := range r.DeadLetters {
			if !d.Missing {
				emit([][2]string{{"stream", d.Stream}}, float64(d.Msgs))
			}
		}
	}},
	{"natsplan_condition", "How many findings of each live condition code hold (docs/rules/<code>.md).", "gauge", func(r *Report, emit func([][2]string, float64)) {
		counts := map[finding.Code]int{}
		for _, f := range r.Findings {
			counts[f.Code]++
		}
		for _, code := range Codes {
			emit([][2]string{{"code", string(code)}}, float64(counts[code]))
		}
	}},
	{"natsplan_finding", "1 for each finding that holds, by code, severity and address.", "gauge", func(r *Report, emit func([][2]string, float64)) {
		for _, f := range r.Findings {
			emit([][2]string{{"code", string(f.Code)}, {"severity", string(f.Severity)}, {"address", f.Address}}, 1)
		}
	}},
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// consumerLabels are a consumer's labels; group and lane are empty outside a group.
func consumerLabels(c *Consumer) [][2]string {
	return [][2]string{{"stream", c.Stream}, {"consumer", c.Name}, {"group", strings.TrimPrefix(c.Group, "consumer_group.")}, {"lane", c.Lane}}
}

type promWriter struct{ b bytes.Buffer }

func (p *promWriter) family(name, help, typ string) {
	fmt.Fprintf(&p.b, "# HELP %s %s\n# TYPE %s %s\n", name, escapeHelp(help), name, typ)
}

func (p *promWriter) sample(name string, labels [][2]string, v float64) {
	p.b.WriteString(name)
	p.b.WriteByte('{')
	for i, l := range labels {
		if i > 0 {
			p.b.WriteByte(',')
		}
		p.b.WriteString(l[0])
		p.b.WriteString(`="`)
		p.b.WriteString(escapeLabel(l[1]))
		p.b.WriteByte('"')
	}
	p.b.WriteString("} ")
	p.b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
	p.b.WriteByte('\n')
}

// escapeLabel escapes a label value as the exposition format requires: backslash,
// double quote and line feed.
func escapeLabel(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

// escapeHelp escapes HELP text: backslash and line feed.
func escapeHelp(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(s)
}
