package approvalpage

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/pkg/host"
)

// TestTheSignedInPageSaysTheTenant: a signed-in page's header says who is signed in to which
// tenant, and a request not found may be another tenant's, which a signed-in page says (a
// link's page, whose token names its tenant, says only that it does not exist); a page not
// signed in has no such line.
func TestTheSignedInPageSaysTheTenant(t *testing.T) {
	t.Parallel()
	render := func(v View) string {
		b, err := Render(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	signedIn := render(SignedIn(Inbox(host.InboxPage{}, false, "", nil, time.Now()), "alice", "acme", "c", "signin/signout"))
	if want := "<h1>What waits for you</h1>\n<p>Signed in as alice · acme</p>\n</header>"; !strings.Contains(signedIn, want) {
		t.Errorf("the signed-in page's header lacks %q:\n%s", want, signedIn)
	}
	gone := render(SignedIn(NotFound(http.StatusNotFound), "alice", "acme", "c", "signin/signout"))
	if want := "or it belongs to another tenant than acme, the one you are signed in to."; !strings.Contains(gone, want) {
		t.Errorf("the signed-in page of a request not found lacks %q:\n%s", want, gone)
	}
	token := render(NotFound(http.StatusNotFound))
	if !strings.Contains(token, "The request this link names does not exist (any more).</p>") || strings.Contains(token, "Signed in") || strings.Contains(token, "tenant") {
		t.Errorf("a link's page of a request not found:\n%s", token)
	}
}
