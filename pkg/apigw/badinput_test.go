package apigw_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/dynamo"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/schema"
)

// TestBadInput: malformed requests are refused with the stated status and code, and change
// nothing: neither the run's log nor the number of items in the table.
func TestBadInput(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.mustRequest(t, "r1", "n1", example(t, "approval"))
	valid := `{"resumeValue":{"action":"accept","decidedAt":"2026-11-30T09:00:00Z"}}`
	run := map[string]string{"runId": "r1", "nodeId": "n1"}
	with := func(k, v string) map[string]string {
		m := map[string]string{"runId": "r1", "nodeId": "n1"}
		m[k] = v
		return m
	}
	big := `{"resumeValue":{"action":"accept","decidedAt":"2026-11-30T09:00:00Z","feedback":"` + strings.Repeat("x", apigw.MaxBody) + `"}}`
	cases := []struct {
		name    string
		h       apigw.Handler
		params  map[string]string
		body    string
		ctype   string
		base64  bool
		status  int
		code    interrupt.Code
		headers map[string]string
	}{
		{"body over the cap", s.fn("resolve-by-run"), run, big, "", false, 413, interrupt.CodePayloadTooLarge, nil},
		{"not JSON", s.fn("resolve-by-run"), run, `resumeValue=1`, "", false, 400, interrupt.CodeValidation, nil},
		{"wrong content type", s.fn("resolve-by-run"), run, valid, "text/plain", false, 415, interrupt.CodeUnsupportedMedia, nil},
		{"no content type", s.fn("resolve-by-run"), run, valid, "-", false, 415, interrupt.CodeUnsupportedMedia, nil},
		{"invalid UTF-8", s.fn("resolve-by-run"), run, "{\"resumeValue\":{\"action\":\"accept\",\"decidedAt\":\"2026-11-30T09:00:00Z\",\"feedback\":\"\xc3\x28\"}}", "", false, 400, interrupt.CodeValidation, nil},
		{"deeply nested", s.fn("resolve-by-run"), run, `{"resumeValue":` + strings.Repeat(`{"a":`, 100) + "1" + strings.Repeat("}", 100) + `}`, "", false, 400, interrupt.CodeValidation, nil},
		{"duplicate keys", s.fn("resolve-by-run"), run, `{"resumeValue":{"action":"reject","action":"accept","decidedAt":"2026-11-30T09:00:00Z"}}`, "", false, 400, interrupt.CodeValidation, nil},
		{"duplicate top-level keys", s.fn("resolve-by-run"), run, `{"resumeValue":1,"resumeValue":{"action":"accept","decidedAt":"2026-11-30T09:00:00Z"}}`, "", false, 400, interrupt.CodeValidation, nil},
		{"bad base64 body", s.fn("resolve-by-run"), run, "!!!", "", true, 400, interrupt.CodeValidation, nil},
		{"number as node id", s.fn("request-interrupt"), run, `{"nodeId":12345678901234567890,"payload":` + example(t, "custom") + `}`, "", false, 400, interrupt.CodeValidation, nil},
		{"huge timeout", s.fn("request-interrupt"), map[string]string{"runId": "r2"}, `{"nodeId":"n","payload":{"kind":"custom","key":"k","data":{"customKind":"x"},"timeoutMs":1e400}}`, "", false, 400, interrupt.CodeValidation, nil},
		{"quorum beyond float64 precision", s.fn("request-interrupt"), map[string]string{"runId": "r2"}, `{"nodeId":"n","payload":{"kind":"approval","key":"k","data":{"artifactId":"a","artifactType":"t","title":"x","actions":["accept"],"requiredApprovals":2.0000000000000001}}}`, "", false, 400, interrupt.CodeValidation, nil},
		{"empty run id", s.fn("resolve-by-run"), with("runId", ""), valid, "", false, 404, interrupt.CodeNotFound, nil},
		{"run id of 129 characters", s.fn("resolve-by-run"), with("runId", strings.Repeat("r", 129)), valid, "", false, 404, interrupt.CodeNotFound, nil},
		{"run id with #", s.fn("resolve-by-run"), with("runId", "acme#run#r1"), valid, "", false, 404, interrupt.CodeNotFound, nil},
		{"node id with /", s.fn("resolve-by-run"), with("nodeId", "n1/../n2"), valid, "", false, 404, interrupt.CodeNotFound, nil},
		{"node id with %2F", s.fn("resolve-by-run"), with("nodeId", "n1%2Fx"), valid, "", false, 404, interrupt.CodeNotFound, nil},
		{"run id with a control character", s.fn("get-run"), with("runId", "r1\x00"), "", "", false, 404, interrupt.CodeNotFound, nil},
		{"run id with a newline", s.fn("list-events"), with("runId", "r1\n"), "", "", false, 404, interrupt.CodeNotFound, nil},
		{"token with a control character", s.fn("resolve-by-token"), map[string]string{"token": "ow2.hs256.k\x01.a.b"}, valid, "", false, 401, interrupt.CodeTokenInvalid, nil},
		{"empty token", s.fn("inspect-by-token"), map[string]string{"token": ""}, "", "", false, 401, interrupt.CodeTokenInvalid, nil},
		{"10 KB token", s.fn("inspect-by-token"), map[string]string{"token": strings.Repeat("a", 10_000)}, "", "", false, 401, interrupt.CodeTokenInvalid, nil},
		{"bad token and bad body: the token first", s.fn("resolve-by-token"), map[string]string{"token": "ow2.hs256.kA.e30.AAAA"}, "not json", "text/plain", false, 401, interrupt.CodeTokenInvalid, nil},
		{"malformed Idempotency-Key", s.fn("resolve-by-run"), run, valid, "", false, 400, interrupt.CodeValidation, map[string]string{"idempotency-key": "a,b"}},
	}
	before, items := len(s.commits(t, "acme", "r1")), s.items(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := invoke(t, c.h, call{who: &everyone, params: c.params, body: c.body, ctype: c.ctype, body64: c.base64, headers: c.headers})
			if r.Status != c.status {
				t.Fatalf("%d %.300s, want %d", r.Status, r.Body, c.status)
			}
			if c.code != "" {
				if p := r.problem(t); p.Code != c.code || p.Type == "" || p.Title == "" || p.Detail == "" || p.Status != c.status {
					t.Errorf("problem %+v", p)
				}
			}
		})
	}
	if after := len(s.commits(t, "acme", "r1")); after != before {
		t.Errorf("run r1 went from %d to %d commits", before, after)
	}
	if got := s.items(t); got != items {
		t.Errorf("the stores went from %s to %s", items, got)
	}
}

