package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/interrupthost/interrupthost/client"
)

// TestClientCredentials: the source asks the token endpoint once for many concurrent calls, with
// the grant, the scopes and the client's credentials in Basic; again when the host refuses the
// token (401) and when the token is about to expire; a refused grant is an error naming it.
func TestClientCredentials(t *testing.T) {
	t.Parallel()
	var fetched atomic.Int64
	expiresIn := atomic.Int64{}
	expiresIn.Store(3600)
	issuer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, secret, ok := r.BasicAuth()
		if err := r.ParseForm(); err != nil || !ok || id != "engine" || secret != "s3cret" || r.Form.Get("grant_type") != "client_credentials" || r.Form.Get("scope") != "interrupts:write runs:read" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"invalid_client"}`))
			return
		}
		n := fetched.Add(1)
		_, _ = fmt.Fprintf(w, `{"access_token":"tok-%d","token_type":"Bearer","expires_in":%d}`, n, expiresIn.Load())
	}))
	t.Cleanup(issuer.Close)
	var refuseNext atomic.Bool
	host, url := serve(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if refuseNext.CompareAndSwap(true, false) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(`{"runId":"r1","status":"running","pending":[],"lastSeq":0}`))
	})
	src := &client.ClientCredentials{TokenURL: issuer.URL, ClientID: "engine", ClientSecret: "s3cret", Scopes: []string{"interrupts:write", "runs:read"}}
	c := client.New(url, client.WithBearerSource(src))
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Snapshot(ctx, "r1"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := fetched.Load(); n != 1 {
		t.Errorf("8 concurrent calls fetched %d tokens, want 1", n)
	}
	refuseNext.Store(true)
	if _, err := c.Snapshot(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	host.mu.Lock()
	last := host.attempts[len(host.attempts)-1].Header.Get("Authorization")
	host.mu.Unlock()
	if n := fetched.Load(); n != 2 || last != "Bearer tok-2" {
		t.Errorf("after a 401: %d tokens fetched, the retry sent %q", n, last)
	}
	expiresIn.Store(30) // the next token expires within a minute: each call fetches anew
	if _, err := src.Bearer(ctx, true); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Bearer(ctx, false); err != nil || fetched.Load() != 4 {
		t.Errorf("a token about to expire was kept: %d fetched, %v", fetched.Load(), err)
	}
	bad := &client.ClientCredentials{TokenURL: issuer.URL, ClientID: "engine", ClientSecret: "wrong"}
	if _, err := bad.Bearer(ctx, false); err == nil {
		t.Error("a refused grant gave a token")
	}
}

// TestARequestUnderAnOldKey: a request under a key that named another payload is answered the
// first interrupt with a *ReplayError; AcceptOtherPayloads keeps it an answer; the same payload
// again is a plain replay.
func TestARequestUnderAnOldKey(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		same   string
		accept bool
		replay bool
	}{
		{"another payload", "false", false, true},
		{"another payload, accepted", "false", true, false},
		{"the same payload", "true", false, false},
	} {
		_, url := serve(t, func(n int, w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprintf(w, `{"runId":"r1","nodeId":"n1","interruptId":"i1","key":"k","kind":"approval","status":"pending","seq":1,"tokens":[],"samePayload":%s}`, c.same)
		})
		opts := []client.Option{client.WithBearer("jwt")}
		if c.accept {
			opts = append(opts, client.AcceptOtherPayloads())
		}
		in, err := client.New(url, opts...).Request(context.Background(), "r1", "n1", []byte(`{"kind":"approval","key":"k","data":{}}`), nil)
		var replay *client.ReplayError
		if errors.As(err, &replay) != c.replay || in.InterruptID != "i1" || (!c.replay && err != nil) {
			t.Errorf("%s: %+v %v", c.name, in, err)
		}
	}
}
