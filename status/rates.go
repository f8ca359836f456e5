package status

import "github.com/natsplan/natsplan/model"

// consumerRates are the per-second changes of c since prev (the same consumer in the
// previous sample), or nil when it did not exist then or was re-created since.
//
// Deliveries are exact: the server numbers every delivery, first or repeated, with
// the next consumer sequence. Acks are estimated from the ack floor, which passes one
// consumer sequence per acknowledged delivery while acks come in order and holds still
// behind a stuck message. Redeliveries are what is left of the deliveries once the new
// in-flight messages and the acks are accounted for.
func consumerRates(c *Consumer, prev *model.Consumer, interval float64) *Rates {
	if c.Missing || prev == nil || prev.State == nil || interval <= 0 || !prev.State.Created.Equal(c.created) {
		return nil
	}
	p := prev.State
	delivered := float64(c.Delivered) - float64(p.Delivered.Consumer)
	acked := float64(c.AckFloor) - float64(p.AckFloor.Consumer)
	inFlight := float64(c.NumAckPending) - float64(p.NumAckPending)
	redelivered := max(delivered-inFlight-acked, 0)
	return &Rates{
		Delivered:     max(delivered, 0) / interval,
		Acked:         max(acked, 0) / interval,
		Redelivered:   redelivered / interval,
		PendingGrowth: (float64(c.NumPending) - float64(p.NumPending)) / interval,
	}
}

// drain estimates the seconds until a backlog that went from before to now in
// interval seconds is gone, at the same pace; nil when it did not shrink.
func drain(before, now uint64, interval float64) *float64 {
	if now == 0 {
		zero := 0.0
		return &zero
	}
	if now >= before || interval <= 0 {
		return nil
	}
	s := float64(now) / ((float64(before) - float64(now)) / interval)
	return &s
}
