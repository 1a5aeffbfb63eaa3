package apigw_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

var (
	executor = caller{"executor", "acme", []string{apigw.ScopeReceiptsRedeem}}
	foreign  = caller{"executor", "evilcorp", []string{apigw.ScopeReceiptsRedeem}}
)

// refundApproval asks alice and bob to allow issue_refund for order 4471.
const refundApproval = `{"nodeId":"%s","payload":{"kind":"approval","key":"%s","data":{"artifactId":"4471","artifactType":"refund","title":"Refund order 4471","actions":["accept","reject","edit-accept"],"approversList":["alice","bob"]}},` +
	`"toolCall":{"name":"issue_refund","arguments":{"order":"4471","amountCents":124000,"currency":"EUR"}}}`

func (s *stack) requestCall(t *testing.T, node string) host.InterruptView {
	t.Helper()
	c := requestCall(engine, "r1", node, "")
	c.body = strings.ReplaceAll(refundApproval, "%s", node)
	r := invoke(t, s.fn("request-interrupt"), c)
	if r.Status != http.StatusCreated {
		t.Fatalf("request: %d %s", r.Status, r.Body)
	}
	var v host.InterruptView
	r.decode(t, &v)
	return v
}

func (s *stack) outcome(t *testing.T, who caller, id string) (response, host.OutcomeDocument) {
	t.Helper()
	r := invoke(t, s.fn("receipts"), call{route: "GET /runs/{runId}/outcomes/{interruptId}", who: &who, params: map[string]string{"runId": "r1", "interruptId": id}})
	var out host.OutcomeDocument
	if r.Status == http.StatusOK {
		r.decode(t, &out)
	}
	return r, out
}

func (s *stack) redeem(t *testing.T, who caller, receipt, arguments string) response {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"receipt": receipt, "toolCall": map[string]any{"name": "issue_refund", "arguments": json.RawMessage(arguments)}})
	return invoke(t, s.fn("receipts"), call{route: "POST /receipts/redeem", who: &who, body: string(body)})
}

