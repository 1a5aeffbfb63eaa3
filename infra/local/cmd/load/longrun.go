package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// longRun grows one run commit by commit (a request and a resolve per step, so one interrupt at
// most is pending) and, at each mark of commits, times samples fresh request, resolve and
// snapshot steps: what an operation costs as its run grows (docs/deploying.md, "Performance").
func longRun(l *load, marks []int, samples int, w io.Writer) error {
	ctx := context.Background()
	run := "long-" + strings.ToLower(l.tenant)
	seq, n := 0, 0
	step := func(st *stats) error {
		n++
		key := "k" + strconv.Itoa(n)
		status, body := l.call(ctx, st, "request", "POST", "/runs/"+run+"/interrupts", l.engine,
			`{"nodeId":"step","payload":{"kind":"custom","key":"`+key+`","data":{"customKind":"load.step"}}}`)
		if status != 201 {
			return fmt.Errorf("request at %d commits: %d %.200s", seq, status, body)
		}
		status, body = l.call(ctx, st, "resolve", "POST", "/runs/"+run+"/interrupts/step", l.alice, `{"resumeValue":{"n":`+strconv.Itoa(n)+`}}`)
		if status != 200 {
			return fmt.Errorf("resolve at %d commits: %d %.200s", seq, status, body)
		}
		seq += 2
		if st != nil {
			if status, body := l.call(ctx, st, "snapshot", "GET", "/runs/"+run, l.engine, ""); status != 200 {
				return fmt.Errorf("snapshot at %d commits: %d %.200s", seq, status, body)
			}
		}
		return nil
	}
	// A warm-up on a run of its own first, so that the first mark is not timed on instances
	// starting.
	measured := run
	run = measured + "-warmup"
	for range 20 {
		if err := step(nil); err != nil {
			return err
		}
	}
	run, seq = measured, 0
	fmt.Fprintf(w, "one run, a request and a resolve per step; %d fresh steps timed at each mark\n", samples)
	fmt.Fprintf(w, "%10s %14s %14s %14s %10s\n", "commits", "request p50", "resolve p50", "snapshot p50", "grew in")
	began := time.Now()
	for _, mark := range marks {
		for seq < mark {
			if err := step(nil); err != nil {
				return err
			}
		}
		grew := time.Since(began)
		st := &stats{steps: map[string][]time.Duration{}}
		at := seq
		for range samples {
			if err := step(st); err != nil {
				return err
			}
		}
		fmt.Fprintf(w, "%10d %14s %14s %14s %10s\n", at, ms(percentile(st.steps["request"], .5)),
			ms(percentile(st.steps["resolve"], .5)), ms(percentile(st.steps["snapshot"], .5)), grew.Round(time.Second))
		began = time.Now()
	}
	return nil
}

// parseMarks reads the commit counts of -long-run, in increasing order.
func parseMarks(s string) ([]int, error) {
	var marks []int
	for _, f := range strings.Split(s, ",") {
		m, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || m < 0 || (len(marks) > 0 && m <= marks[len(marks)-1]) {
			return nil, fmt.Errorf("-long-run takes increasing commit counts, as 20,4000,20000: %q", s)
		}
		marks = append(marks, m)
	}
	return marks, nil
}
