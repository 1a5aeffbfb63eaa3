package dynamo_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/pkg/dynamo"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

func commit(seq int64, payloadBytes int) runlog.Commit {
	return runlog.Commit{Seq: seq, ID: fmt.Sprintf("c%d", seq), At: time.Date(2026, 11, 30, 9, 0, 0, int(seq)*1_000_000, time.UTC), Events: []runlog.Event{
		{Type: "run.note", NodeID: "n", Payload: json.RawMessage(`"` + strings.Repeat("x", payloadBytes) + `"`)},
	}}
}

func TestAppendIsConditionalOnSeq(t *testing.T) {
	db, table := localaws.NewTable(t)
	l := dynamo.NewTable(db, table)
	ctx := context.Background()
	k := runlog.Key{Tenant: "acme", RunID: "r1"}
	if err := l.Append(ctx, k, commit(1, 1)); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(ctx, k, commit(1, 2)); !errors.Is(err, runlog.ErrSeqTaken) {
		t.Fatalf("second append at seq 1: %v, want ErrSeqTaken", err)
	}
	if err := l.Append(ctx, runlog.Key{Tenant: "other", RunID: "r1"}, commit(1, 3)); err != nil {
		t.Fatalf("another tenant's run shares no seqs: %v", err)
	}
	got, err := l.Read(ctx, k, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || string(got[0].Events[0].Payload) != `"x"` || got[0].ID != "c1" || !got[0].At.Equal(commit(1, 1).At) {
		t.Errorf("read %+v", got)
	}
}

// TestReadPages reads a log larger than one 1 MB Query page, whole and from cursors.
func TestReadPages(t *testing.T) {
	db, table := localaws.NewTable(t)
	l := dynamo.NewTable(db, table)
	ctx := context.Background()
	k := runlog.Key{Tenant: "acme", RunID: "big"}
	const n = 30
	for seq := int64(1); seq <= n; seq++ {
		if err := l.Append(ctx, k, commit(seq, 60_000)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		after int64
		limit int
		want  []int64
	}{
		{0, 0, seqs(1, n)}, {0, 25, seqs(1, 25)}, {10, 0, seqs(11, n)}, {28, 5, seqs(29, n)}, {n, 0, nil},
	} {
		got, err := l.Read(ctx, k, c.after, c.limit)
		if err != nil {
			t.Fatal(err)
		}
		var gotSeqs []int64
		for _, cm := range got {
			gotSeqs = append(gotSeqs, cm.Seq)
		}
		if fmt.Sprint(gotSeqs) != fmt.Sprint(c.want) {
			t.Errorf("after %d limit %d: %v, want %v", c.after, c.limit, gotSeqs, c.want)
		}
	}
}

func seqs(from, to int64) []int64 {
	var out []int64
	for s := from; s <= to; s++ {
		out = append(out, s)
	}
	return out
}

func TestUnreachableStoreIsUnavailable(t *testing.T) {
	db := localaws.DynamoDB(func(o *dynamodb.Options) {
		o.BaseEndpoint = new("http://127.0.0.1:1")
		o.RetryMaxAttempts = 1
	})
	l := dynamo.NewTable(db, "any")
	_, err := l.Read(context.Background(), runlog.Key{Tenant: "acme", RunID: "r1"}, 0, 0)
	if !errors.Is(err, interrupt.ErrUnavailable) {
		t.Errorf("read from a closed port: %v, want ErrUnavailable", err)
	}
	if err := l.Append(context.Background(), runlog.Key{Tenant: "acme", RunID: "r1"}, commit(1, 1)); !errors.Is(err, interrupt.ErrUnavailable) {
		t.Errorf("append to a closed port: %v, want ErrUnavailable", err)
	}
}

func TestMissingTableIsInternal(t *testing.T) {
	db, _ := localaws.NewTable(t)
	_, err := dynamo.NewTable(db, "no-such-table").Read(context.Background(), runlog.Key{Tenant: "acme", RunID: "r1"}, 0, 0)
	if err == nil || errors.Is(err, interrupt.ErrUnavailable) {
		t.Errorf("read from a missing table: %v, want an internal error", err)
	}
}

func TestPayloadsAreStoredAsWritten(t *testing.T) {
	db, table := localaws.NewTable(t)
	l := dynamo.NewTable(db, table)
	ctx := context.Background()
	k := runlog.Key{Tenant: "acme", RunID: "r1"}
	payload := `{"title":"<b>Q3 & Q4</b> \u2028 budget","n":1.50}`
	c := runlog.Commit{Seq: 1, ID: "c1", At: time.Now(), Events: []runlog.Event{{Type: "interrupt.requested", Payload: json.RawMessage(payload)}}}
	if err := l.Append(ctx, k, c); err != nil {
		t.Fatal(err)
	}
	got, err := l.Read(ctx, k, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if string(got[0].Events[0].Payload) != `{"title":"<b>Q3 & Q4</b> \u2028 budget","n":1.50}` {
		t.Errorf("stored %s", got[0].Events[0].Payload)
	}
}
