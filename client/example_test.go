package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"strconv"
	"time"

	"github.com/interrupthost/interrupthost/client"
)

// An engine asks two people to approve a payment, waits by the interrupt's id, and reads the
// decision and every vote; a restart that asks again with the same key gets the same interrupt,
// already decided; a mistyped node is an error at once, not a wait. The engine authenticates as
// an OAuth client (client credentials); the team's mailer, trusted tooling holding
// tokens:delegate, mints each approver's link and each follows their own.
func Example() {
	ctx := context.Background()
	engine := client.New(hostURL(), client.WithBearerSource(engineCredentials()))
	run := "example-" + strconv.FormatInt(time.Now().UnixNano(), 36)

	payload, err := client.Payload(client.Approval{
		ArtifactID: "inv-2291", ArtifactType: "invoice", Title: "Pay invoice 2291 (12,400 EUR)",
		Actions: []string{"accept", "reject"}, RequiredApprovals: 2, ApproversList: []string{"alice", "bob"},
	}, "pay-inv-2291", 72*time.Hour, nil)
	check(err)
	in, err := engine.Request(ctx, run, "approve", payload, nil)
	check(err)
	fmt.Println("requested:", in.Status, "created:", in.Created)

	mailer := client.New(hostURL(), client.WithBearerSource(&client.ClientCredentials{
		TokenURL: hostURL() + "/local-issuer/token", ClientID: "interrupt-host-local-mailer", ClientSecret: "local-mailer-secret"}))
	for _, who := range []string{"alice", "bob"} {
		link, err := mailer.Mint(ctx, run, "approve", client.TokenRequest{Intent: "resolve", Principal: who})
		check(err)
		decision := client.Decision{Action: "accept", DecidedAt: time.Now().UTC().Format(time.RFC3339), Feedback: who + " checked the PO"}
		_, err = client.New(hostURL()).ResolveByToken(ctx, link.Token, decision)
		check(err)
	}

	out, err := engine.AwaitInterrupt(ctx, run, in.InterruptID, nil)
	check(err)
	d, err := client.Decode[client.Decision](out.ResumeValue)
	check(err)
	fmt.Println("decision:", d.Action, "by", out.DecidedBy()) // the host's record, not the label d.DecidedBy
	for _, v := range out.Votes {
		vote, err := client.Decode[client.Decision](v.ResumeValue)
		check(err)
		fmt.Printf("vote: %s %s (%s)\n", v.Principal, v.Action, vote.Feedback)
	}

	again, err := engine.Request(ctx, run, "approve", payload, nil)
	check(err)
	fmt.Println("asked again:", again.Status, "created:", again.Created, "same interrupt:", again.InterruptID == in.InterruptID)

	_, err = engine.Await(ctx, run, "aprove", nil)
	fmt.Println("a mistyped node:", errors.Is(err, client.ErrNotRequested))
	// Output:
	// requested: pending created: true
	// decision: accept by bob
	// vote: alice accept (alice checked the PO)
	// vote: bob accept (bob checked the PO)
	// asked again: resolved created: false same interrupt: true
	// a mistyped node: true
}

// engineCredentials is the local stack's engine signing in by the client-credentials grant
// (Cognito's /oauth2/token in AWS, with the engine's app client).
func engineCredentials() *client.ClientCredentials {
	return &client.ClientCredentials{TokenURL: hostURL() + "/local-issuer/token", ClientID: "interrupt-host-local-engine", ClientSecret: "local-engine-secret"}
}

// hostURL is the host's API: the one `make test` starts (GATEWAY_URL), else `make run`'s.
func hostURL() string {
	if u := os.Getenv("GATEWAY_URL"); u != "" {
		return u
	}
	return "http://127.0.0.1:3000"
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
