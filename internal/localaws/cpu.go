package localaws

import (
	"syscall"
	"testing"
	"time"
)

// CPUPerOp reports the process's CPU time, user and system, per iteration of b as cpu-µs/op.
// Against the local stack a benchmark's ns/op is mostly waiting on DynamoDB, another process;
// the CPU is what a function spends itself, what Lambda throttles it on at a fraction of a vCPU.
// Call it after the benchmark's setup, as defer CPUPerOp(b)().
func CPUPerOp(b *testing.B) func() {
	start := ProcessCPU(b)
	return func() {
		b.ReportMetric(float64((ProcessCPU(b)-start).Microseconds())/float64(b.N), "cpu-µs/op")
	}
}

// ProcessCPU is the CPU time the process has spent so far, user and system: a benchmark's
// figure of its own work, which wall time on a shared machine is not.
func ProcessCPU(b testing.TB) time.Duration {
	b.Helper()
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
