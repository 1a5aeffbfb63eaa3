package gateway

import (
	"context"
	"time"
)

// scheduled is a function EventBridge Scheduler invokes on a schedule.
type scheduled struct {
	function string
	every    time.Duration
	input    []byte
	pool     *Pool
}

// RunSchedules stands in for EventBridge Scheduler: it invokes each scheduled function of the
// template under the emulator on its schedule, with the schedule's input as the event, until
// ctx ends. A positive period replaces every schedule's (STACK_SCHEDULE_PERIOD), so tests need
// not wait a minute. One function's invocations never overlap, as a pool of one would have it.
func (g *Gateway) RunSchedules(ctx context.Context, period time.Duration) {
	for _, s := range g.schedules {
		every := s.every
		if period > 0 {
			every = period
		}
		go func() {
			tick := time.NewTicker(every)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				id := newRequestID()
				if _, err := s.pool.Invoke(ctx, id, s.input); err != nil && ctx.Err() == nil {
					g.log.Error("scheduled invocation failed", "function", s.function, "requestId", id, "error", err)
				}
			}
		}()
	}
}
