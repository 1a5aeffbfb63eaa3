// Package faults injects the failures of AWS APIs into the local stack, between the functions
// and the stores that stand in for DynamoDB and Secrets Manager, so that the host's answers
// under faults are tested against real failures rather than reasoned about: a request throttled
// before it is applied, an answer lost after its request was applied (a 500, or a connection
// reset), an endpoint answering 502 before applying anything, and latency. Rates are set per
// service and operation, and changed while the stack runs (Injector.ServeHTTP, which the stack
// serves at /local-faults). With no rule set a request passes through untouched.
package faults

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Rule is the faults one service's operations suffer, as rates from 0 to 1 of their requests.
type Rule struct {
	// Ops are the operations it applies to (the action of X-Amz-Target: PutItem, Query,
	// GetSecretValue...); none means every operation.
	Ops []string `json:"ops,omitempty"`
	// Throttle answers 400 ThrottlingException without forwarding: nothing was applied.
	Throttle float64 `json:"throttle,omitempty"`
	// Lost forwards the request (it is applied) and answers 500 instead of the store's answer.
	Lost float64 `json:"lost,omitempty"`
	// Reset forwards the request (it is applied) and closes the connection without an answer.
	Reset float64 `json:"reset,omitempty"`
	// Unavailable answers 502 without forwarding, as an endpoint behind a failing balancer.
	Unavailable float64 `json:"unavailable,omitempty"`
	// LatencyMs delays every request it applies to before anything else.
	LatencyMs int `json:"latencyMs,omitempty"`
}

// Config is the rules of every service, by service name ("dynamodb", "secretsmanager"); the
// first rule naming an operation (or naming none) applies to it.
type Config map[string][]Rule

// Counts are the faults injected so far, by service and kind ("dynamodb throttle"), and the
// requests seen ("dynamodb requests").
type Counts map[string]int

// Injector holds the faults in force and what it injected. Safe for concurrent use.
type Injector struct {
	mu     sync.Mutex
	config Config
	counts Counts
}

// New returns an injector that injects nothing until configured.
func New() *Injector { return &Injector{config: Config{}, counts: Counts{}} }

// Set replaces the faults in force, refusing rates outside 0..1 or summing past 1.
func (i *Injector) Set(c Config) error {
	for service, rules := range c {
		for n, r := range rules {
			sum := r.Throttle + r.Lost + r.Reset + r.Unavailable
			for _, rate := range []float64{r.Throttle, r.Lost, r.Reset, r.Unavailable} {
				if rate < 0 || rate > 1 {
					return fmt.Errorf("faults: %s rule %d: a rate is outside 0..1", service, n)
				}
			}
			if sum > 1 || r.LatencyMs < 0 || r.LatencyMs > 60_000 {
				return fmt.Errorf("faults: %s rule %d: the rates sum past 1, or the latency is outside 0..60000 ms", service, n)
			}
		}
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	i.config = c
	return nil
}

// Counts is a copy of what was injected so far.
func (i *Injector) Counts() Counts {
	i.mu.Lock()
	defer i.mu.Unlock()
	out := make(Counts, len(i.counts))
	for k, v := range i.counts {
		out[k] = v
	}
	return out
}

// fault is what happens to one request.
type fault int

const (
	pass fault = iota
	throttle
	lost
	reset
	unavailable
)

var faultNames = map[fault]string{throttle: "throttle", lost: "lost", reset: "reset", unavailable: "unavailable"}

// draw decides the fault of one request of op to service, and its latency.
func (i *Injector) draw(service, op string) (fault, time.Duration) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.counts[service+" requests"]++
	for _, r := range i.config[service] {
		if len(r.Ops) > 0 && !slices.Contains(r.Ops, op) {
			continue
		}
		u, f := rand.Float64(), pass
		switch {
		case u < r.Throttle:
			f = throttle
		case u < r.Throttle+r.Lost:
			f = lost
		case u < r.Throttle+r.Lost+r.Reset:
			f = reset
		case u < r.Throttle+r.Lost+r.Reset+r.Unavailable:
			f = unavailable
		}
		if f != pass {
			i.counts[service+" "+faultNames[f]]++
		}
		return f, time.Duration(r.LatencyMs) * time.Millisecond
	}
	return pass, 0
}

// Wrap puts the faults of service in front of next, the store's handler (or a proxy to it).
// Requests are told apart by their X-Amz-Target header, as both services' JSON protocols name
// the operation there ("DynamoDB_20120810.PutItem", "secretsmanager.GetSecretValue").
func (i *Injector) Wrap(service string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		target := req.Header.Get("X-Amz-Target")
		op := target[strings.LastIndexByte(target, '.')+1:]
		f, delay := i.draw(service, op)
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-req.Context().Done():
				return
			}
		}
		switch f {
		case throttle:
			awsError(w, http.StatusBadRequest, throttleType[service], "Rate of requests exceeds the allowed throughput (injected).")
		case unavailable:
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusBadGateway)
			_, _ = io.WriteString(w, "<html><body>502 Bad Gateway (injected)</body></html>")
		case lost, reset:
			next.ServeHTTP(&discard{header: http.Header{}}, req)
			if f == lost {
				awsError(w, http.StatusInternalServerError, "InternalServerError", "Internal server error (injected, after the request was applied).")
				return
			}
			hijack(w)
		default:
			next.ServeHTTP(w, req)
		}
	})
}

// throttleType is each service's throttling error, as its SDK retries it.
var throttleType = map[string]string{
	"dynamodb":       "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
	"secretsmanager": "ThrottlingException",
}

// awsError answers an error in the AWS JSON protocols' shape.
func awsError(w http.ResponseWriter, status int, typ, message string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("X-Amzn-ErrorType", typ[strings.LastIndexByte(typ, '#')+1:])
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": typ, "message": message})
}

// hijack closes the client's connection without an answer: a reset after the request was applied.
func hijack(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tcp, ok := conn.(interface{ SetLinger(int) error }); ok {
		_ = tcp.SetLinger(0) // a reset, not an orderly close
	}
	_ = conn.Close()
}

// discard is a ResponseWriter that keeps the store's answer from the client.
type discard struct{ header http.Header }

func (d *discard) Header() http.Header         { return d.header }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}

// ServeHTTP is the admin endpoint: GET answers { config, counts }, PUT sets the config from its
// JSON body (400 when it is not one), DELETE clears it.
func (i *Injector) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	switch req.Method {
	case http.MethodGet:
	case http.MethodPut:
		var c Config
		dec := json.NewDecoder(io.LimitReader(req.Body, 1<<20))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			http.Error(w, "faults: the body is not a config: "+err.Error(), http.StatusBadRequest)
			return
		}
		if err := i.Set(c); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	case http.MethodDelete:
		_ = i.Set(Config{})
	default:
		w.Header().Set("Allow", "GET, PUT, DELETE")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	i.mu.Lock()
	body, _ := json.Marshal(struct {
		Config Config `json:"config"`
		Counts Counts `json:"counts"`
	}{i.config, i.counts})
	i.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}
