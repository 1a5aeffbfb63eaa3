package storetest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// Exercise runs every case of the host.Store contract against stores that open returns, one
// subtest a concern, so that a store's test names which part of the contract it breaks. Call it
// from a store package's tests; open must return an empty store each time (see the package doc).
func Exercise(t *testing.T, open func(t *testing.T) host.Store) {
	for _, c := range []struct {
		concern string
		run     func(*testing.T, func(*testing.T) host.Store)
	}{
		{"log", logContract},
		{"correlations", correlationsContract},
		{"deadlines", deadlinesContract},
		{"waiting", waitingContract},
		{"runs", runsContract},
		{"assignments", assignmentsContract},
		{"retention", retentionContract},
		{"checkpoint", checkpointContract},
	} {
		t.Run(c.concern, func(t *testing.T) {
			t.Parallel()
			c.run(t, open)
		})
	}
}

// commitOf is commit seq of one interrupt.requested event of payload, at a second of its own.
func commitOf(seq int64, payload string) runlog.Commit {
	return runlog.Commit{Seq: seq, ID: fmt.Sprintf("c%d", seq), At: time.Date(2026, 11, 30, 9, 0, int(seq), 0, time.UTC), Events: []runlog.Event{
		{Type: "interrupt.requested", NodeID: "n1", InterruptID: "i1", Payload: json.RawMessage(payload)},
	}}
}

// second and third are the error of a call that answers more.
func second[T any](_ T, err error) error        { return err }
func third[A, B any](_ A, _ B, err error) error { return err }
