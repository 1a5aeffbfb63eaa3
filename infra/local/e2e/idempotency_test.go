package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// resolveWithKey posts a resolve with an Idempotency-Key header (verbatim; "" sends none).
func resolveWithKey(t testing.TB, base, path, bearer, key, body string) answer {
	t.Helper()
	req, err := http.NewRequest("POST", base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	if key != "" {
		for _, k := range strings.Split(key, "\x00") {
			req.Header.Add("Idempotency-Key", k)
		}
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, b}
}

func commitsOf(t testing.TB, base, run string) int {
	t.Helper()
	evs := runEvents(t, base, run)
	if len(evs) == 0 {
		return 0
	}
	return evs[len(evs)-1].Seq
}

func TestIdempotencyKey(t *testing.T) {
	eng := jwt(t, engine)
	alice, bob := voter(t, "alice", nil, nil), voter(t, "bob", nil, nil)
	stack := gatewayURL()
	newGate := func(t *testing.T, data map[string]any) string {
		t.Helper()
		run := newRun("idem")
		if a := do(t, "POST", "/runs/"+run+"/interrupts", eng, `{"nodeId":"gate","payload":`+approval(data)+`}`); a.Status != 201 {
			t.Fatalf("request: %d %s", a.Status, a.Body)
		}
		return run
	}
	accept, reject := decision("accept"), decision("reject")
	// The same body, re-serialised by another client: members reordered, spaces added.
	acceptReordered := `{ "resumeValue": { "decidedAt": "2026-11-30T09:00:00Z", "action": "accept" } }`

	t.Run("retry returns the original answer, also after resolution", func(t *testing.T) {
		run := newGate(t, nil)
		path := "/runs/" + run + "/interrupts/gate"
		first := resolveWithKey(t, stack, path, alice, "k-1", accept)
		if first.Status != 200 || first.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("first: %d %v %s", first.Status, first.Header, first.Body)
		}
		for _, body := range []string{accept, acceptReordered} {
			again := resolveWithKey(t, stack, path, alice, "k-1", body)
			if again.Status != 200 || !bytes.Equal(again.Body, first.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
				t.Errorf("retry: %d %v %s", again.Status, again.Header, again.Body)
			}
		}
		if sf := resolveWithKey(t, stack, path, alice, `"k-1"`, accept); sf.Status != 200 || !bytes.Equal(sf.Body, first.Body) {
			t.Errorf("the key as an sf-string is the same key: %d %s", sf.Status, sf.Body)
		}
		if n := commitsOf(t, stack, run); n != 2 {
			t.Errorf("%d commits, want 2", n)
		}
		// A fresh gateway with fresh function processes reads the answer from the log.
		cold := serveGateway(t, nil)
		if a := resolveWithKey(t, cold, path, alice, "k-1", accept); a.Status != 200 || !bytes.Equal(a.Body, first.Body) || a.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("replay from a cold process: %d %s", a.Status, a.Body)
		}
		// Without the key, or with another, a resolved interrupt is resolved.
		if a := resolveWithKey(t, stack, path, alice, "", accept); a.Status != 409 {
			t.Errorf("no key: %d", a.Status)
		}
		if a := resolveWithKey(t, stack, path, alice, "k-2", accept); a.Status != 409 {
			t.Errorf("another key: %d", a.Status)
		}
	})

	t.Run("a 202 is replayed as a 202", func(t *testing.T) {
		run := newGate(t, map[string]any{"requiredApprovals": 2})
		path := "/runs/" + run + "/interrupts/gate"
		first := resolveWithKey(t, stack, path, alice, "vote", accept)
		resolveWithKey(t, stack, path, bob, "", accept)
		again := resolveWithKey(t, stack, path, alice, "vote", accept)
		if first.Status != 202 || again.Status != 202 || !bytes.Equal(first.Body, again.Body) {
			t.Errorf("first %d %s, retry %d %s", first.Status, first.Body, again.Status, again.Body)
		}
	})

	t.Run("same key, another request", func(t *testing.T) {
		run := newGate(t, map[string]any{"requiredApprovals": 2})
		other := newGate(t, nil)
		path := "/runs/" + run + "/interrupts/gate"
		resolveWithKey(t, stack, path, alice, "k", accept)
		before := commitsOf(t, stack, run)
		a := resolveWithKey(t, stack, path, alice, "k", reject)
		if a.Status != 422 || !strings.Contains(string(a.Body), `"code":"idempotency_key_reused"`) {
			t.Errorf("another body: %d %s", a.Status, a.Body)
		}
		// Keys are scoped to the caller: bob's "k" is his own.
		if a := resolveWithKey(t, stack, path, bob, "k", reject); a.Status != 200 {
			t.Errorf("bob's k: %d %s", a.Status, a.Body)
		}
		// And to the run.
		if a := resolveWithKey(t, stack, "/runs/"+other+"/interrupts/gate", alice, "k", accept); a.Status != 200 || a.Header.Get("Idempotent-Replayed") != "" {
			t.Errorf("k in another run: %d %s", a.Status, a.Body)
		}
		if after := commitsOf(t, stack, run); after != before+1 {
			t.Errorf("commits %d → %d, want only bob's", before, after)
		}
	})

	t.Run("malformed keys", func(t *testing.T) {
		run := newGate(t, nil)
		path := "/runs/" + run + "/interrupts/gate"
		for _, key := range []string{
			strings.Repeat("k", 256), `"` + strings.Repeat("k", 256) + `"`, "a b", `"unterminated`, `""`, `"a"junk`,
			`"a";p=1`, "a,b", "a\x00b", `"a","b"`, `"tab\x09"`, `"bad\escape"`, "caf\u00e9",
		} {
			a := resolveWithKey(t, stack, path, alice, key, accept)
			if a.Status != 400 || !strings.Contains(string(a.Body), `"code":"validation_error"`) {
				t.Errorf("key %q: %d %s", key, a.Status, a.Body)
			}
		}
		if n := commitsOf(t, stack, run); n != 1 {
			t.Errorf("malformed keys wrote: %d commits", n)
		}
		for _, key := range []string{strings.Repeat("k", 255), `"with space and \"quotes\""`, "urn:uuid:2f1c/x"} {
			r := newGate(t, nil)
			if a := resolveWithKey(t, stack, "/runs/"+r+"/interrupts/gate", alice, key, accept); a.Status != 200 {
				t.Errorf("key %q: %d %s", key, a.Status, a.Body)
			}
		}
	})

	t.Run("token surface", func(t *testing.T) {
		run := newRun("idem-token")
		var created struct{ Tokens []tokenView }
		do(t, "POST", "/runs/"+run+"/interrupts", eng, `{"nodeId":"pay","payload":`+example(t, "external-event")+`,"token":{"intent":"resolve"}}`).json(t, &created)
		path := "/interrupts/" + created.Tokens[0].Token
		first := resolveWithKey(t, stack, path, "", "webhook-evt-1", `{"resumeValue":{"paid":true}}`)
		again := resolveWithKey(t, stack, path, "", "webhook-evt-1", `{"resumeValue":{"paid":true}}`)
		if first.Status != 200 || again.Status != 200 || !bytes.Equal(first.Body, again.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("webhook retry: %d / %d %s", first.Status, again.Status, again.Body)
		}
		if a := resolveWithKey(t, stack, path, "", "webhook-evt-1", `{"resumeValue":{"paid":false}}`); a.Status != 422 {
			t.Errorf("same key, other event: %d", a.Status)
		}
	})
}

