package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/infra/local/queues"
	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/internal/samtemplate"
	"github.com/interrupthost/interrupthost/pkg/dynamo"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// TestTheStreamsDeadLettersAreRedriven: commits the stream never delivered (written to the
// table past the stream stand-in, as a batch deliver-events gave up on leaves them) reach the
// subscription once Lambda's record of the failed batch is in the stream's dead-letter queue:
// the stack's SQS event source invokes redrive-stream, which reads them back from the table.
func TestTheStreamsDeadLettersAreRedriven(t *testing.T) {
	localaws.NeedsStack(t)
	t.Parallel()
	ctx := context.Background()
	op := operator(t)
	rcv := subscribe(t, newClient(t, op), "*")
	run := newRun("redriven")
	k := runlog.Key{Tenant: op.Tenant, RunID: run}
	// Straight to the local DynamoDB: the functions' endpoint is the stream stand-in, this one
	// is not, so the stream never carries these commits.
	log := dynamo.NewTable(localaws.DynamoDB(), os.Getenv("TABLE_NAME"))
	first := time.Now().UTC()
	for seq := int64(1); seq <= 2; seq++ {
		c := runlog.Commit{Seq: seq, ID: fmt.Sprint("redriven-", seq), At: time.Now().UTC(), Events: []runlog.Event{{
			Type: interrupt.EventRequested, NodeID: fmt.Sprint("n", seq), InterruptID: fmt.Sprint("int_redriven", seq),
			Payload: json.RawMessage(fmt.Sprintf(`{"kind":"custom","key":"k%d","data":{"customKind":"x"}}`, seq)),
		}}}
		if err := log.Append(ctx, k, c); err != nil {
			t.Fatal(err)
		}
	}
	tmpl, err := samtemplate.Load(filepath.Join(root(t), "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// moto serves SQS beside Secrets Manager.
	qs, err := queues.Open(ctx, queues.NewClient("http://"+localaws.SecretsManagerAddr), tmpl, os.Getenv("TABLE_NAME"))
	if err != nil {
		t.Fatal(err)
	}
	arrival := func(t time.Time) string { return t.Truncate(time.Second).Format(time.RFC3339) }
	failed := fmt.Sprintf(`{"requestContext":{"requestId":"e2e","functionArn":"arn:aws:lambda:us-east-1:000000000000:function:deliver-events","condition":"RetryAttemptsExhausted","approximateInvokeCount":10001},
		"responseContext":{"statusCode":200,"executedVersion":"$LATEST","functionError":"Unhandled"},"version":"1.0","timestamp":%q,
		"DDBStreamBatchInfo":{"shardId":"shardId-local","startSequenceNumber":"1","endSequenceNumber":"2","approximateArrivalOfFirstRecord":%q,"approximateArrivalOfLastRecord":%q,"batchSize":2,"streamArn":"arn:aws:dynamodb:us-east-1:000000000000:table/t/stream/local"}}`,
		time.Now().UTC().Format(time.RFC3339Nano), arrival(first), arrival(time.Now().UTC()))
	if err := qs.Send(ctx, "DeliverEventsFailures", failed); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range rcv.await(2) {
		if d.Data.RunID == run {
			got = append(got, d.ID)
		}
	}
	if want := run + ":1:0 " + run + ":2:0"; strings.Join(got, " ") != want {
		t.Errorf("redriven deliveries %v, want %s", got, want)
	}
}
