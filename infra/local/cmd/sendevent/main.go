// Command sendevent signs a provider event with the provider's own library and posts it to a
// webhook endpoint of the host, as the provider would:
//
//	go run ./infra/local/cmd/sendevent -provider stripe -secret whsec_... \
//	  -url http://127.0.0.1:3000/webhooks/<id> -event event.json
//
// Stripe events are signed with stripe-go's webhook.GenerateTestSignedPayload, Standard Webhooks
// events with the reference library's Webhook.Sign (webhook-id from -id, or a fresh one). It
// prints the status and the answer.
package main

import (
	"bytes"
	"crypto/rand"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	stripewebhook "github.com/stripe/stripe-go/v82/webhook"
)

func main() {
	provider := flag.String("provider", "stripe", "stripe or standard-webhooks")
	secret := flag.String("secret", "", "the endpoint's signing secret (whsec_...)")
	url := flag.String("url", "", "the endpoint's URL: http://127.0.0.1:3000/webhooks/<id>")
	event := flag.String("event", "", "a file holding the event's JSON body (- for standard input)")
	id := flag.String("id", "", "the webhook-id of a Standard Webhooks event (default: a fresh one)")
	flag.Parse()
	if *secret == "" || *url == "" || *event == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := send(*provider, *secret, *url, *event, *id); err != nil {
		fmt.Fprintln(os.Stderr, "sendevent:", err)
		os.Exit(1)
	}
}

func send(provider, secret, url, file, id string) error {
	var body []byte
	var err error
	if file == "-" {
		body, err = io.ReadAll(os.Stdin)
	} else {
		body, err = os.ReadFile(file)
	}
	if err != nil {
		return err
	}
	headers, err := sign(provider, secret, id, body, time.Now())
	if err != nil {
		return err
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	fmt.Printf("%d %s\n", resp.StatusCode, answer)
	return err
}

// sign makes the headers the provider would send with body.
func sign(provider, secret, id string, body []byte, now time.Time) (map[string]string, error) {
	switch provider {
	case "stripe":
		p := stripewebhook.GenerateTestSignedPayload(&stripewebhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: now})
		return map[string]string{"Stripe-Signature": p.Header}, nil
	case "standard-webhooks":
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			return nil, err
		}
		if id == "" {
			id = "msg_" + rand.Text()
		}
		sig, err := wh.Sign(id, now, body)
		if err != nil {
			return nil, err
		}
		return map[string]string{"webhook-id": id, "webhook-timestamp": strconv.FormatInt(now.Unix(), 10), "webhook-signature": sig}, nil
	}
	return nil, fmt.Errorf("unknown provider %q", provider)
}
