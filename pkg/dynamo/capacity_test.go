package dynamo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/interrupthost/interrupthost/internal/hosttest"
	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/pkg/dynamo"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/schema"
)

// meter asks DynamoDB for the capacity each call consumes and adds it up, as on-demand mode bills
// it: request units, at least one per call (a strongly consistent read of up to 4 KB, a write of
// up to 1 KB), whatever the local server reports for an empty read.
type meter struct {
	mu           sync.Mutex
	calls        int
	reads, write float64
}

func (m *meter) option(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("meter", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			switch p := in.Parameters.(type) {
			case *dynamodb.QueryInput:
				p.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
			case *dynamodb.GetItemInput:
				p.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
			case *dynamodb.PutItemInput:
				p.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
			case *dynamodb.UpdateItemInput:
				p.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
			case *dynamodb.DeleteItemInput:
				p.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
			}
			out, md, err := next.HandleInitialize(ctx, in)
			var units float64
			switch r := out.Result.(type) {
			case *dynamodb.QueryOutput:
				units = consumed(r.ConsumedCapacity)
			case *dynamodb.GetItemOutput:
				units = consumed(r.ConsumedCapacity)
			case *dynamodb.PutItemOutput:
				units = consumed(r.ConsumedCapacity)
			case *dynamodb.UpdateItemOutput:
				units = consumed(r.ConsumedCapacity)
			case *dynamodb.DeleteItemOutput:
				units = consumed(r.ConsumedCapacity)
			}
			units = max(units, 1)
			m.mu.Lock()
			defer m.mu.Unlock()
			m.calls++
			switch awsmiddleware.GetOperationName(ctx) {
			case "Query", "GetItem":
				m.reads += units
			default:
				m.write += units
			}
			return out, md, err
		}), middleware.After)
	})
}

func consumed(c *types.ConsumedCapacity) float64 {
	if c == nil || c.CapacityUnits == nil {
		return 0
	}
	return *c.CapacityUnits
}

// readUnits is the read units consumed so far.
func (m *meter) readUnits() float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reads
}

// report puts the meter's totals per iteration of b.
func (m *meter) report(b *testing.B) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b.ReportMetric(float64(m.calls)/float64(b.N), "roundtrips/op")
	b.ReportMetric(m.reads/float64(b.N), "RRU/op")
	b.ReportMetric(m.write/float64(b.N), "WRU/op")
}

