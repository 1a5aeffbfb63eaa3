package mailbox_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/infra/local/mailbox"
	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/ses"
)

// TestTheMailboxShowsWhatWasSent: a mail sent through the host's SES adapter to moto is listed
// first at /local-mail, its subject decoded, and its page shows its text with a link longer
// than a quoted-printable line whole and clickable, and its HTML in a sandboxed frame; a
// message number that is not there is 404.
func TestTheMailboxShowsWhatWasSent(t *testing.T) {
	localaws.NeedsStack(t)
	ctx := context.Background()
	c := localaws.SES()
	if err := localaws.VerifySender(ctx, c, localaws.Sender); err != nil {
		t.Fatal(err)
	}
	subject := "Approve “inv-" + time.Now().Format("150405.000000") + "”"
	long := "https://host.example/approve/isb1.k1." + strings.Repeat("Ab3", 40) + "?choice=accept"
	if err := ses.NewMailer(c, localaws.Sender, "Interrupt host").Send(ctx, outbound.Mail{
		To: []string{"alice@example.com"}, Subject: subject, Text: "Hello Alice,\nopen it: " + long + "\n", HTML: `<p>Hello <a href="` + long + `">Open it</a></p>`,
	}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(&mailbox.Mailbox{Moto: "http://" + localaws.SecretsManagerAddr})
	t.Cleanup(srv.Close)
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, list := get(mailbox.Path)
	first := regexp.MustCompile(`<a href="(/local-mail/\d+)">([^<]*)</a>`).FindStringSubmatch(list)
	if status != 200 || first == nil || first[2] != subject {
		t.Fatalf("the list: %d, first %q\n%s", status, first, list)
	}
	status, msg := get(first[1])
	if status != 200 || !strings.Contains(msg, `<a href="`+long+`" target="_blank" rel="noopener">`+long+`</a>`) || !strings.Contains(msg, `<iframe sandbox=`) {
		t.Errorf("the message: %d\n%s", status, msg)
	}
	if status, _ := get(mailbox.Path + "/999999999"); status != 404 {
		t.Errorf("no such message: %d", status)
	}
}
