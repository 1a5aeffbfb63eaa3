// Command slackclick clicks a button of a Slack message as Slack would: it posts the
// block_actions payload of one click to an app's interactivity URL (the local stack's
// /slack/interactions by default), signed with the app's signing secret, and prints the answer.
// Slack has no local stand-in; this is how a person tries the Approve and Reject buttons on
// `make run` (docs/approvers.md, "Deciding in Slack"):
//
//	go run ./infra/local/cmd/slackclick -secret <signing secret> -app A0123 -team T0123 \
//	    -user U0ALICE -action interrupt.accept -value <the button's value> \
//	    -response-url http://127.0.0.1:9999/respond
//
// -skew signs it that far in the past (-skew 6m: a replay Slack's five minutes refuse).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/interrupthost/interrupthost/internal/slackclick"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "slackclick:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("slackclick", flag.ContinueOnError)
	target := fs.String("url", "http://127.0.0.1:3000/slack/interactions", "the app's interactivity request URL")
	secret := fs.String("secret", "", "the app's signing secret (required)")
	var c slackclick.Click
	fs.StringVar(&c.AppID, "app", "", "the app's id, api_app_id (required)")
	fs.StringVar(&c.TeamID, "team", "", "the workspace's id, team.id (required)")
	fs.StringVar(&c.UserID, "user", "", "the Slack member who clicks (required)")
	fs.StringVar(&c.ActionID, "action", "interrupt.accept", "the button's action_id")
	fs.StringVar(&c.Value, "value", "", "the button's value, as the message carries it (required)")
	fs.StringVar(&c.ResponseURL, "response-url", "", "where the host answers the click")
	fs.StringVar(&c.TriggerID, "trigger", "local-trigger", "the click's trigger_id (a Reject's modal opens with it)")
	blocks := fs.String("blocks", "", "a file holding the message's blocks (a JSON array), sent back with the click")
	skew := fs.Duration("skew", 0, "sign this long before now")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *secret == "" || c.AppID == "" || c.TeamID == "" || c.UserID == "" || c.Value == "" {
		fs.Usage()
		return fmt.Errorf("-secret, -app, -team, -user and -value are required")
	}
	if *blocks != "" {
		b, err := os.ReadFile(*blocks)
		if err != nil {
			return err
		}
		c.Blocks = b
	}
	payload, err := c.Payload()
	if err != nil {
		return err
	}
	body := slackclick.Body(payload)
	req, err := http.NewRequest(http.MethodPost, *target, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for k, v := range slackclick.Sign(*secret, time.Now().Add(-*skew), body) {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	fmt.Fprintf(out, "%d %s\n", resp.StatusCode, answer)
	return err
}