// TestAnApprovalBindsTheCall: the page shows the call in words and edits its arguments; the
// outcome answers the call as approved and a receipt that redeems once, for that call alone,
// in its tenant; other arguments spend nothing; a rejected call has no receipt.
func TestAnApprovalBindsTheCall(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	v := s.requestCall(t, "refund")
	alice := s.mintOK(t, "r1", "refund", `{"intent":"resolve","principal":"alice"}`).Token
	page := string(s.page(t, "GET", alice, nil).Body)
	for _, want := range []string{
		"The agent will call <bdi>issue_refund</bdi> with <bdi>order</bdi> <bdi>4471</bdi>, <bdi>amount</bdi> 1,240.00 EUR",
		"<summary>Edit the call, then accept</summary>", `name="edit.amountCents" value="124000"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	key := formKeyRE.FindStringSubmatch(page)[1]
	decided := s.decide(t, alice, url.Values{"formKey": {key}, "action": {"edit-accept"}, "edit.order": {"4471"}, "edit.amountCents": {"100000"}, "edit.currency": {"EUR"}})
	if !strings.Contains(string(decided.Body), "Approved with edits: <bdi>issue_refund</bdi> with <bdi>order</bdi> <bdi>4471</bdi>, <bdi>amount</bdi> 1,000.00 EUR") {
		t.Errorf("the decided page does not say the call as approved: %s", decided.Body)
	}

	r, out := s.outcome(t, engine, v.InterruptID)
	if r.Status != http.StatusOK || out.ApprovedCall == nil || out.Receipt == "" || out.DecidedBy != "alice" {
		t.Fatalf("outcome: %d %s", r.Status, r.Body)
	}
	if want, _ := interrupt.ArgumentsDigest(json.RawMessage(`{"order":"4471","amountCents":100000,"currency":"EUR"}`)); out.ApprovedCall.ArgumentsDigest != want || fmt.Sprint(out.ApprovedCall.Arguments["amountCents"]) != "100000" {
		t.Errorf("approved %+v", out.ApprovedCall)
	}
	if r, _ := s.outcome(t, intruder, v.InterruptID); r.Status != http.StatusNotFound {
		t.Errorf("another tenant's outcome: %d", r.Status)
	}

	before := s.items(t)
	for _, try := range []struct {
		who    caller
		args   string
		status int
		code   string
	}{
		{executor, `{"order":"4471","amountCents":124000,"currency":"EUR"}`, 409, "call_differs"},
		{foreign, `{"order":"4471","amountCents":100000,"currency":"EUR"}`, 404, "not_found"},
		{engine, `{"order":"4471","amountCents":100000,"currency":"EUR"}`, 403, "forbidden"},
	} {
		r := s.redeem(t, try.who, out.Receipt, try.args)
		if r.Status != try.status || !strings.Contains(string(r.Body), `"code":"`+try.code+`"`) {
			t.Errorf("%s %s: %d %s", try.who.sub, try.args, r.Status, r.Body)
		}
	}
	if after := s.items(t); after != before {
		t.Fatalf("refused redemptions wrote")
	}
	first := s.redeem(t, executor, out.Receipt, `{ "currency":"EUR", "order":"4471", "amountCents":1e5 }`)
	var redeemed struct {
		ApprovedBy, RedeemedBy string
		ToolCall               host.CallDocument
	}
	first.decode(t, &redeemed)
	if first.Status != http.StatusOK || redeemed.ApprovedBy != "alice" || redeemed.RedeemedBy != "executor" || redeemed.ToolCall.ArgumentsDigest != out.ApprovedCall.ArgumentsDigest {
		t.Fatalf("redeem: %d %s", first.Status, first.Body)
	}
	if r := s.redeem(t, executor, out.Receipt, `{"order":"4471","amountCents":100000,"currency":"EUR"}`); r.Status != 409 || !strings.Contains(string(r.Body), "receipt_spent") {
		t.Errorf("again: %d %s", r.Status, r.Body)
	}
	if got := s.eventTypes(t, "acme", "r1"); got[len(got)-1] != "receipt.redeemed" {
		t.Errorf("events %v", got)
	}

	rejected := s.requestCall(t, "refund-2")
	if r := s.resolve(t, approver, "r1", "refund-2", `{"action":"reject","decidedAt":"2026-11-30T09:00:00Z"}`); r.Status != http.StatusOK {
		t.Fatalf("reject: %d %s", r.Status, r.Body)
	}
	if _, out := s.outcome(t, engine, rejected.InterruptID); out.Status != "resolved" || out.ApprovedCall != nil || out.Receipt != "" {
		t.Errorf("rejected: %+v", out)
	}
}

// TestOneOfManyRedemptionsSucceeds: of concurrent redemptions of one receipt, sent at once to
// the function as API Gateway would, exactly one is 200 and the rest 409 receipt_spent.
func TestOneOfManyRedemptionsSucceeds(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	v := s.requestCall(t, "refund")
	if r := s.resolve(t, approver, "r1", "refund", `{"action":"accept","decidedAt":"2026-11-30T09:00:00Z"}`); r.Status != http.StatusOK {
		t.Fatalf("accept: %d %s", r.Status, r.Body)
	}
	_, out := s.outcome(t, engine, v.InterruptID)
	const racers = 6
	statuses := make([]int, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			statuses[i] = s.redeem(t, executor, out.Receipt, `{"order":"4471","amountCents":124000,"currency":"EUR"}`).Status
		})
	}
	wg.Wait()
	won := 0
	for _, st := range statuses {
		switch st {
		case http.StatusOK:
			won++
		case http.StatusConflict:
		default:
			t.Errorf("a redemption answered %d", st)
		}
	}
	if won != 1 {
		t.Errorf("%d redemptions succeeded, want 1: %v", won, statuses)
	}
}
