// Command teamsclick clicks a card's Approve or Reject as Teams would: it has a token for the
// bot's app id from the local stack's stand-in for the Bot Framework (POST
// /local-botframework/token), and posts the invoke of one click, from one Entra user, to the
// stack's messaging endpoint (/teams/messages), then prints the answer. With -conversation it
// clicks the newest card the host posted to that conversation of the stand-in; this is how a
// person tries a teams subscription's cards on `make run` (docs/operations.md, "Teams"):
//
//	go run ./infra/local/cmd/teamsclick -app <the bot's app id> -tenant <its Entra tenant> \
//	    -user <alice's Entra object id> -conversation '19:approvals@thread.tacv2'
//
// -verb interrupt.reject rejects; -data names a button's data instead of a conversation's card.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "teamsclick:", err)
		os.Exit(1)
	}
}

// standIn is the stand-in's path under the stack's URL (internal/botframework.Path).
const standIn = "/local-botframework"

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("teamsclick", flag.ContinueOnError)
	base := fs.String("url", "http://127.0.0.1:3000", "the local stack's URL")
	app := fs.String("app", "", "the bot's Microsoft app id (required)")
	tenant := fs.String("tenant", "", "the bot's Entra tenant id (required)")
	user := fs.String("user", "", "the Entra object id of the person who clicks (required)")
	verb := fs.String("verb", "interrupt.accept", "the button's verb: interrupt.accept or interrupt.reject")
	conversation := fs.String("conversation", "", "click the newest card the host posted to this conversation of the stand-in")
	data := fs.String("data", "", "the button's data (its v), instead of -conversation")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *app == "" || *tenant == "" || *user == "" || (*conversation == "") == (*data == "") {
		fs.Usage()
		return errors.New("-app, -tenant, -user and one of -conversation and -data are required")
	}
	root := strings.TrimSuffix(*base, "/")
	service := root + standIn + "/"
	if *conversation != "" {
		v, err := newestButton(root, *conversation, *verb)
		if err != nil {
			return err
		}
		*data = v
	}
	tok, err := token(root, *app, service)
	if err != nil {
		return err
	}
	body, _ := json.Marshal(map[string]any{
		"type": "invoke", "name": "adaptiveCard/action", "channelId": "msteams", "serviceUrl": service,
		"from":         map[string]any{"aadObjectId": *user},
		"conversation": map[string]any{"id": *conversation, "tenantId": *tenant},
		"channelData":  map[string]any{"tenant": map[string]any{"id": *tenant}},
		"value":        map[string]any{"action": map[string]any{"type": "Action.Execute", "verb": *verb, "data": map[string]any{"v": *data}}, "trigger": "manual"},
	})
	req, err := http.NewRequest(http.MethodPost, root+"/teams/messages", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	_, err = fmt.Fprintf(out, "%s %s\n", resp.Status, answer)
	return err
}

// token is a token of the stand-in's for app about an activity that came through service.
func token(root, app, service string) (string, error) {
	body, _ := json.Marshal(map[string]string{"appId": app, "serviceUrl": service})
	resp, err := http.Post(root+standIn+"/token", "application/json", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out struct {
		Token string `json:"token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Token == "" {
		return "", fmt.Errorf("the stand-in gave no token (%s)", resp.Status)
	}
	return out.Token, nil
}

// newestButton is the data of the button of verb on the newest card the conversation holds.
func newestButton(root, conversation, verb string) (string, error) {
	resp, err := http.Get(root + standIn + "/v3/conversations/" + url.PathEscape(conversation) + "/activities")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var list struct {
		Activities []struct {
			Activity struct {
				Attachments []struct {
					Content struct {
						Actions []struct {
							Verb string `json:"verb"`
							Data struct {
								V string `json:"v"`
							} `json:"data"`
						} `json:"actions"`
					} `json:"content"`
				} `json:"attachments"`
			} `json:"activity"`
		} `json:"activities"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return "", err
	}
	for i := len(list.Activities) - 1; i >= 0; i-- {
		for _, at := range list.Activities[i].Activity.Attachments {
			for _, a := range at.Content.Actions {
				if a.Verb == verb && a.Data.V != "" {
					return a.Data.V, nil
				}
			}
		}
	}
	return "", fmt.Errorf("no card in %s offers %s", conversation, verb)
}
