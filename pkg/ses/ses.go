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
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"strings"
	"time"
	"unicode/utf8"

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
// way, and raw is what every SES stand-in keeps whole. NewMailer makes one that sends; a Mailer
// made otherwise composes (the tests' Message) but has nothing to send with.
//
// It holds the client's SendEmail, not the client: a Mailer is kept behind an interface
// (outbound.Mailer), and once text/template's MethodByName is linked (gojsonschema,
// html/template) the linker keeps every exported method of whatever such a value holds, so a
// stored *sesv2.Client kept all 116 of SES's API operations alive (1.5 MiB of console).
type Mailer struct {
	send func(context.Context, *sdk.SendEmailInput, ...func(*sdk.Options)) (*sdk.SendEmailOutput, error)
	// From is the sender's address, and Name its display name.
	From, Name string
	// Now is the clock of the Date header; nil means time.Now.
	Now func() time.Time
}

// NewMailer is the Mailer sending with c (NewClient) from the address from, named name.
func NewMailer(c *sdk.Client, from, name string) Mailer {
	return Mailer{send: c.SendEmail, From: from, Name: name}
}

// Send sends m as one message to its To addresses. SES throttling, failing or not answering
// wraps interrupt.ErrUnavailable (try again later); SES refusing the message (an address it will
// not send to, a sender not verified) is an error of its own.
func (s Mailer) Send(ctx context.Context, m outbound.Mail) error {
	raw, err := s.message(m)
	if err != nil {
		return err
	}
	_, err = s.send(ctx, &sdk.SendEmailInput{
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
// UTF-8 (lines of at most 76 characters). The subject holds whatever an interrupt's title
// holds: its line breaks and runs of space are one space, so no part of it may start a header,
// and it is folded (subjectHeader), since SES refuses a line over 1,000 characters.
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
		subjectHeader(m.Subject),
		"Date: " + now().UTC().Format(time.RFC1123Z),
		fmt.Sprintf("Message-ID: <%x@%s>", id, s.From[strings.LastIndexByte(s.From, '@')+1:]),
		"MIME-Version: 1.0",
		"Content-Type: multipart/alternative;\r\n boundary=" + w.Boundary(),
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

// maxHeaderLine is the length a header line is kept within (RFC 5322, 2.1.1, "should").
const maxHeaderLine = 78

// subjectHeader is the Subject header of subject, whitespace collapsed: as it is when it is
// printable ASCII that fits one line, else as RFC 2047 encoded words (Q, UTF-8) of at most 75
// characters each, one per line after the first (folding whitespace between encoded words is
// not part of the text, so a word may be split anywhere between characters).
func subjectHeader(subject string) string {
	const name = "Subject: "
	s := strings.Join(strings.Fields(subject), " ")
	if len(name)+len(s) <= maxHeaderLine && !strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r > '~' }) &&
		!strings.Contains(s, "=?") {
		return name + s
	}
	const open, end = "=?utf-8?q?", "?="
	var words []string
	var cur strings.Builder
	limit := maxHeaderLine - len(name) // the first line holds the header's name too
	for _, r := range s {
		enc := qRune(r)
		if cur.Len() > 0 && len(open)+cur.Len()+len(enc)+len(end) > limit {
			words = append(words, open+cur.String()+end)
			cur.Reset()
			limit = maxHeaderLine - 1 // a folded line starts with one space
		}
		cur.WriteString(enc)
	}
	if cur.Len() > 0 {
		words = append(words, open+cur.String()+end)
	}
	return name + strings.Join(words, "\r\n ")
}

// qRune is r as Q encoding writes it in an encoded word: letters and digits as they are, a space
// as "_", every other byte of its UTF-8 as =XX.
func qRune(r rune) string {
	switch {
	case r == ' ':
		return "_"
	case r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'):
		return string(r)
	}
	var b strings.Builder
	for _, c := range []byte(string(r)) {
		fmt.Fprintf(&b, "=%02X", c)
	}
	return b.String()
}
