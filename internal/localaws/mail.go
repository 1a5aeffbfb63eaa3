package localaws

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
)

// Sender is the address the local stack sends mail from: an identity it verifies in moto's SES
// at start, as template.yaml's SenderIdentity is in AWS.
const Sender = "interrupt-host@example.com"

// SES is a client of the local SES API (moto, beside Secrets Manager).
func SES() *sesv2.Client {
	return sesv2.NewFromConfig(Config(), func(o *sesv2.Options) {
		o.BaseEndpoint = endpoint("AWS_ENDPOINT_URL_SESV2", SecretsManagerAddr)
	})
}

// VerifySender makes address an identity SES sends from; doing it again is no error.
func VerifySender(ctx context.Context, c *sesv2.Client, address string) error {
	_, err := c.CreateEmailIdentity(ctx, &sesv2.CreateEmailIdentityInput{EmailIdentity: aws.String(address)})
	if err != nil && strings.Contains(err.Error(), "AlreadyExists") {
		return nil
	}
	return err
}

// SentMail is one message moto's SES accepted: its raw MIME, as it would have gone out.
type SentMail struct {
	Destinations []string `json:"destinations"`
	Raw          string   `json:"raw_data"`
}

// Sent lists every message moto's SES has accepted, oldest first, read from moto's model data
// (moto-api/data.json): the way to read what was sent (docs/approvers.md, "Mail").
func Sent(tb testing.TB) []SentMail {
	tb.Helper()
	base := aws.ToString(endpoint("AWS_ENDPOINT_URL_SESV2", SecretsManagerAddr))
	resp, err := http.Get(strings.TrimSuffix(base, "/") + "/moto-api/data.json")
	if err != nil {
		tb.Fatalf("localaws: moto's data: %v", err)
	}
	defer resp.Body.Close()
	var data struct {
		SES struct {
			RawMessage []SentMail `json:"RawMessage"`
		} `json:"ses"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&data); err != nil {
		tb.Fatalf("localaws: moto's data: %v", err)
	}
	return data.SES.RawMessage
}