var everyone = caller{"root", "acme", []string{apigw.ScopeInterruptsWrite, apigw.ScopeApprovalsRespond, apigw.ScopeRunsRead}}

// throttled fails every PutItem as DynamoDB does under throttling, before it is sent.
func throttled(o *dynamodb.Options) {
	o.RetryMaxAttempts = 1
	o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
		return st.Initialize.Add(middleware.InitializeMiddlewareFunc("throttle", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			if awsmiddleware.GetOperationName(ctx) == "PutItem" {
				return middleware.InitializeOutput{}, middleware.Metadata{}, &smithy.GenericAPIError{Code: "ThrottlingException", Message: "Rate exceeded"}
			}
			return next.HandleInitialize(ctx, in)
		}), middleware.After)
	})
}

func TestDependencyFailuresAre503(t *testing.T) {
	t.Parallel()
	db, table := localaws.NewTable(t)
	healthy := stackOn(t, db, table)
	healthy.mustRequest(t, "r1", "n1", example(t, "custom"))
	before := len(healthy.scan(t)) // r1's commit

	throttledDB := localaws.DynamoDB(throttled)
	downDB := localaws.DynamoDB(func(o *dynamodb.Options) { o.BaseEndpoint, o.RetryMaxAttempts = aws.String("http://127.0.0.1:1"), 1 })
	for name, client := range map[string]*dynamodb.Client{"throttled": throttledDB, "unreachable": downDB} {
		t.Run(name, func(t *testing.T) {
			s := stackOn(t, client, table)
			for _, r := range []response{
				s.resolve(t, approver, "r1", "n1", `{"done":true}`),
				s.request(t, engine, "r2", "n1", example(t, "custom")),
			} {
				if r.Status != http.StatusServiceUnavailable || r.Headers["Retry-After"] == "" || r.problem(t).Code != interrupt.CodeUnavailable {
					t.Errorf("%d %v %s", r.Status, r.Headers, r.Body)
				}
				if strings.Contains(string(r.Body), "Rate exceeded") || strings.Contains(string(r.Body), "127.0.0.1") {
					t.Errorf("the dependency's message reached the client: %s", r.Body)
				}
			}
		})
	}
	if n := len(healthy.commits(t, "acme", "r1")); n != 1 {
		t.Errorf("r1 has %d commits", n)
	}
	if n := len(healthy.scan(t)); n != before {
		t.Errorf("the table has %d items, %d before the failed calls", n, before)
	}
}

