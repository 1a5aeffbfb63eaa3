package ses_test

import (
	"bytes"
	"mime"
	"net/mail"
	"strings"
	"testing"

	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/ses"
)

// TestEveryLineFits: a subject of any length and script is folded into encoded words, so that
// every line of the message (headers and bodies) stays within 78 characters, well under the
// 1,000 SES takes, and reads back as the subject sent (whitespace collapsed).
func TestEveryLineFits(t *testing.T) {
	t.Parallel()
	m := ses.Mailer{From: "host@example.com", Name: "Interrupt host"}
	for name, subject := range map[string]string{
		"a short one":               "Approve invoice 4471",
		"120 Japanese characters":   strings.Repeat("請求書の承認をお願いします。", 9)[:360],
		"1,000 ASCII characters":    strings.Repeat("x", 1000),
		"words and an encoded-word": strings.Repeat("Approve =?utf-8?q?x?= now ", 40),
		"a line break":              "Approve\r\nBcc: mallory@example.com",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			raw, err := m.Message(outbound.Mail{To: []string{"alice@example.com"}, Subject: subject, Text: strings.Repeat("a long line of text ", 100), HTML: "<p>" + strings.Repeat("é", 2000) + "</p>"})
			if err != nil {
				t.Fatal(err)
			}
			for i, line := range bytes.Split(raw, []byte("\r\n")) {
				if len(line) > 78 {
					t.Fatalf("line %d has %d characters: %.90q", i, len(line), line)
				}
			}
			msg, err := mail.ReadMessage(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			got, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
			if want := strings.Join(strings.Fields(subject), " "); err != nil || got != want {
				t.Errorf("the subject reads back as %q (%v), want %q", got, err, want)
			}
			if msg.Header.Get("Bcc") != "" {
				t.Errorf("the subject started a header")
			}
		})
	}
}
