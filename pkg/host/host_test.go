package host_test

import (
	"context"
	"sync"
	"testing"

	"github.com/interrupthost/interrupthost/internal/hosttest"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

var alice = interrupt.Principal{Subject: "alice", Tenant: "acme"}

// lostAnswer commits the first append it is given and then reports it as taken, as a put does
// whose answer was lost and which the SDK retried into its own condition.
type lostAnswer struct {
	host.Store
	once sync.Once
}

func (l *lostAnswer) Append(ctx context.Context, k runlog.Key, c runlog.Commit) error {
	lost := false
	l.once.Do(func() { lost = true })
	if err := l.Store.Append(ctx, k, c); err != nil || !lost {
		return err
	}
	return runlog.ErrSeqTaken
}

// TestCommitRecognisesItsOwnCommit: a commit whose append answers ErrSeqTaken, though it landed,
// is recognised as the host's own and answered as made, not retried over or refused.
func TestCommitRecognisesItsOwnCommit(t *testing.T) {
	t.Parallel()
	h, _ := hosttest.MemHostOn(t, func(l host.Store) host.Store { return &lostAnswer{Store: l} })
	ctx := context.Background()
	v, created, err := h.RequestInterrupt(ctx, alice, "r1", host.Request{NodeID: "n1", Payload: hosttest.Example(t, "custom")})
	if err != nil || !created || v.Seq != 1 {
		t.Fatalf("request whose answer was lost: %+v created=%v err=%v", v, created, err)
	}
	events, err := h.Events(ctx, alice, "r1", 0, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(events.Events) != 1 || events.Events[0].InterruptID != v.InterruptID {
		t.Errorf("log %+v, want the one commit of %s", events.Events, v.InterruptID)
	}
}
