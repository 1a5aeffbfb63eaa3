package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Pool runs one function under the Lambda Runtime Interface Emulator. The emulator serves one
// invocation at a time (concurrent invocations crash it), so the pool gives each instance one
// request at a time and starts another instance when all are busy, as Lambda scales out, up to
// Max instances; beyond that, requests queue.
type Pool struct {
	Name      string
	Bootstrap string
	RIE       string
	Env       []string
	Max       int
	// Logs receives the emulator's and the function's output.
	Logs io.Writer
	Log  *slog.Logger

	mu      sync.Mutex
	idle    []*instance
	all     map[*instance]bool
	started int
	freed   chan struct{}
	closed  bool
}

type instance struct {
	id     int
	url    string
	cmd    *exec.Cmd
	exited chan struct{}
	warm   bool
	// runtime is the function's process, which the emulator starts at the first event: 0 until
	// then.
	runtime int
	// ports are the emulator's two, held until it has exited; guarded by held.
	ports []int
	// client keeps the instance's own connection to its emulator. A connection shared by port
	// would outlive a killed emulator and be handed to the next one given the same port, whose
	// first events would then fail on it.
	client *http.Client
}

// ErrClosed is returned by Invoke once Close has been called.
var ErrClosed = errors.New("gateway: pool closed")

// Invoke sends one event to an instance and returns the function's answer as the emulator
// returns it.
func (p *Pool) Invoke(ctx context.Context, requestID string, event []byte) ([]byte, error) {
	for attempt := 0; ; attempt++ {
		out, err := p.invokeOnce(ctx, requestID, event)
		// An instance whose emulator did not take the event (its invoke endpoint not found: a
		// process killed under it left something else on its port) ran nothing: the event goes
		// to another instance, as Lambda gives a failed sandbox's event a new one.
		if errors.Is(err, errNotTaken) && attempt < 2 {
			p.Log.Info("instance did not take the event; replaced", "function", p.Name, "requestId", requestID)
			continue
		}
		return out, err
	}
}

// errNotTaken is an emulator's 404: the event reached no function.
var errNotTaken = errors.New("gateway: the emulator took no event")

func (p *Pool) invokeOnce(ctx context.Context, requestID string, event []byte) ([]byte, error) {
	in, err := p.acquire(ctx)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	out, err := in.invoke(ctx, requestID, event)
	if !in.warm {
		in.warm = true
		p.Log.Info("cold start", "function", p.Name, "instance", in.id, "firstInvokeMs", time.Since(start).Milliseconds())
	}
	if in.runtime == 0 && in.cmd.Process != nil {
		in.runtime = childOf(in.cmd.Process.Pid)
	}
	p.release(in, err == nil)
	return out, err
}

// childOf is the first child process of pid (the emulator's function process), or 0: read from
// the children lists of its threads, as any of them may have started it.
func childOf(pid int) int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			child, _ := strconv.Atoi(f[0])
			return child
		}
	}
	return 0
}

// alive reports whether process pid runs (it exists and is not a zombie) as a child of parent:
// a pid freed by a killed process is soon another process's, and only the parent tells them
// apart.
func alive(pid, parent int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state and the parent follow the command name, which is in parentheses and may hold
	// anything.
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(fields) >= 2 && fields[0] != "Z" && fields[0] != "X" && fields[1] == strconv.Itoa(parent)
}

func (p *Pool) acquire(ctx context.Context) (*instance, error) {
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, ErrClosed
		}
		if p.all == nil {
			p.all, p.freed = map[*instance]bool{}, make(chan struct{})
		}
		if n := len(p.idle); n > 0 {
			in := p.idle[n-1]
			p.idle = p.idle[:n-1]
			p.mu.Unlock()
			select {
			case <-in.exited:
				p.release(in, false)
				continue
			default:
			}
			// A function process that died between events (killed, out of memory) would fail
			// the next one: Lambda gives that event a new sandbox, and so does the pool. An
			// instance that answered an event has its function process waiting for the next; one
			// whose process was not found then (it died as the event ended) is looked for again,
			// and none means it is gone.
			if in.warm && in.runtime == 0 && in.cmd.Process != nil {
				in.runtime = childOf(in.cmd.Process.Pid)
			}
			if in.warm && (in.runtime == 0 || !alive(in.runtime, in.cmd.Process.Pid)) {
				p.Log.Info("instance lost its function process; replaced", "function", p.Name, "instance", in.id)
				p.release(in, false)
				continue
			}
			return in, nil
		}
		if len(p.all) < p.Max {
			p.started++
			in := &instance{id: p.started, exited: make(chan struct{})}
			p.all[in] = true
			p.mu.Unlock()
			if err := p.start(ctx, in); err != nil {
				p.release(in, false)
				return nil, err
			}
			return in, nil
		}
		freed := p.freed
		p.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Start starts an instance ahead of the first event and leaves it idle, as provisioned
// concurrency does: the emulator listens, the function has not run. The first Invoke then takes
// it, and its duration is the function's init and first event alone.
func (p *Pool) Start(ctx context.Context) error {
	in, err := p.acquire(ctx)
	if err != nil {
		return err
	}
	p.release(in, true)
	return nil
}

// release returns a healthy instance to the pool and retires a broken one, then wakes waiters.
func (p *Pool) release(in *instance, healthy bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if healthy && !p.closed {
		p.idle = append(p.idle, in)
	} else {
		delete(p.all, in)
		in.kill()
	}
	close(p.freed)
	p.freed = make(chan struct{})
}

