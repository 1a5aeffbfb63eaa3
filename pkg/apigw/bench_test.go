package apigw_test

import (
	"strconv"
	"testing"

	"github.com/interrupthost/interrupthost/internal/localaws"
)

// BenchmarkCycle is the wait-and-resolve cycle through the handlers the functions run, over the
// local DynamoDB: request an approval, resolve it, read the snapshot. Its CPU profile is the
// functions' own work per cycle (DynamoDB's is another process's).
func BenchmarkCycle(b *testing.B) {
	s := newStack(b)
	payload := example(b, "approval")
	n := 0
	b.ReportAllocs()
	defer localaws.CPUPerOp(b)()
	for b.Loop() {
		n++
		run := "cycle-" + strconv.Itoa(n)
		if r := s.request(b, engine, run, "approve", payload); r.Status != 201 {
			b.Fatalf("request: %d %s", r.Status, r.Body)
		}
		if r := s.resolve(b, approver, run, "approve", `{"action":"accept","decidedAt":"2026-11-30T09:00:00Z"}`); r.Status != 200 {
			b.Fatalf("resolve: %d %s", r.Status, r.Body)
		}
		if _, r := s.snapshot(b, engine, run); r.Status != 200 {
			b.Fatalf("snapshot: %d %s", r.Status, r.Body)
		}
	}
}