// BenchmarkFlowCapacity measures what docs/deploying.md's cost table ("Cost") is computed from: the DynamoDB
// calls and request units of the two flows it prices, against the local DynamoDB API. An
// approval: request it on a new run, one approver accepts, the engine reads the snapshot. A
// payment: request an external event on a new run, the provider's webhook resolves it, the
// engine reads the snapshot.
func BenchmarkFlowCapacity(b *testing.B) {
	ctx := context.Background()
	accept := json.RawMessage(`{"action":"accept","decidedAt":"2026-11-30T09:00:00Z"}`)
	b.Run("approval", func(b *testing.B) {
		m := &meter{}
		db, table := localaws.NewTable(b, m.option)
		sch, err := schema.Load()
		if err != nil {
			b.Fatal(err)
		}
		h := host.New(host.Env{Stores: host.StoresOf(dynamo.NewTable(db, table)), Schemas: sch}, host.Config{})
		payload := hosttest.Example(b, "approval")
		n := 0
		for b.Loop() {
			n++
			run := "approval-" + strconv.Itoa(n)
			if _, _, err := h.RequestInterrupt(ctx, engine, run, host.Request{NodeID: "n1", Payload: payload}); err != nil {
				b.Fatal(err)
			}
			if _, err := h.Resolve(ctx, alice, run, "n1", accept, nil); err != nil {
				b.Fatal(err)
			}
			if _, err := h.Snapshot(ctx, alice, run); err != nil {
				b.Fatal(err)
			}
		}
		m.report(b)
	})
	// The read models' upkeep, off the commit path: what read-models spends on an approval, one
	// reindex after the request's commit and one after the resolve's (a stream batch carrying
	// both makes it one).
	b.Run("approval read-models", func(b *testing.B) {
		m := &meter{}
		db, table := localaws.NewTable(b, m.option)
		sch, err := schema.Load()
		if err != nil {
			b.Fatal(err)
		}
		consumer := host.New(host.Env{Stores: host.StoresOf(dynamo.NewTable(db, table)), Schemas: sch}, host.Config{})
		h := host.New(host.Env{Stores: host.StoresOf(dynamo.NewTable(localaws.DynamoDB(), table)), Schemas: sch}, host.Config{})
		payload := hosttest.Example(b, "approval")
		n := 0
		for b.Loop() {
			n++
			run := "approval-" + strconv.Itoa(n)
			k := runlog.Key{Tenant: engine.Tenant, RunID: run}
			if _, _, err := h.RequestInterrupt(ctx, engine, run, host.Request{NodeID: "n1", Payload: payload}); err != nil {
				b.Fatal(err)
			}
			if err := consumer.Reindex(ctx, k); err != nil {
				b.Fatal(err)
			}
			if _, err := h.Resolve(ctx, alice, run, "n1", accept, nil); err != nil {
				b.Fatal(err)
			}
			if err := consumer.Reindex(ctx, k); err != nil {
				b.Fatal(err)
			}
		}
		m.report(b)
	})
	b.Run("payment", func(b *testing.B) {
		m := &meter{}
		h, hooks, e := dynamoHookHost(b, m.option)
		n := 0
		for b.Loop() {
			n++
			run, order := "payment-"+strconv.Itoa(n), "order-"+strconv.Itoa(n)
			if _, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), run, host.Request{NodeID: "pay", Payload: hosttest.WaitFor(order)}); err != nil {
				b.Fatal(err)
			}
			body := hosttest.StripeEvent("evt_"+strconv.Itoa(n), "payment_intent.succeeded", order)
			if res, err := hooks.Ingest(ctx, e.ID, hosttest.StripeHeaders(body, hosttest.StripeSecret), body); err != nil || res.Outcome != host.OutcomeResolved {
				b.Fatalf("%+v %v", res, err)
			}
			if _, err := h.Snapshot(ctx, hosttest.Who("engine"), run); err != nil {
				b.Fatal(err)
			}
		}
		m.report(b)
	})
}

// BenchmarkRunsPage measures what a page of the console's list of every run costs (README,
// "Cost"): 300 runs indexed; a page of 50, newest first; a page of one status; and a search for
// a word only the oldest run's title holds, which reads at most runlog.MaxRunsRead entries and
// ends with a next page.
func BenchmarkRunsPage(b *testing.B) {
	ctx := context.Background()
	m := &meter{}
	db, table := localaws.NewTable(b, m.option)
	store := dynamo.NewTable(db, table)
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for i := range 300 {
		e := runlog.RunEntry{Key: runlog.Key{Tenant: "acme", RunID: fmt.Sprintf("run-%03d", i)}, Seq: 3, At: t0.Add(time.Duration(i) * time.Minute), Origin: "o",
			Phase: runlog.PhaseRunning, Titles: []string{"Pay invoice " + strconv.Itoa(4000+i) + " to ACME GmbH"}}
		if i%10 == 0 {
			e.Phase = runlog.PhaseWaiting
		}
		if i == 0 {
			e.Titles = []string{"Rare audit"}
		}
		if _, err := store.FileRun(ctx, e); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		q    runlog.RunQuery
		want int
	}{
		{"newest 50", runlog.RunQuery{Limit: 50}, 50},
		{"waiting 50", runlog.RunQuery{Phase: runlog.PhaseWaiting, Limit: 50}, 30},
		{"a rare word", runlog.RunQuery{Words: []string{"rare"}, Limit: 50}, 0},
	} {
		b.Run(c.name, func(b *testing.B) {
			*m = meter{}
			for b.Loop() {
				page, err := store.Runs(ctx, "acme", c.q)
				if err != nil || len(page.Runs) != c.want {
					b.Fatalf("%d runs, %v; want %d", len(page.Runs), err, c.want)
				}
			}
			m.report(b)
		})
	}
}
