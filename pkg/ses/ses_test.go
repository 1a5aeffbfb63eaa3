package ses_test

import (
	"context"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/ses"
)

// TestSend: a mail reaches SES (moto's, through the real client) as one MIME message from the
// verified sender to its address, with a plain-text and an HTML part in UTF-8, read back with
// Go's own mail and MIME parsers (the text's lines end in CRLF, as mail's do); a subject
// holding a line break stays one header.
func TestSend(t *testing.T) {
	localaws.NeedsStack(t)
	ctx := context.Background()
	c := localaws.SES()
	if err := localaws.VerifySender(ctx, c, localaws.Sender); err != nil {
		t.Fatal(err)
	}
	subject := "Approve “inv-" + time.Now().Format("150405.000000") + "”\r\nBcc: mallory@example.com"
	m := ses.NewMailer(c, localaws.Sender, "Interrupt host")
	if err := m.Send(ctx, outbound.Mail{To: []string{"alice@example.com"}, Subject: subject, Text: "Héllo Alice,\nopen it.\n", HTML: "<p>Héllo <b>Alice</b></p>"}); err != nil {
		t.Fatal(err)
	}
	var found *mail.Message
	for _, s := range localaws.Sent(t) {
		msg, err := mail.ReadMessage(strings.NewReader(s.Raw))
		if err != nil {
			continue
		}
		got, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
		if err == nil && strings.HasPrefix(got, subject[:strings.Index(subject, "\r")]) {
			found = msg
			if got != strings.Join(strings.Fields(subject), " ") {
				t.Errorf("subject %q", got)
			}
		}
	}
	if found == nil {
		t.Fatal("the message is not among what SES accepted")
	}
	if from := found.Header.Get("From"); from != `"Interrupt host" <`+localaws.Sender+`>` {
		t.Errorf("from %q", from)
	}
	if found.Header.Get("Bcc") != "" || found.Header.Get("To") != "<alice@example.com>" {
		t.Errorf("to %q, bcc %q", found.Header.Get("To"), found.Header.Get("Bcc"))
	}
	mediatype, params, err := mime.ParseMediaType(found.Header.Get("Content-Type"))
	if err != nil || mediatype != "multipart/alternative" {
		t.Fatalf("content type %q %v", found.Header.Get("Content-Type"), err)
	}
	r := multipart.NewReader(found.Body, params["boundary"])
	var parts []string
	for {
		p, err := r.NextPart() // decodes quoted-printable
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(p)
		parts = append(parts, p.Header.Get("Content-Type")+" "+string(b))
	}
	if len(parts) != 2 || parts[0] != "text/plain; charset=utf-8 Héllo Alice,\r\nopen it.\r\n" || parts[1] != "text/html; charset=utf-8 <p>Héllo <b>Alice</b></p>" {
		t.Errorf("parts %q", parts)
	}
}
