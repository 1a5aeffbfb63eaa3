package e2e

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/devjwt"
	"github.com/interrupthost/interrupthost/internal/localaws"
)

// inboxItem is what GET /inbox answers of one interrupt.
type inboxItem struct {
	RunID string
	Title string
	Voted bool
	URL   string
	Tally *struct{ Approvals, Required int }
}

// inboxOf is bearer's inbox, the first page.
func inboxOf(t *testing.T, bearer string) []inboxItem {
	t.Helper()
	a := do(t, "GET", "/inbox", bearer, "")
	if a.Status != 200 {
		t.Fatalf("inbox: %d %s", a.Status, a.Body)
	}
	var page struct{ Items []inboxItem }
	if err := json.Unmarshal(a.Body, &page); err != nil {
		t.Fatal(err)
	}
	return page.Items
}

// eventually polls bearer's inbox until ok holds of its runs (the read models follow the
// table's stream: an interrupt is listed once read-models took its commit), for 20 s at most.
func eventually(t *testing.T, bearer string, ok func([]inboxItem) bool) []inboxItem {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		items := inboxOf(t, bearer)
		if ok(items) {
			return items
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 20 s the inbox holds %+v", items)
		}
		<-time.After(100 * time.Millisecond) // the stream signals nothing a test can wait on
	}
}

func runsOf(items []inboxItem) []string {
	var runs []string
	for _, it := range items {
		runs = append(runs, it.RunID)
	}
	return runs
}

// TestInboxThroughTheStack: through the gateway, with the stream's consumer keeping the
// inboxes: alice (group finance) lists her approval and her group's, carol (role manager) hers,
// another tenant's alice none; after alice votes on a quorum of two it stays, voted, and it
// leaves her inbox when bob's vote closes it.
func TestInboxThroughTheStack(t *testing.T) {
	localaws.NeedsStack(t)
	tenant := newRun("inbox")
	who := func(sub string, groups, roles []string) string {
		return jwt(t, devjwt.Token{Subject: sub, Tenant: tenant, Groups: groups, Roles: roles, Scopes: []string{"approvals:respond"}})
	}
	eng := jwt(t, devjwt.Token{Subject: "engine", Tenant: tenant, Scopes: []string{"interrupts:write", "runs:read"}})
	alice, bob, carol := who("alice", []string{"finance"}, nil), who("bob", nil, nil), who("carol", nil, []string{"manager"})
	outsider := jwt(t, devjwt.Token{Subject: "alice", Tenant: newRun("elsewhere"), Groups: []string{"finance"}, Scopes: []string{"approvals:respond"}})
	approval := func(title, field string) string {
		return `{"kind":"approval","key":"k","timeoutMs":3600000,"data":{"artifactId":"inv-1","artifactType":"invoice","title":"` + title + `","actions":["accept","reject"],` + field + `}}`
	}
	runs := map[string]string{
		"both":    approval("Both of us", `"approversList":["alice","bob"],"requiredApprovals":2`),
		"finance": approval("Finance", `"approverGroupRefs":["finance"]`),
		"manager": approval("Managers", `"approverRoleRefs":["manager"]`),
	}
	ids := map[string]string{}
	for name, payload := range runs {
		ids[name] = newRun(name)
		if a := do(t, "POST", "/runs/"+ids[name]+"/interrupts", eng, `{"nodeId":"approve","payload":`+payload+`}`); a.Status != 201 {
			t.Fatalf("%s: %d %s", name, a.Status, a.Body)
		}
	}
	items := eventually(t, alice, func(items []inboxItem) bool { return len(items) == 2 })
	if got := runsOf(items); !slices.Contains(got, ids["both"]) || !slices.Contains(got, ids["finance"]) {
		t.Errorf("alice's inbox: %v", got)
	}
	for _, it := range items {
		if !strings.HasPrefix(it.URL, gatewayURL()+"/approve/"+it.RunID+"/") || it.Voted {
			t.Errorf("an item of alice's: %+v", it)
		}
	}
	if got := runsOf(eventually(t, carol, func(items []inboxItem) bool { return len(items) == 1 })); got[0] != ids["manager"] {
		t.Errorf("carol's inbox: %v", got)
	}
	if got := inboxOf(t, outsider); len(got) != 0 {
		t.Errorf("another tenant's alice: %+v", got)
	}
	vote := func(bearer string) {
		t.Helper()
		a := do(t, "POST", "/runs/"+ids["both"]+"/interrupts/approve", bearer, `{"resumeValue":{"action":"accept","decidedAt":"2026-12-02T09:00:00Z"}}`)
		if a.Status != 200 && a.Status != 202 {
			t.Fatalf("vote: %d %s", a.Status, a.Body)
		}
	}
	vote(alice)
	eventually(t, alice, func(items []inboxItem) bool {
		i := slices.IndexFunc(items, func(it inboxItem) bool { return it.RunID == ids["both"] })
		return i >= 0 && items[i].Voted && items[i].Tally != nil && items[i].Tally.Approvals == 1
	})
	vote(bob)
	// Closed: the inbox checks each entry against its log, so it is gone at once.
	if got := runsOf(inboxOf(t, alice)); slices.Contains(got, ids["both"]) {
		t.Errorf("alice's inbox once the approval closed: %v", got)
	}
}
