package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// stackURL is where `stack run` serves, and so where a compared stack is measured.
const stackURL = "http://127.0.0.1:3000"

// side is one stack of a comparison: a work tree and its measurements, one per round.
type side struct {
	name, dir string
	results   []result
}

// compare measures the stack of the work tree at revision rev and this work tree's, one after
// the other, rounds times, each stack started fresh (stores included) and stopped here, so the
// two differ only in their code; then prints each run and both side by side.
func compare(cfg config, rev string, rounds int) error {
	if conn, err := net.DialTimeout("tcp", strings.TrimPrefix(stackURL, "http://"), time.Second); err == nil {
		conn.Close()
		return errors.New("a stack already serves " + stackURL + ": stop it (make run) first, -baseline starts its own")
	}
	here, err := os.Getwd()
	if err != nil {
		return err
	}
	dir, err := baselineTree(here, rev)
	if err != nil {
		return err
	}
	sides := []*side{{name: "baseline " + rev, dir: dir}, {name: "this tree", dir: here}}
	for round := range rounds {
		for _, s := range sides {
			fmt.Printf("== %s, round %d of %d\n", s.name, round+1, rounds)
			res, err := s.measure(cfg)
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			res.report(os.Stdout)
			s.results = append(s.results, res)
		}
	}
	sideBySide(os.Stdout, sides[0], sides[1])
	for _, s := range sides {
		for _, r := range s.results {
			if !r.ok() {
				return errors.New(s.name + ": errors or lost races in the cycle (see above)")
			}
		}
	}
	return nil
}

// baselineTree checks rev out in a git work tree of its own under .local/baseline/, sharing this
// tree's installed tools (the Python venv, the Node modules).
func baselineTree(here, rev string) (string, error) {
	commit, err := git(here, "rev-parse", "--verify", rev+"^{commit}")
	if err != nil {
		return "", err
	}
	dir := filepath.Join(here, ".local", "baseline", commit[:12])
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		if _, err := git(here, "worktree", "add", "--detach", dir, commit); err != nil {
			return "", err
		}
	}
	for _, shared := range []string{".venv", filepath.Join("infra", "local", "node_modules")} {
		if _, err := os.Lstat(filepath.Join(dir, shared)); err == nil {
			continue
		}
		if err := os.Symlink(filepath.Join(here, shared), filepath.Join(dir, shared)); err != nil {
			return "", err
		}
	}
	return dir, nil
}

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// measure builds and starts the side's stack, measures it, and stops it. The stack's output goes
// to .local/load-stack.log of its work tree.
func (s *side) measure(cfg config) (result, error) {
	build := exec.Command("go", "build", "-o", filepath.Join(".local", "bin", "stack"), "./infra/local/cmd/stack")
	build.Dir, build.Stderr = s.dir, os.Stderr
	if err := build.Run(); err != nil {
		return result{}, fmt.Errorf("build its stack: %w", err)
	}
	logs, err := os.Create(filepath.Join(s.dir, ".local", "load-stack.log"))
	if err != nil {
		return result{}, err
	}
	defer logs.Close()
	stack := exec.Command(filepath.Join(s.dir, ".local", "bin", "stack"), "run")
	stack.Dir, stack.Stdout, stack.Stderr = s.dir, logs, logs
	// A process group of its own, so that a stack that will not stop can be killed whole; Ctrl-C
	// reaches this tool alone, which stops the stack before it exits.
	stack.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := stack.Start(); err != nil {
		return result{}, err
	}
	// exited is closed when the stack has exited, its error then in waitErr: every waiter sees it.
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = stack.Wait(); close(exited) }()
	interrupted := make(chan os.Signal, 1)
	signal.Notify(interrupted, os.Interrupt, syscall.SIGTERM)
	measured := make(chan struct{})
	go func() {
		select {
		case <-interrupted:
			stop(stack, exited)
			os.Exit(130)
		case <-measured:
		}
	}()
	defer func() {
		signal.Stop(interrupted)
		close(measured)
		stop(stack, exited)
	}()
	if err := awaitStack(stackURL, exited); err != nil {
		if errors.Is(err, errExited) {
			err = fmt.Errorf("%w: %v", err, waitErr)
		}
		return result{}, fmt.Errorf("%w (its log: %s)", err, logs.Name())
	}
	return measure(s.dir, stackURL, cfg)
}