// TestConcurrentDuplicates: two requests with one key at the same instant both receive the
// original answer, and one commit exists.
func TestConcurrentDuplicates(t *testing.T) {
	eng := jwt(t, engine)
	alice := voter(t, "alice", nil, nil)
	for round := range 20 {
		run := newRun("dup")
		do(t, "POST", "/runs/"+run+"/interrupts", eng, `{"nodeId":"gate","payload":`+approval(nil)+`}`)
		path := "/runs/" + run + "/interrupts/gate"
		key := fmt.Sprintf("dup-%d", round)
		answers := make([]answer, 2)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range answers {
			wg.Go(func() {
				<-start
				answers[i] = resolveWithKey(t, gatewayURL(), path, alice, key, decision("accept"))
			})
		}
		close(start)
		wg.Wait()
		replayed := 0
		for _, a := range answers {
			if a.Status != 200 || !bytes.Equal(a.Body, answers[0].Body) {
				t.Fatalf("round %d: answers %d %s / %d %s", round, answers[0].Status, answers[0].Body, answers[1].Status, answers[1].Body)
			}
			if a.Header.Get("Idempotent-Replayed") == "true" {
				replayed++
			}
		}
		if replayed != 1 {
			t.Errorf("round %d: %d answers marked replayed, want 1", round, replayed)
		}
		if n := commitsOf(t, gatewayURL(), run); n != 2 {
			t.Errorf("round %d: %d commits, want 2", round, n)
		}
	}
}
