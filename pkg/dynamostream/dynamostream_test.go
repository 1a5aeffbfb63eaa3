package dynamostream_test

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/interrupthost/interrupthost/pkg/dynamostream"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// batch is a stream batch as Lambda delivers it: a commit, a subscription item, a retention
// update of a commit (MODIFY, the same commit id), a commit written over an expired one (MODIFY,
// another commit id), a commit of another tenant with an idempotency record, an unreadable one.
//
//go:embed testdata/batch.json
var batch []byte

// recorder is a deliverer that keeps what it is given and fails the commits fail names.
type recorder struct {
	got  []runlog.StreamRecord
	fail map[string]bool
}

func (r *recorder) Commits(_ context.Context, b []runlog.StreamRecord) (outbound.Report, []error) {
	r.got = append(r.got, b...)
	errs := make([]error, len(b))
	for i, c := range b {
		if r.fail[c.Key.RunID] {
			errs[i] = errors.New("the store is unavailable")
		}
	}
	return outbound.Report{Commits: len(b)}, errs
}

func event(t *testing.T) events.DynamoDBEvent {
	t.Helper()
	var ev events.DynamoDBEvent
	if err := json.Unmarshal(batch, &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// TestNewCommitsAreDelivered: inserted commits and commits written over expired ones reach the
// deliverer, in stream order, read as the log stores them; a retention update does not; the
// unreadable one is logged and passed over.
func TestNewCommitsAreDelivered(t *testing.T) {
	var logs bytes.Buffer
	r := &recorder{}
	resp, err := dynamostream.Handler(r, slog.New(slog.NewJSONHandler(&logs, nil)))(context.Background(), event(t))
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("%+v %v", resp, err)
	}
	if len(r.got) != 3 || r.got[0].Key.RunID != "run-1" || r.got[0].Rewrite ||
		r.got[1].Key.RunID != "run-7" || !r.got[1].Rewrite || r.got[1].Commit.ID != "new" ||
		r.got[2].Key.Tenant != "globex" || r.got[2].Commit.Seq != 3 || r.got[2].Rewrite {
		t.Fatalf("delivered %+v", r.got)
	}
	envs := r.got[0].Commit.Envelopes("run-1")
	if len(envs) != 2 || envs[0].Type != "interrupt.requested" || envs[1].Type != "approval.requested" || envs[0].At != "2026-11-30T09:00:00.123Z" ||
		string(envs[0].Payload) != `{"kind":"approval","key":"k","data":{"title":"Pay <1> & 2"}}` {
		t.Errorf("envelopes %+v", envs)
	}
	if r.got[2].Commit.Idem == nil || r.got[2].Commit.Idem.Key != "engine/k" {
		t.Errorf("idempotency record %+v", r.got[2].Commit.Idem)
	}
	if !strings.Contains(logs.String(), `"sequenceNumber":"104"`) {
		t.Errorf("the unreadable commit was not logged: %s", logs.String())
	}
}

// TestAFailedCommitIsRetriedFromIt: the response names the first commit not handled, so that
// Lambda retries from it (and everything after it).
func TestAFailedCommitIsRetriedFromIt(t *testing.T) {
	r := &recorder{fail: map[string]bool{"run-9": true}}
	resp, err := dynamostream.Handler(r, slog.New(slog.DiscardHandler))(context.Background(), event(t))
	if err != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "103" {
		t.Fatalf("%+v %v, want a retry from 103", resp, err)
	}
}
