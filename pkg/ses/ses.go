// Package ses is the one adapter to Amazon SES (API v2): it sends the mail package outbound
// composes as one MIME message, a plain-text and an HTML part. No other package imports SES's
// SDK.
package ses

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdk "github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/aws-sdk-go-v2/service/sesv2/types"
	"github.com/aws/smithy-go"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/outbound"
)

// NewClient is SES v2's client over cfg (awsconfig.Load).
func NewClient(cfg aws.Config) *sdk.Client { return sdk.NewFromConfig(cfg) }

// Mailer sends outbound.Mail from From, an identity the deployment verified (template.yaml's
// SenderIdentity). Raw MIME rather than SES's simple content: the message is the same either
// way, and raw is what every SES stand-in keeps whole.
type Mailer struct {
	Client *sdk.Client
	// From is the sender's address, and Name its display name.
	From, Name string
	// Now is the clock of the Date header; nil means time.Now.
	Now func() time.Time
}

// Send sends m as one message to its To addresses. SES throttling, failing or not answering
// wraps interrupt.ErrUnavailable (try again later); SES refusing the message (an address it will
// not send to, a sender not verified) is an error of its own.
func (s Mailer) Send(ctx context.Context, m outbound.Mail) error {
	raw, err := s.message(m)
	if err != nil {
		return err
	}
	_, err = s.Client.SendEmail(ctx, &sdk.SendEmailInput{
		FromEmailAddress: aws.String(s.From),
		Destination:      &types.Destination{ToAddresses: m.To},
		Content:          &types.EmailContent{Raw: &types.RawMessage{Data: raw}},
	})
	var apiErr smithy.APIError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &apiErr) && apiErr.ErrorFault() != smithy.FaultServer &&
		apiErr.ErrorCode() != "TooManyRequestsException" && apiErr.ErrorCode() != "LimitExceededException":
		return fmt.Errorf("ses: send: %w", err)
	default: // throttled, SES's own failure, or no answer (the network, the retries spent)
		return fmt.Errorf("ses: send: %w: %v", interrupt.ErrUnavailable, err)
	}
}

// message is m as MIME: multipart/alternative of its text and its HTML, each quoted-printable
// UTF-8. The subject is an encoded word with its line breaks folded: it holds whatever an
// interrupt's title holds, and no part of it may start a header.
func (s Mailer) message(m outbound.Mail) ([]byte, error) {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	to := make([]string, len(m.To))
	for i, a := range m.To {
		to[i] = (&mail.Address{Address: a}).String()
	}
	id := make([]byte, 12)
	_, _ = rand.Read(id)
	var b bytes.Buffer
	for _, h := range []string{
		"From: " + (&mail.Address{Name: s.Name, Address: s.From}).String(),
		"To: " + strings.Join(to, ", "),
		"Subject: " + mime.QEncoding.Encode("utf-8", strings.Join(strings.Fields(m.Subject), " ")),
		"Date: " + now().UTC().Format(time.RFC1123Z),
		fmt.Sprintf("Message-ID: <%x@%s>", id, s.From[strings.LastIndexByte(s.From, '@')+1:]),
		"MIME-Version: 1.0",
		"Content-Type: multipart/alternative; boundary=" + w.Boundary(),
		"Auto-Submitted: auto-generated",
	} {
		b.WriteString(h + "\r\n")
	}
	b.WriteString("\r\n")
	for _, part := range []struct{ ctype, text string }{{"text/plain; charset=utf-8", m.Text}, {"text/html; charset=utf-8", m.HTML}} {
		pw, err := w.CreatePart(textproto.MIMEHeader{"Content-Type": {part.ctype}, "Content-Transfer-Encoding": {"quoted-printable"}})
		if err != nil {
			return nil, err
		}
		qp := quotedprintable.NewWriter(pw)
		if _, err := qp.Write([]byte(part.text)); err != nil {
			return nil, err
		}
		if err := qp.Close(); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	b.Write(body.Bytes())
	return b.Bytes(), nil
}
