package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/client"
	"github.com/interrupthost/interrupthost/internal/devjwt"
	"github.com/interrupthost/interrupthost/internal/localaws"
	ihctl "github.com/interrupthost/interrupthost/pkg/operator"
)

// lockedBuffer is a follow mode's output, read while it is written.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestIhctl runs the operator's commands against the stack as an on-call engineer would, with
// an operator's JWT: a run's snapshot, the tenant's pending interrupts, a lost notification
// sent again, its events followed to the run's end, an approval link
// minted for an approver (who then decides with it), a subscription and its deliveries, and a
// webhook endpoint's life, a run cancelled with a reason, contacts put, listed and deleted;
// then the built binary, for its table and its exit codes.
func TestIhctl(t *testing.T) {
	localaws.NeedsStack(t)
	t.Parallel()
	ctx := context.Background()
	tenant := newRun("tenant")
	ops := jwt(t, devjwt.Token{Subject: "oncall", Tenant: tenant, Scopes: []string{"interrupts:write", "runs:read", "subscriptions:manage", "webhooks:manage", "tokens:delegate", "contacts:manage", "integrations:manage"}})
	// The run's engine: who requests an interrupt never mints a token deciding it.
	eng := client.New(gatewayURL(), client.WithBearer(jwt(t, devjwt.Token{Subject: "engine", Tenant: tenant, Scopes: []string{"interrupts:write", "runs:read"}})))
	env := func(k string) string {
		return map[string]string{ihctl.EnvURL: gatewayURL(), ihctl.EnvToken: ops}[k]
	}
	cli := func(t *testing.T, stdin string, args ...string) []byte {
		t.Helper()
		var out bytes.Buffer
		if err := ihctl.Run(ctx, append([]string{"-o", "json"}, args...), env, ihctl.IO{In: strings.NewReader(stdin), Out: &out}); err != nil {
			t.Fatalf("ihctl %s: %v", strings.Join(args, " "), err)
		}
		return out.Bytes()
	}
	c := client.New(gatewayURL(), client.WithBearer(ops))
	sub := subscribe(t, c, "interrupt.requested")

	run := newRun("ihctl")
	payload := strings.Replace(example(t, "approval"), `"requiredApprovals":1`, `"requiredApprovals":1,"approversList":["alice"]`, 1)
	if _, err := eng.Request(ctx, run, "gate", json.RawMessage(payload), nil); err != nil {
		t.Fatal(err)
	}
	var snap client.Snapshot
	if err := json.Unmarshal(cli(t, "", "run", run), &snap); err != nil || snap.RunID != run || snap.Status != "waiting-approval" || len(snap.Pending) != 1 {
		t.Fatalf("run: %+v %v", snap, err)
	}
	// The tenant's list is a read model the stream's consumer (read-models) keeps: the request
	// is listed once it has taken its commit.
	var waiting client.PendingInterrupt
	indexed := time.NewTicker(50 * time.Millisecond)
	defer indexed.Stop()
	for deadline := time.Now().Add(30 * time.Second); ; <-indexed.C {
		out := cli(t, "", "pending", "--page", "1")
		if json.Unmarshal(out, &waiting) == nil && waiting.RunID == run {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pending, 30 s after the request: %s", out)
		}
	}
	if waiting.NodeID != "gate" || waiting.Kind != "approval" || waiting.InterruptID != snap.Pending[0].InterruptID || waiting.Title == "" {
		t.Fatalf("pending: %+v", waiting)
	}
	if out := cli(t, "", "pending", "--run", run); json.Unmarshal(out, &waiting) != nil || waiting.NodeID != "gate" {
		t.Fatalf("pending --run: %s", out)
	}
	// The approver lost the notification: it is sent again, as it was delivered. A resend sends
	// only what the subscription was sent, and its attempt is recorded after the receiver
	// answered: wait for the record.
	first := sub.await(1)[0]
	recorded := time.NewTicker(50 * time.Millisecond)
	defer recorded.Stop()
	for deadline := time.Now().Add(30 * time.Second); ; <-recorded.C {
		attempts, err := c.Deliveries(ctx, sub.sub.ID)
		if err == nil && slices.ContainsFunc(attempts, func(a client.Attempt) bool { return a.EventID == first.ID }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no attempt of %s recorded after 30 s: %+v %v", first.ID, attempts, err)
		}
	}
	// Delivery is at least once (a slow answer may have had the original retried), so the
	// resend shows as one more transmission than the receiver had, whatever that was.
	sub.mu.Lock()
	before := sub.attempts[first.ID]
	sub.mu.Unlock()
	var resent client.Attempt
	if out := cli(t, "", "notify", sub.sub.ID, run, "gate"); json.Unmarshal(out, &resent) != nil || !resent.Resent || resent.Status != "delivered" || resent.EventID != first.ID {
		t.Fatalf("notify: %s (the notification was %s)", out, first.ID)
	}
	sub.mu.Lock()
	sent := sub.attempts[first.ID]
	sub.mu.Unlock()
	if sent < before+1 {
		t.Errorf("the receiver got %s %d times after the resend, %d before it: the resend never arrived", first.ID, sent, before)
	}

	followed := &lockedBuffer{}
	done := make(chan error, 1)
	go func() {
		fctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		done <- ihctl.Run(fctx, []string{"-o", "json", "events", run, "--follow", "--every", "100ms"}, env, ihctl.IO{Out: followed})
	}()

	var link ihctl.Link
	if err := json.Unmarshal(cli(t, "", "link", run, "gate", "--for", "alice", "--ttl", "1h"), &link); err != nil || link.Intent != "resolve" {
		t.Fatalf("link: %+v %v", link, err)
	}
	tok, ok := strings.CutPrefix(link.URL, gatewayURL()+"/approve/")
	if !ok {
		t.Fatalf("link %s is not the gateway's approval page", link.URL)
	}
	if resp, err := http.Get(link.URL); err != nil || resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("the link's page: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	if _, err := client.New(gatewayURL()).ResolveByToken(ctx, tok, map[string]any{"action": "accept", "decidedAt": "2026-12-01T09:00:00Z"}); err != nil {
		t.Fatalf("alice decides with the link's token: %v", err)
	}
	if err := eng.Complete(ctx, run, "done"); err != nil {
		t.Fatal(err)
	}
	if out := cli(t, "", "pending"); len(out) != 0 {
		t.Errorf("pending after the run's end: %s", out)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("events --follow: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("events --follow did not end with the run")
	}
	var types []string
	for line := range strings.Lines(followed.String()) {
		var e client.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil || e.RunID != run {
			t.Fatalf("a followed line %q: %v", line, err)
		}
		types = append(types, e.Type)
	}
	if got := strings.Join(types, " "); !strings.HasPrefix(got, "interrupt.requested ") || !strings.Contains(got, " interrupt.resolved ") || !strings.HasSuffix(got, " run.completed") {
		t.Errorf("followed %s", got)
	}

	sub.await(1)
	var shown client.Subscription
	if err := json.Unmarshal(cli(t, "", "subscription", sub.sub.ID), &shown); err != nil || shown.ID != sub.sub.ID || shown.Secret != "" {
		t.Errorf("subscription: %+v %v", shown, err)
	}
	subs, err := jsonLines[client.Subscription](cli(t, "", "subscriptions"))
	if err != nil || len(subs) != 1 || subs[0].ID != sub.sub.ID || subs[0].Secret != "" {
		t.Errorf("subscriptions: %+v %v", subs, err)
	}
	attempts, err := jsonLines[client.Attempt](cli(t, "", "deliveries", sub.sub.ID))
	if err != nil || len(attempts) == 0 || attempts[0].Status != "delivered" || attempts[0].RunID != run {
		t.Errorf("deliveries: %+v %v", attempts, err)
	}

	var e client.Endpoint
	if err := json.Unmarshal(cli(t, "whsec_ihctl_first_0123456789\n", "endpoint", "create", "stripe"), &e); err != nil || e.Provider != "stripe" || e.Path != "/webhooks/"+e.ID {
		t.Fatalf("endpoint create: %+v %v", e, err)
	}
	for _, step := range [][]string{{"show", e.ID}, {"rotate", e.ID}} {
		var got client.Endpoint
		out := cli(t, "whsec_ihctl_second_0123456789\nwhsec_ihctl_first_0123456789\n", append([]string{"endpoint"}, step...)...)
		if err := json.Unmarshal(out, &got); err != nil || got.ID != e.ID || bytes.Contains(out, []byte("whsec_")) {
			t.Errorf("endpoint %s: %s %v", step[0], out, err)
		}
	}
	if listed, err := jsonLines[client.Endpoint](cli(t, "", "endpoints")); err != nil || len(listed) != 1 || listed[0].ID != e.ID {
		t.Errorf("endpoints: %+v %v", listed, err)
	}
	cli(t, "", "endpoint", "delete", e.ID)
	if listed, err := jsonLines[client.Endpoint](cli(t, "", "endpoints")); err != nil || len(listed) != 0 {
		t.Errorf("endpoints after the delete: %+v %v", listed, err)
	}

	// A run cancelled by hand, with why; contacts kept by hand.
	other := newRun("ihctl-cancel")
	if _, err := eng.Request(ctx, other, "gate", json.RawMessage(payload), nil); err != nil {
		t.Fatal(err)
	}
	var ended ihctl.Ended
	if err := json.Unmarshal(cli(t, "", "cancel", other, "--reason", "the order was withdrawn"), &ended); err != nil || ended.Status != "cancelled" || ended.Reason != "the order was withdrawn" || ended.By == "" {
		t.Fatalf("cancel: %+v %v", ended, err)
	}
	// Cancelled again with another reason: the host keeps the first end, and so does what prints.
	var again ihctl.Ended
	if err := json.Unmarshal(cli(t, "", "cancel", other, "--reason", "another reason"), &again); err != nil || again != ended {
		t.Errorf("cancel again: %+v %v, want the recorded %+v", again, err, ended)
	}
	if s, err := eng.Snapshot(ctx, other); err != nil || s.Status != "cancelled" {
		t.Errorf("the cancelled run: %+v %v", s, err)
	}
	var contact client.Contact
	if err := json.Unmarshal(cli(t, "", "contact", "put", "principal", "alice", "--email", "alice@example.com", "--name", "Alice"), &contact); err != nil || contact.Email != "alice@example.com" {
		t.Fatalf("contact put: %+v %v", contact, err)
	}
	if listed, err := jsonLines[client.Contact](cli(t, "", "contacts")); err != nil || len(listed) != 1 || listed[0].Name != "Alice" {
		t.Errorf("contacts: %+v %v", listed, err)
	}
	cli(t, "", "contact", "delete", "principal", "alice")
	appID, teamID := slackIDs()
	var app client.SlackApp
	if err := json.Unmarshal(cli(t, "0123456789abcdef0123456789abcdef\n", "slack", "put", appID, teamID), &app); err != nil || app.AppID != appID || app.BotToken {
		t.Fatalf("slack put: %+v %v", app, err)
	}
	if out := cli(t, "", "slack", "show"); strings.Contains(string(out), "0123456789abcdef") {
		t.Errorf("slack show answers the secret: %s", out)
	}
	cli(t, "", "slack", "delete")
	if err := ihctl.Run(ctx, []string{"slack", "show"}, env, ihctl.IO{Out: &bytes.Buffer{}}); !client.IsCode(err, "not_found") {
		t.Errorf("a deleted Slack app: %v", err)
	}
	if listed, err := jsonLines[client.Contact](cli(t, "", "contacts")); err != nil || len(listed) != 0 {
		t.Errorf("contacts after the delete: %+v %v", listed, err)
	}
	if err := ihctl.Run(ctx, []string{"endpoint", "show", e.ID}, env, ihctl.IO{Out: &bytes.Buffer{}}); !client.IsCode(err, "not_found") {
		t.Errorf("a deleted endpoint: %v", err)
	}
	if err := ihctl.Run(ctx, []string{"endpoint", "create", "stripe"}, env, ihctl.IO{In: strings.NewReader(""), Out: &bytes.Buffer{}}); !errors.Is(err, ihctl.ErrUsage) {
		t.Errorf("create without a secret: %v", err)
	}

	bin := filepath.Join(t.TempDir(), "ihctl")
	build := exec.Command("go", "build", "-o", bin, "./cmd/ihctl")
	build.Dir = root(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-o", "json", "run", run)
	cmd.Env = append(os.Environ(), ihctl.EnvURL+"="+gatewayURL(), ihctl.EnvToken+"="+ops)
	out, err := cmd.Output()
	if err != nil || json.Unmarshal(out, &snap) != nil || snap.Status != "completed" {
		t.Errorf("ihctl run: %v %s", err, out)
	}
	cmd = exec.Command(bin, "run", run) // a table, for people
	cmd.Env = append(os.Environ(), ihctl.EnvURL+"="+gatewayURL(), ihctl.EnvToken+"="+ops)
	if out, err := cmd.Output(); err != nil || !regexp.MustCompile(`(?m)^status +completed$`).Match(out) || bytes.HasPrefix(out, []byte("{")) {
		t.Errorf("ihctl run as a table: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		args []string
		code int
	}{
		{nil, 2},
		{[]string{"frobnicate"}, 2},
		{[]string{"run", "no-such-run"}, 1},
	} {
		cmd := exec.Command(bin, tc.args...)
		cmd.Env = append(os.Environ(), ihctl.EnvURL+"="+gatewayURL(), ihctl.EnvToken+"="+ops)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		if exit := (*exec.ExitError)(nil); !errors.As(err, &exit) || exit.ExitCode() != tc.code || strings.Contains(stderr.String(), ops) {
			t.Errorf("ihctl %v: %v, want exit %d; stderr %s", tc.args, err, tc.code, stderr.String())
		}
	}
}

// jsonLines reads ihctl's -o json list: one JSON object a line.
func jsonLines[T any](out []byte) ([]T, error) {
	var items []T
	for line := range strings.Lines(string(out)) {
		var v T
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			return items, err
		}
		items = append(items, v)
	}
	return items, nil
}