func (p *Pool) start(ctx context.Context, in *instance) error {
	begin := time.Now()
	ports, err := takePorts(in, 2)
	if err != nil {
		return err
	}
	rieAddr := "127.0.0.1:" + strconv.Itoa(ports[0])
	in.url = "http://" + rieAddr + "/2015-03-31/functions/function/invocations"
	in.client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	in.cmd = exec.Command(p.RIE,
		"--runtime-interface-emulator-address", rieAddr,
		"--runtime-api-address", "127.0.0.1:"+strconv.Itoa(ports[1]),
		"--log-level", "warn",
		p.Bootstrap)
	in.cmd.Env = p.Env
	in.cmd.Stdout, in.cmd.Stderr = p.Logs, p.Logs
	in.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Started under the lock Close takes: a pool closed meanwhile starts nothing it would not stop.
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return ErrClosed
	}
	err = in.cmd.Start()
	p.mu.Unlock()
	if err != nil {
		return fmt.Errorf("gateway: start %s: %w", p.Name, err)
	}
	go func() { _ = in.cmd.Wait(); close(in.exited) }()
	for {
		conn, err := net.DialTimeout("tcp", rieAddr, 100*time.Millisecond)
		if err == nil {
			conn.Close()
			p.Log.Info("instance started", "function", p.Name, "instance", in.id, "startMs", time.Since(begin).Milliseconds())
			return nil
		}
		select {
		case <-in.exited:
			// Most likely another process bound one of its ports first: no event ran.
			return fmt.Errorf("%w: %s instance %d exited while starting", errNotTaken, p.Name, in.id)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
		if time.Since(begin) > 20*time.Second {
			return fmt.Errorf("gateway: %s instance %d did not listen within 20s", p.Name, in.id)
		}
	}
}

func (in *instance) invoke(ctx context.Context, requestID string, event []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, in.url, bytes.NewReader(event))
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Amzn-RequestId", requestID)
	resp, err := in.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("gateway: invoke: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 7<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusNotFound {
		return nil, fmt.Errorf("%w: it answered 404: %.200s", errNotTaken, body)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("gateway: emulator answered %d: %.200s", resp.StatusCode, body)
	}
	return body, nil
}

func (in *instance) kill() {
	if in.client != nil {
		in.client.CloseIdleConnections()
	}
	if in.cmd != nil && in.cmd.Process != nil {
		StopGroup(in.cmd.Process.Pid, in.exited, 3*time.Second)
	}
	givePorts(in)
}

// StopGroup ends the process group of a process started with Setpgid (the process and all it
// started): SIGTERM, then SIGKILL if exited has not closed within grace.
func StopGroup(pid int, exited <-chan struct{}, grace time.Duration) {
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(grace):
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-exited
	}
}

// Close stops every instance.
func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true
	all := p.all
	p.all, p.idle = map[*instance]bool{}, nil
	p.mu.Unlock()
	var wg sync.WaitGroup
	for in := range all {
		wg.Go(in.kill)
	}
	wg.Wait()
}

// Instances' ports are drawn at random from below Linux's default ephemeral range
// (32768-60999), where the kernel gives no outgoing connection one, and each is held, from its
// check until its emulator has exited, by an exclusive lock on a file named after it (portLocks):
// every process of the local stack (the stack's gateway, the tests' own gateways and pools) skips
// a port another holds. The lock matters because the emulator binds its runtime API port only at
// the first event, which may come long after the check: without it, another process could take
// the port meanwhile, and the function's init would fail (an emulator 502 with an empty body).
// A port taken anyway by something else makes the emulator exit while starting, which the pool
// answers by starting another (errNotTaken).
const portLow, portHigh = 20000, 32768

// portLocks is where the ports' lock files are, one per port, made as needed; the kernel drops a
// lock with its process, so a killed gateway leaves none held.
var portLocks = filepath.Join(os.TempDir(), "interrupthost-ports")

var held = struct {
	sync.Mutex
	ports map[int]*os.File // each port's locked file
}{ports: map[int]*os.File{}}

// takePorts reserves n ports for in that are free now and that no other process of the stack
// holds.
func takePorts(in *instance, n int) ([]int, error) {
	held.Lock()
	defer held.Unlock()
	if err := os.MkdirAll(portLocks, 0o700); err != nil {
		return nil, fmt.Errorf("gateway: port locks: %w", err)
	}
	var ports []int
	for try := 0; len(ports) < n; try++ {
		if try == 1000 {
			release(ports)
			return nil, fmt.Errorf("gateway: no free port in %d-%d", portLow, portHigh-1)
		}
		p := portLow + mrand.IntN(portHigh-portLow)
		if held.ports[p] != nil {
			continue
		}
		lock, err := os.OpenFile(filepath.Join(portLocks, strconv.Itoa(p)), os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			return nil, fmt.Errorf("gateway: port lock: %w", err)
		}
		if syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
			lock.Close() // another process holds it
			continue
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			lock.Close()
			continue
		}
		l.Close()
		held.ports[p] = lock
		ports = append(ports, p)
	}
	in.ports = ports
	return ports, nil
}

// givePorts releases the ports of an instance that has exited, once: an instance killed twice
// (by Close, then as its last event ends) gives back nothing the second time.
func givePorts(in *instance) {
	held.Lock()
	defer held.Unlock()
	release(in.ports)
	in.ports = nil
}

// release unlocks ports and forgets them; held must be locked.
func release(ports []int) {
	for _, p := range ports {
		if lock := held.ports[p]; lock != nil {
			lock.Close() // closing the file drops its lock
		}
		delete(held.ports, p)
	}
}
