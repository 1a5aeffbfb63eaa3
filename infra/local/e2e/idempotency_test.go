package e2e

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// headerValues splits the Idempotency-Key headers to send, NUL-separated ("" sends none).
func headerValues(joined string) []string {
	if joined == "" {
		return nil
	}
	return strings.Split(joined, "\x00")
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
		first := call{base: stack, method: "POST", path: path, bearer: alice, idempotencyKeys: []string{"k-1"}, body: accept}.must(t)
		if first.Status != 200 || first.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("first: %d %v %s", first.Status, first.Header, first.Body)
		}
		for _, body := range []string{accept, acceptReordered} {
			again := call{base: stack, method: "POST", path: path, bearer: alice, idempotencyKeys: []string{"k-1"}, body: body}.must(t)
			if again.Status != 200 || !bytes.Equal(again.Body, first.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
				t.Errorf("retry: %d %v %s", again.Status, again.Header, again.Body)
			}
		}
		if sf := (call{base: stack, method: "POST", path: path, bearer: alice, idempotencyKeys: []string{`"k-1"`}, body: accept}).must(t); sf.Status != 200 || !bytes.Equal(sf.Body, first.Body) {
			t.Errorf("the key as an sf-string is the same key: %d %s", sf.Status, sf.Body)
		}
		if n := commitsOf(t, stack, run); n != 2 {
			t.Errorf("%d commits, want 2", n)
		}
		// A fresh gateway with fresh function processes reads the answer from the log.
		cold := serveGateway(t, nil)
		if a := (call{base: cold, method: "POST", path: path, bearer: alice, idempotencyKeys: []string{"k-1"}, body: accept}).must(t); a.Status != 200 || !bytes.Equal(a.Body, first.Body) || a.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("replay from a cold process: %d %s", a.Status, a.Body)
		}
		// Without the key, or with another, a resolved interrupt is resolved.
		if a := (call{base: stack, method: "POST", path: path, bearer: alice, body: accept}).must(t); a.Status != 409 {
			t.Errorf("no key: %d", a.Status)
		}
		if a := (call{base: stack, method: "POST", path: path, bearer: alice, idempotencyKeys: []string{"k-2"}, body: accept}).must(t); a.Status != 409 {
			t.Errorf("another key: %d", a.Status)
		}
	})

	t.Run("a 202 is replayed as a 202", func(t *testing.T) {
		run := newGate(t, map[string]any{"requiredApprovals": 2})
		path := "/runs/" + run + "/interrupts/gate"
		first := call{base: stack, method: "POST", path: path, bearer: alice, idempotencyKeys: []string{"vote"}, body: accept}.must(t)
		call{base: stack, method: "POST", path: path, bearer: bob, body: accept}.must(t)
		again := call{base: stack, method: "POST", path: path, bearer: alice, idempotencyKeys: []string{"vote"}, body: accept}.must(t)
		if first.Status != 202 || again.Status != 202 || !bytes.Equal(first.Body, again.Body) {
			t.Errorf("first %d %s, retry %d %s", first.Status, first.Body, again.Status, again.Body)
		}
	})

	t.Run("same key, another request", func(t *testing.T) {
		run := newGate(t, map[string]any{"requiredApprovals": 2})
		other := newGate(t, nil)
		path := "/runs/" + run + "/interrupts/gate"
		call{base: stack, method: "POST", path: path, bearer: alice, idempotencyKeys: []string{"k"}, body: accept}.must(t)
		before := commitsOf(t, stack, run)
		a := call{base: stack, method: "POST", path: path, bearer: alice, idempotencyKeys: []string{"k"}, body: reject}.must(t)
		if a.Status != 422 || !strings.Contains(string(a.Body), `"code":"idempotency_key_reused"`) {
			t.Errorf("another body: %d %s", a.Status, a.Body)
		}
		// Keys are scoped to the caller: bob's "k" is his own.
		if a := (call{base: stack, method: "POST", path: path, bearer: bob, idempotencyKeys: []string{"k"}, body: reject}).must(t); a.Status != 200 {
			t.Errorf("bob's k: %d %s", a.Status, a.Body)
		}
		// And to the run.
		if a := (call{base: stack, method: "POST", path: "/runs/" + other + "/interrupts/gate", bearer: alice, idempotencyKeys: []string{"k"}, body: accept}).must(t); a.Status != 200 || a.Header.Get("Idempotent-Replayed") != "" {
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
			a := call{base: stack, method: "POST", path: path, bearer: alice, idempotencyKeys: headerValues(key), body: accept}.must(t)
			if a.Status != 400 || !strings.Contains(string(a.Body), `"code":"validation_error"`) {
				t.Errorf("key %q: %d %s", key, a.Status, a.Body)
			}
		}
		if n := commitsOf(t, stack, run); n != 1 {
			t.Errorf("malformed keys wrote: %d commits", n)
		}
		for _, key := range []string{strings.Repeat("k", 255), `"with space and \"quotes\""`, "urn:uuid:2f1c/x"} {
			r := newGate(t, nil)
			if a := (call{base: stack, method: "POST", path: "/runs/" + r + "/interrupts/gate", bearer: alice, idempotencyKeys: headerValues(key), body: accept}).must(t); a.Status != 200 {
				t.Errorf("key %q: %d %s", key, a.Status, a.Body)
			}
		}
	})

	t.Run("token surface", func(t *testing.T) {
		run := newRun("idem-token")
		var created struct{ Tokens []tokenView }
		do(t, "POST", "/runs/"+run+"/interrupts", eng, `{"nodeId":"pay","payload":`+example(t, "external-event")+`,"token":{"intent":"resolve"}}`).json(t, &created)
		path := "/interrupts/" + created.Tokens[0].Token
		first := call{base: stack, method: "POST", path: path, idempotencyKeys: []string{"webhook-evt-1"}, body: `{"resumeValue":{"paid":true}}`}.must(t)
		again := call{base: stack, method: "POST", path: path, idempotencyKeys: []string{"webhook-evt-1"}, body: `{"resumeValue":{"paid":true}}`}.must(t)
		if first.Status != 200 || again.Status != 200 || !bytes.Equal(first.Body, again.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("webhook retry: %d / %d %s", first.Status, again.Status, again.Body)
		}
		if a := (call{base: stack, method: "POST", path: path, idempotencyKeys: []string{"webhook-evt-1"}, body: `{"resumeValue":{"paid":false}}`}).must(t); a.Status != 422 {
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
				answers[i] = call{base: gatewayURL(), method: "POST", path: path, bearer: alice, idempotencyKeys: headerValues(key), body: decision("accept")}.must(t)
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
