package client_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/interrupthost/interrupthost/client"
)

// An engine restarts with the access token it saved, which expired while it was down: the host
// refuses it (401), the source is asked for a new one, and the call goes on.
func ExampleWithBearerSource() {
	grant := engineCredentials()
	saved, fetched := "a-token-that-expired-overnight", 0
	src := client.BearerFunc(func(ctx context.Context, refresh bool) (string, error) {
		if saved != "" && !refresh {
			return saved, nil
		}
		saved, fetched = "", fetched+1
		return grant.Bearer(ctx, refresh)
	})
	engine := client.New(hostURL(), client.WithBearerSource(src))
	_, err := engine.Pending(context.Background(), "", 10)
	fmt.Println("listed:", err == nil, "tokens fetched:", fetched)
	// Output: listed: true tokens fetched: 1
}

// The client sends again what the host says to (a 503 with its Retry-After, a 429, a network
// error), with backoff and jitter and one Idempotency-Key for every attempt of a write. Here the
// local stack's fault injector throttles 80% of DynamoDB's writes, so that the host answers 503
// whenever its own SDK's retries run out; the request still creates its interrupt once.
func ExampleWithRetries() {
	ctx := context.Background()
	injectFaults(`{"dynamodb":[{"ops":["PutItem"],"throttle":0.8}]}`)
	defer injectFaults("")
	engine := client.New(hostURL(), client.WithRetries(10),
		client.WithBearerSource(engineCredentials()))
	run := "example-faults-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	payload, err := client.Payload(client.Clarification{Questions: []client.Question{{ID: "po", Question: "Which purchase order?"}}}, "ask-po", 0, nil)
	check(err)
	in, err := engine.Request(ctx, run, "ask", payload, nil)
	check(err)
	pending, err := engine.PendingIn(ctx, run)
	check(err)
	fmt.Println("requested:", in.Status, "created:", in.Created, "pending:", len(pending))
	// Output: requested: pending created: true pending: 1
}

// injectFaults sets the local stack's faults (infra/local/faults), or clears them given "".
func injectFaults(config string) {
	method := http.MethodPut
	if config == "" {
		method = http.MethodDelete
	}
	req, err := http.NewRequest(method, hostURL()+"/local-faults", strings.NewReader(config))
	check(err)
	resp, err := http.DefaultClient.Do(req)
	check(err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		check(fmt.Errorf("faults: %s", resp.Status))
	}
}
