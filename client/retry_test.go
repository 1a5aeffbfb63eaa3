package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/interrupthost/interrupthost/client"
)

// fakeHost answers each call by the script for its attempt number, recording the attempts.
type fakeHost struct {
	mu       sync.Mutex
	attempts []*http.Request
	script   func(n int, w http.ResponseWriter, r *http.Request)
}

func (h *fakeHost) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.attempts = append(h.attempts, r)
	n := len(h.attempts)
	h.mu.Unlock()
	h.script(n, w, r)
}

func problem(w http.ResponseWriter, status int, code, retryAfter string) {
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, `{"status":%d,"code":%q,"detail":"d"}`, status, code)
}

func serve(t *testing.T, script func(n int, w http.ResponseWriter, r *http.Request)) (*fakeHost, string) {
	t.Helper()
	h := &fakeHost{script: script}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return h, srv.URL
}

// TestRetries: what the host says to retry is sent again, after Retry-After, with the same
// Idempotency-Key (one of the client's own when the caller gave none); what it refused, or a
// write whose outcome is unknown and that is not safe to send again, is answered at once.
func TestRetries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		name     string
		script   func(n int, w http.ResponseWriter, r *http.Request)
		call     func(*client.Client) error
		attempts int
		code     string
	}{
		{"a resolve through two 503s", func(n int, w http.ResponseWriter, _ *http.Request) {
			if n < 3 {
				problem(w, 503, "unavailable", "0")
				return
			}
			_, _ = w.Write([]byte(`{"status":"resolved"}`))
		}, func(c *client.Client) error { _, err := c.Resolve(ctx, "r1", "n1", map[string]any{"x": 1}); return err }, 3, ""},
		{"a 429 without Retry-After", func(n int, w http.ResponseWriter, _ *http.Request) {
			if n < 2 {
				problem(w, 429, "throttled", "")
				return
			}
			_, _ = w.Write([]byte(`{}`))
		}, func(c *client.Client) error { _, err := c.Snapshot(ctx, "r1"); return err }, 2, ""},
		{"a lost connection on a resolve", func(n int, w http.ResponseWriter, _ *http.Request) {
			if n < 2 {
				conn, _, _ := w.(http.Hijacker).Hijack()
				conn.Close()
				return
			}
			_, _ = w.Write([]byte(`{"status":"resolved"}`))
		}, func(c *client.Client) error { _, err := c.Resolve(ctx, "r1", "n1", 1); return err }, 2, ""},
		{"a cancel whose outcome is unknown", func(_ int, w http.ResponseWriter, _ *http.Request) {
			problem(w, 503, "outcome_unknown", "1")
		}, func(c *client.Client) error { return c.Cancel(ctx, "r1", "") }, 1, "outcome_unknown"},
		{"a refusal", func(_ int, w http.ResponseWriter, _ *http.Request) {
			problem(w, 409, "interrupt_already_resolved", "")
		}, func(c *client.Client) error { _, err := c.Resolve(ctx, "r1", "n1", 1); return err }, 1, "interrupt_already_resolved"},
		{"a host that stays down", func(_ int, w http.ResponseWriter, _ *http.Request) {
			problem(w, 503, "unavailable", "0")
		}, func(c *client.Client) error { _, err := c.Snapshot(ctx, "r1"); return err }, 3, "unavailable"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h, url := serve(t, c.script)
			err := c.call(client.New(url, client.WithRetries(2)))
			if (c.code == "") != (err == nil) || (c.code != "" && !client.IsCode(err, c.code)) {
				t.Errorf("answered %v, want %q", err, c.code)
			}
			if len(h.attempts) != c.attempts {
				t.Errorf("%d attempts, want %d", len(h.attempts), c.attempts)
			}
			keys := map[string]bool{}
			for _, r := range h.attempts {
				keys[r.Header.Get("Idempotency-Key")] = true
			}
			if len(keys) != 1 {
				t.Errorf("the attempts carried keys %v, want one", keys)
			}
		})
	}
}