// errExited is a stack that exited before it served.
var errExited = errors.New("the stack exited while starting")

// awaitStack waits until the stack serves at url (it builds its functions first), or exits.
func awaitStack(url string, exited <-chan struct{}) error {
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url + "/.well-known/interrupt-host"); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-exited:
			return errExited
		case <-time.After(500 * time.Millisecond):
		}
	}
	return errors.New("the stack did not serve within 5 minutes")
}

// stop interrupts the stack as Ctrl-C does (it stops its functions and the stores it started)
// and waits for it; after a minute it kills the whole process group.
func stop(stack *exec.Cmd, exited <-chan struct{}) {
	_ = stack.Process.Signal(os.Interrupt)
	select {
	case <-exited:
	case <-time.After(time.Minute):
		_ = syscall.Kill(-stack.Process.Pid, syscall.SIGKILL)
		<-exited
	}
}

// row is one figure of the side-by-side table, read from a measurement.
type row struct {
	label string
	value func(result) float64
}

// sideBySide prints the means of both sides' rounds and their ratio.
func sideBySide(w io.Writer, base, this *side) {
	rows := []row{
		{"cycles/s", result.cyclesPerSecond},
		{"request p50 ms", stepP50("request")},
		{"resolve p50 ms", stepP50("resolve")},
		{"snapshot p50 ms", stepP50("snapshot")},
	}
	groups := map[string]bool{}
	for _, s := range []*side{base, this} {
		for _, r := range s.results {
			for g := range r.cpu {
				groups[g] = true
			}
		}
	}
	for _, g := range slices.Sorted(maps.Keys(groups)) {
		if fn := strings.TrimPrefix(g, "function "); base.results[0].invocations()[fn] > 0 {
			rows = append(rows, row{"CPU ms/invocation " + fn, func(r result) float64 { return r.perInvocation(g) }})
			continue
		}
		rows = append(rows, row{"CPU ms/cycle " + g, func(r result) float64 { return perCycle(r.cpu[g], r.stats.cycles) }})
	}
	rows = append(rows, row{"read-model lag p50 ms", func(r result) float64 { return float64(percentile(r.lag, .5).Microseconds()) / 1000 }},
		row{"read-model lag p99 ms", func(r result) float64 { return float64(percentile(r.lag, .99).Microseconds()) / 1000 }})
	rows = append(rows, row{"CPU ms/cycle, all", func(r result) float64 {
		var total float64
		for _, d := range r.cpu {
			total += perCycle(d, r.stats.cycles)
		}
		return total
	}}, row{"CPU ms/cycle of the load tool itself", func(r result) float64 { return perCycle(r.self, r.stats.cycles) }})
	cfg := base.results[0].cfg
	fmt.Fprintf(w, "\nside by side: mean of %d round(s), %d clients, %s each, surface %s\n", len(base.results), cfg.clients, cfg.duration, cfg.surface)
	fmt.Fprintf(w, "  %-46s %12s %12s %8s\n", "", base.name, this.name, "ratio")
	for _, row := range rows {
		b, t := mean(base.results, row.value), mean(this.results, row.value)
		if b < 0.0005 && t < 0.0005 {
			continue
		}
		ratio := "-"
		if b > 0 {
			ratio = fmt.Sprintf("%.2fx", t/b)
		}
		fmt.Fprintf(w, "  %-46s %12.3f %12.3f %8s\n", row.label, b, t, ratio)
	}
}

func stepP50(step string) func(result) float64 {
	return func(r result) float64 { return float64(percentile(r.stats.steps[step], .5).Microseconds()) / 1000 }
}

func mean(rs []result, value func(result) float64) float64 {
	var sum float64
	for _, r := range rs {
		sum += value(r)
	}
	return sum / float64(len(rs))
}
