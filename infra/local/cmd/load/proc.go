package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// groups is CPU time by process group of the stack.
type groups map[string]time.Duration

// proc is one process's group and its CPU time so far.
type proc struct {
	group string
	cpu   time.Duration
}

// snapshot is every process of the stack at one moment, by pid.
type snapshot map[int]proc

// userHZ is the unit of /proc/<pid>/stat's times: USER_HZ, 100 on every Linux ABI.
const userHZ = 100

// sample reads the CPU time (user + system) of each process of the stack from /proc.
func sample() (snapshot, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	out := snapshot{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		group := groupOf(strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00"))
		if group == "" {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// Fields after the command name, which is in parentheses and may hold anything.
		rest := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(rest) < 13 {
			continue
		}
		utime, _ := strconv.ParseInt(rest[11], 10, 64)
		stime, _ := strconv.ParseInt(rest[12], 10, 64)
		out[pid] = proc{group: group, cpu: time.Duration(utime+stime) * time.Second / userHZ}
	}
	return out, nil
}

// groupOf names the stack's part a command line belongs to: each function by name, the
// emulator, the gateway (the stack supervisor, which serves it), dynalite and moto.
func groupOf(argv []string) string {
	if len(argv) == 0 || argv[0] == "" {
		return ""
	}
	bin := filepath.Base(argv[0])
	switch {
	case bin == "aws-lambda-rie":
		return "emulator"
	case filepath.Base(filepath.Dir(argv[0])) == "functions":
		return "function " + bin
	case bin == "stack":
		return "gateway (stack)"
	}
	joined := strings.Join(argv, " ")
	switch {
	case strings.Contains(joined, "dynalite"):
		return "dynalite"
	case strings.Contains(joined, "moto"):
		return "moto"
	}
	return ""
}

// minus is the CPU each group spent between before and s: a process started meanwhile counts
// whole, one that ended meanwhile is lost (the stack keeps its processes while it runs).
func (s snapshot) minus(before snapshot) groups {
	g := groups{}
	for pid, p := range s {
		d := p.cpu
		if b, ok := before[pid]; ok && b.group == p.group {
			d -= b.cpu
		}
		g[p.group] += d
	}
	return g
}

// ownCPU is this process's CPU time so far, user and system.
func ownCPU() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