// TestInternalErrorsStayInside: a fault of the host's own (here, a table that does not exist)
// answers a generic 500 problem, and the cause goes to the log with the request id.
func TestInternalErrorsStayInside(t *testing.T) {
	t.Parallel()
	db, _ := localaws.NewTable(t)
	schemas, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	api := apigw.New(slog.New(slog.NewJSONHandler(&logs, nil)), apigw.Options{})
	getRun, err := functionOf(api, "get-run", Services{Host: host.New(host.Env{Stores: host.StoresOf(dynamo.NewTable(db, "no-such-table")), Schemas: schemas}, host.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	r := invoke(t, getRun, call{who: &engine, route: "GET /runs/{runId}", params: map[string]string{"runId": "r1"}})
	p := r.problem(t)
	if r.Status != 500 || p.Code != interrupt.CodeInternal || strings.Contains(string(r.Body), "no-such-table") || strings.Contains(string(r.Body), "ResourceNotFound") {
		t.Errorf("answer %d %s", r.Status, r.Body)
	}
	var line map[string]any
	if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
		t.Fatalf("log %q: %v", logs.String(), err)
	}
	if line["requestId"] != "test" || line["level"] != "ERROR" || !strings.Contains(fmt.Sprint(line["error"]), "ResourceNotFound") {
		t.Errorf("log line %v", line)
	}
}

// TestBodiesAreReadExactly: member names match exactly (encoding/json alone would let
// "RESUMEVALUE" fill resumeValue), messages name JSON types rather than Go's, and an integer
// written as 1.0 is the integer the published schemas accept.
func TestBodiesAreReadExactly(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	s.mustRequest(t, "r1", "n1", example(t, "approval"))
	value := `{"action":"accept","decidedAt":"2026-11-30T09:00:00Z"}`
	node := map[string]string{"runId": "r1", "nodeId": "n1"}
	refused := []struct {
		name, body, path string
		h                apigw.Handler
	}{
		{"a member in upper case beside its name", `{"resumeValue":` + value + `,"RESUMEVALUE":1}`, "/RESUMEVALUE", s.fn("resolve-by-run")},
		{"a member in upper case alone", `{"RESUMEVALUE":` + value + `}`, "/RESUMEVALUE", s.fn("resolve-by-run")},
		{"an intent in upper case", `{"intent":"resolve","INTENT":"inspect"}`, "/INTENT", s.fn("mint-token")},
		{"a token member in another case", `{"nodeId":"n2","payload":` + example(t, "custom") + `,"token":{"Intent":"resolve"}}`, "/token/Intent", s.fn("request-interrupt")},
		{"a node id of the wrong type", `{"nodeId":7,"payload":` + example(t, "custom") + `}`, "/nodeId", s.fn("request-interrupt")},
		{"a lifetime of the wrong type", `{"intent":"resolve","ttlMs":"soon"}`, "/ttlMs", s.fn("mint-token")},
		{"a fractional lifetime", `{"intent":"resolve","ttlMs":1.5}`, "/ttlMs", s.fn("mint-token")},
		{"a reason of the wrong type", `{"reason":["x"]}`, "/reason", s.fn("end-run")},
		{"an unknown member in an array's item", `{"nodeId":"n3","payload":` + example(t, "approval") + `,"escalation":{"afterMs":60000,"to":[{"kind":"group","ref":"ops","team":"x"}]}}`, "/escalation/to/0/team", s.fn("request-interrupt")},
		{"an item's member in another case", `{"nodeId":"n3","payload":` + example(t, "approval") + `,"escalation":{"afterMs":60000,"to":[{"KIND":"group","ref":"ops"}]}}`, "/escalation/to/0/KIND", s.fn("request-interrupt")},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			r := invoke(t, tt.h, call{who: &everyone, params: node, body: tt.body})
			p := r.problem(t)
			if r.Status != 400 || !hasPath(p, tt.path) {
				t.Fatalf("%d %s, want 400 naming %s", r.Status, r.Body, tt.path)
			}
			for _, leak := range []string{"Go ", "struct", "int64", "interrupt.Integer", "host.Token"} {
				if strings.Contains(string(r.Body), leak) {
					t.Errorf("the problem speaks Go (%q): %s", leak, r.Body)
				}
			}
		})
	}
	if n := len(s.commits(t, "acme", "r1")); n != 1 {
		t.Errorf("refused bodies wrote: %d commits", n)
	}
	quorum := `{"kind":"approval","key":"k","timeoutMs":3600000.0,"data":{"artifactId":"a","artifactType":"t","title":"x","actions":["accept"],"requiredApprovals":2.0}}`
	if r := s.request(t, engine, "r2", "n1", quorum); r.Status != 201 {
		t.Errorf("requiredApprovals 2.0: %d %s", r.Status, r.Body)
	}
	if r := s.mint(t, "r2", "n1", `{"intent":"resolve","ttlMs":60000.0,"principal":"bob"}`); r.Status != 201 {
		t.Errorf("ttlMs 60000.0: %d %s", r.Status, r.Body)
	}
	if r := s.resolve(t, approver, "r2", "n1", value); r.Status != 202 || !strings.Contains(string(r.Body), `"required":2`) {
		t.Errorf("a quorum of 2.0 is a quorum of 2: %d %s", r.Status, r.Body)
	}
}
