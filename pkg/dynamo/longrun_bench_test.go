package dynamo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/interrupthost/interrupthost/internal/hosttest"
	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/pkg/dynamo"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/inmem"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/schema"
)

// exportedRun is a run as a store holds it: its commits, checkpoint and archive.
type exportedRun struct {
	commits []runlog.Commit
	cp      *runlog.Checkpoint
	archive []runlog.Found
}

func exported(l *inmem.Store, k runlog.Key) (exportedRun, error) {
	var r exportedRun
	var err error
	r.commits, r.cp, r.archive, err = l.Export(k)
	return r, err
}

// copyRun writes run r into to as run k, as the host wrote it: its commits, then its archive and
// checkpoint.
func copyRun(b *testing.B, r exportedRun, to host.Store, k runlog.Key) {
	b.Helper()
	ctx := context.Background()
	commits, cp, archive := r.commits, r.cp, r.archive
	work := make(chan runlog.Commit)
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	for range 8 {
		wg.Go(func() {
			for c := range work {
				if err := to.Append(ctx, k, c); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for _, c := range commits {
		work <- c
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
	if cp != nil {
		if err := to.Checkpoint(ctx, k, cp, archive); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLongRun measures requests (of new re-entry keys) and the resolves of them on runs of
// 10, 1,000 and, with BENCH_LONG_RUN set (make bench), 100,000 commits, against the local
// DynamoDB API: round trips, request units (ReturnConsumedCapacity, as BenchmarkFlowCapacity) and
// CPU, per request and per resolve, the checkpoint written every runlog.CheckpointEvery commits
// included. The run is built in memory by the host and copied as it wrote it.
func BenchmarkLongRun(b *testing.B) {
	sizes := []int{10, 1000}
	if os.Getenv("BENCH_LONG_RUN") != "" {
		sizes = append(sizes, 100_000)
	}
	ctx := context.Background()
	for _, size := range sizes {
		b.Run(fmt.Sprintf("commits=%d", size), func(b *testing.B) {
			m := &meter{}
			db, table := localaws.NewTable(b, m.option)
			l := dynamo.NewTable(db, table)
			mem, memLog := hosttest.MemHost(b)
			hosttest.NewLongRun(b, mem, "long", size)
			from, err := exported(memLog, runlog.Key{Tenant: "acme", RunID: "long"})
			if err != nil {
				b.Fatal(err)
			}
			sch, err := schema.Load()
			if err != nil {
				b.Fatal(err)
			}
			h := host.New(host.Env{Stores: host.StoresOf(l), Schemas: sch}, host.Config{})
			// A short run gets a copy of its own each time, so that it stays short; a long one
			// grows by the two commits of each iteration, a small part of it.
			fresh := size < 100
			run := "long"
			if !fresh {
				copyRun(b, from, l, runlog.Key{Tenant: "acme", RunID: run})
			}
			// Each iteration is as many requests and resolves as make one checkpoint's worth of
			// commits, so that every size pays for its checkpoints alike.
			const pairs = runlog.CheckpointEvery / 2
			var request, resolve usage
			n := 0
			for b.Loop() {
				n++
				if fresh {
					run = fmt.Sprintf("short-%d", n)
					copyRun(b, from, l, runlog.Key{Tenant: "acme", RunID: run})
				}
				for j := range pairs {
					request.measure(b, m, func() error {
						_, _, err := h.RequestInterrupt(ctx, hosttest.Who("engine"), run, host.Request{NodeID: "bench", Payload: hosttest.Custom(fmt.Sprintf("bench-%d-%d", n, j))})
						return err
					})
					resolve.measure(b, m, func() error {
						_, err := h.Resolve(ctx, hosttest.Who("alice"), run, "bench", json.RawMessage(`{}`), nil)
						return err
					})
				}
			}
			request.report(b, "request", pairs)
			resolve.report(b, "resolve", pairs)
		})
	}
}

// usage adds up what the calls of one operation cost.
type usage struct {
	calls, cpuMicros int64
	reads, writes    float64
}

func (u *usage) measure(b *testing.B, m *meter, do func() error) {
	b.Helper()
	m.mu.Lock()
	calls, reads, writes := m.calls, m.reads, m.write
	m.mu.Unlock()
	cpu := localaws.ProcessCPU(b)
	if err := do(); err != nil {
		b.Fatal(err)
	}
	u.cpuMicros += (localaws.ProcessCPU(b) - cpu).Microseconds()
	m.mu.Lock()
	u.calls += int64(m.calls - calls)
	u.reads += m.reads - reads
	u.writes += m.write - writes
	m.mu.Unlock()
}

// report puts the figures per call: per is how many calls each iteration made.
func (u *usage) report(b *testing.B, op string, per int) {
	n := float64(b.N * per)
	b.ReportMetric(float64(u.calls)/n, op+"-roundtrips/op")
	b.ReportMetric(u.reads/n, op+"-RRU/op")
	b.ReportMetric(u.writes/n, op+"-WRU/op")
	b.ReportMetric(float64(u.cpuMicros)/n, op+"-cpu-µs/op")
}