// TestABearerSourceRefreshes: a call the host refuses as unauthenticated is sent once more with
// a fresh token; a second 401 is the answer.
func TestABearerSourceRefreshes(t *testing.T) {
	t.Parallel()
	h, url := serve(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer fresh" {
			problem(w, 401, "unauthorized", "")
			return
		}
		_, _ = w.Write([]byte(`{"runId":"r1"}`))
	})
	var refreshes int
	src := client.BearerFunc(func(_ context.Context, refresh bool) (string, error) {
		if refresh {
			refreshes++
			return "fresh", nil
		}
		return "expired", nil
	})
	if _, err := client.New(url, client.WithBearerSource(src)).Snapshot(context.Background(), "r1"); err != nil || refreshes != 1 || len(h.attempts) != 2 {
		t.Errorf("answered %v after %d refreshes and %d attempts", err, refreshes, len(h.attempts))
	}
	failing := client.BearerFunc(func(context.Context, bool) (string, error) { return "", errors.New("the identity provider is down") })
	if _, err := client.New(url, client.WithBearerSource(failing), client.WithRetries(0)).Snapshot(context.Background(), "r1"); err == nil || !strings.Contains(err.Error(), "the identity provider is down") {
		t.Errorf("a source that fails: %v", err)
	}
}

// TestProblemAndCreated: a problem's message names its first field error; Request says whether
// it created the interrupt or answered an earlier request of its key.
func TestProblemAndCreated(t *testing.T) {
	t.Parallel()
	_, url := serve(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		switch n {
		case 1:
			w.WriteHeader(201)
		case 2:
			w.WriteHeader(200)
		default:
			w.WriteHeader(400)
			_, _ = w.Write([]byte(`{"status":400,"code":"validation_error","detail":"payload is not acceptable","errors":[{"path":"/payload/data/requiredApprovals","message":"3 approvals can never come from the 2 principals of approversList"},{"path":"/x","message":"y"}]}`))
			return
		}
		_, _ = w.Write([]byte(`{"runId":"r1","interruptId":"i1"}`))
	})
	c := client.New(url)
	ctx := context.Background()
	first, err := c.Request(ctx, "r1", "n1", []byte(`{}`), nil)
	again, err2 := c.Request(ctx, "r1", "n1", []byte(`{}`), nil)
	if err != nil || err2 != nil || !first.Created || again.Created {
		t.Errorf("created %v then %v (%v %v)", first.Created, again.Created, err, err2)
	}
	_, err = c.Request(ctx, "r1", "n1", []byte(`{}`), nil)
	if err == nil || !strings.Contains(err.Error(), "/payload/data/requiredApprovals: 3 approvals can never come from the 2 principals of approversList; and 1 more") {
		t.Errorf("the problem says %v", err)
	}
}

// TestARefreshedBearerIsKept: after a refresh, the call's further attempts (a 503 here) send the
// token the source holds, without refreshing it again.
func TestARefreshedBearerIsKept(t *testing.T) {
	t.Parallel()
	_, url := serve(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		switch n {
		case 1:
			problem(w, 401, "unauthorized", "")
		case 2:
			problem(w, 503, "unavailable", "0")
		default:
			_, _ = w.Write([]byte(`{}`))
		}
	})
	refreshes := 0
	src := client.BearerFunc(func(_ context.Context, refresh bool) (string, error) {
		if refresh {
			refreshes++
		}
		return "t", nil
	})
	if _, err := client.New(url, client.WithBearerSource(src)).Snapshot(context.Background(), "r1"); err != nil || refreshes != 1 {
		t.Errorf("answered %v after %d refreshes, want 1", err, refreshes)
	}
}

// TestGatewayRefusals: a refusal the API's gateway answers itself ({"message": ...}, before the
// host runs) is a Problem with the host's code for it, so that a missing scope is told from a
// bad token in code, and the scope a challenge names is kept.
func TestGatewayRefusals(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		status          int
		challenge, body string
		code, scope     string
	}{
		{401, `Bearer error="invalid_token"`, `{"message":"Unauthorized"}`, "unauthorized", ""},
		{403, `Bearer error="insufficient_scope", scope="runs:read"`, `{"message":"Forbidden"}`, "forbidden", "runs:read"},
		{403, "", `{"message":"Forbidden"}`, "forbidden", ""},
		{404, "", `{"message":"Not Found"}`, "not_found", ""},
		{502, "", `{"message":"Internal Server Error"}`, "http_502", ""},
	} {
		t.Run(fmt.Sprint(tt.status, tt.scope), func(t *testing.T) {
			t.Parallel()
			_, url := serve(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
				if tt.challenge != "" {
					w.Header().Set("WWW-Authenticate", tt.challenge)
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			})
			c := client.New(url, client.WithRetries(0))
			_, err := c.Snapshot(context.Background(), "r1")
			var p *client.Problem
			if !errors.As(err, &p) || p.Code != tt.code || p.Scope != tt.scope || p.Status != tt.status {
				t.Errorf("%d: %#v, want code %s, scope %q", tt.status, err, tt.code, tt.scope)
			}
		})
	}
}
