package apigw_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	sdksecrets "github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/smithy-go/middleware"

	"github.com/interrupthost/interrupthost/internal/devjwt"
	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/internal/testclock"
	"github.com/interrupthost/interrupthost/internal/testkeys"
	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/apigw/routes"
	"github.com/interrupthost/interrupthost/pkg/bearer"
	"github.com/interrupthost/interrupthost/pkg/channel/slack"
	"github.com/interrupthost/interrupthost/pkg/channel/teams"
	"github.com/interrupthost/interrupthost/pkg/contacts"
	"github.com/interrupthost/interrupthost/pkg/delegation"
	"github.com/interrupthost/interrupthost/pkg/dynamo"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/inmem"
	"github.com/interrupthost/interrupthost/pkg/keyring"
	"github.com/interrupthost/interrupthost/pkg/mcp"
	"github.com/interrupthost/interrupthost/pkg/metrics"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/policy"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/schema"
	"github.com/interrupthost/interrupthost/pkg/secretsmanager"
	"github.com/interrupthost/interrupthost/pkg/token"
	"github.com/interrupthost/interrupthost/pkg/webhook"
	"github.com/interrupthost/interrupthost/schemas"
)

// stack is the API over fresh stores, with a clock tests can move: under -short the in-memory
// stores and a fixed keyring (memStack), else a fresh table of the local DynamoDB and a fresh
// keyring secret of the local Secrets Manager (dynamoStack). The in-memory stores are held to
// DynamoDB's behaviour by the store suites of packages host and outbound; the tests of what
// only DynamoDB and Secrets Manager show (a throttled table, another process, a rotated secret)
// ask for dynamoStack.
type stack struct {
	api *apigw.Gateway
	// services are what the functions' routes call, as their mains build them.
	services Services
	host     *host.Host
	subs     *outbound.Subscriptions
	log      host.Store
	clock    *testclock.Clock
	// keys are the keyring's keys by kid, base64, for tests that sign by hand.
	keys map[string]string
	// metrics holds the EMF lines the host and the API wrote.
	metrics *bytes.Buffer
	// dump renders everything the stores hold, or how often they were written: two dumps are
	// equal only when nothing was written in between.
	dump func(testing.TB) []string

	// The DynamoDB stack's own.
	db      *dynamodb.Client
	table   string
	keyring *keyring.Keyring
	// secrets and secretID let tests rotate the keyring.
	secrets  *sdksecrets.Client
	secretID string
	// secretCalls counts the Secrets Manager calls of the keyring's client.
	secretCalls *atomic.Int64
}

func newStack(t testing.TB, capabilities ...string) *stack {
	t.Helper()
	return newStackWith(t, withCapabilities(capabilities))
}

// newStackWith is newStack with the host configured by configure.
func newStackWith(t testing.TB, configure func(*host.Config)) *stack {
	t.Helper()
	if testing.Short() {
		return memStack(t, configure)
	}
	db, table := localaws.NewTable(t)
	return stackOnWith(t, db, table, configure)
}

// dynamoStack is the API over a fresh table of the local DynamoDB and a fresh keyring secret.
func dynamoStack(t testing.TB, capabilities ...string) *stack {
	t.Helper()
	db, table := localaws.NewTable(t)
	return stackOn(t, db, table, capabilities...)
}

// memStack is the API over the in-memory stores, with a fixed keyring.
func memStack(t testing.TB, configure func(*host.Config)) *stack {
	t.Helper()
	keys := map[string]string{"kA": localaws.Key(), "legacy": localaws.Key()}
	raw := map[string][]byte{}
	for kid, k := range keys {
		raw[kid], _ = base64.StdEncoding.DecodeString(k)
	}
	log, out, hooks, subs, slack, bots := inmem.New(), inmem.NewOutbound(), inmem.NewSecrets(), inmem.NewSecrets(), inmem.NewSecrets(), inmem.NewSecrets()
	s, err := buildWith(stores{log: log, contacts: log, policies: log, delegations: log, slackApps: log, teamsBots: log, outbound: out, endpointSecrets: hooks, subscriptionSecrets: subs, slackSecrets: slack, teamsSecrets: bots},
		testclock.New(time.Now().UTC()), testkeys.Static{ActiveKid: "kA", Keys: raw}, configure)
	if err != nil {
		t.Fatal(err)
	}
	s.keys = keys
	s.dump = func(testing.TB) []string {
		return []string{fmt.Sprint(log.Writes(), out.Writes(), hooks.Writes(), subs.Writes(), slack.Writes(), bots.Writes())}
	}
	return s
}

// stores are what a stack's API runs over.
type stores struct {
	log                                                host.Store
	contacts                                           contacts.Store
	policies                                           policy.Store
	delegations                                        delegation.Store
	slackApps                                          slack.Store
	teamsBots                                          teams.Store
	outbound                                           outbound.Store
	endpointSecrets, subscriptionSecrets, slackSecrets webhook.SecretStore
	teamsSecrets                                       webhook.SecretStore
}

// dynamoStores are the local DynamoDB's table and Secrets Manager, under a fresh prefix.
func dynamoStores(db *dynamodb.Client, table string) stores {
	secrets := func() webhook.SecretStore {
		return secretsmanager.NewSecrets(localaws.SecretsManager(), "test/"+strings.ToLower(rand.Text())+"/", "")
	}
	t := dynamo.NewTable(db, table)
	return stores{log: t, contacts: t, policies: t, delegations: t, slackApps: t, teamsBots: t, outbound: dynamo.NewOutbound(db, table),
		endpointSecrets: secrets(), subscriptionSecrets: secrets(), slackSecrets: secrets(), teamsSecrets: secrets()}
}

func withCapabilities(capabilities []string) func(*host.Config) {
	return func(cfg *host.Config) {
		if capabilities != nil {
			cfg.Capabilities = capabilities
		}
	}
}

// stackOn builds an API over an existing table, as a second process would.
func stackOn(t testing.TB, db *dynamodb.Client, table string, capabilities ...string) *stack {
	t.Helper()
	return stackOnWith(t, db, table, withCapabilities(capabilities))
}

// stackOnWith is stackOn with the host configured by configure.
func stackOnWith(t testing.TB, db *dynamodb.Client, table string, configure func(*host.Config)) *stack {
	t.Helper()
	keys := map[string]string{"kA": localaws.Key(), "legacy": localaws.Key()}
	calls := &atomic.Int64{}
	secrets, secretID := localaws.NewSecret(t, localaws.Keyring("kA", keys), func(o *sdksecrets.Options) {
		o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
			return st.Initialize.Add(middleware.InitializeMiddlewareFunc("count", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				calls.Add(1)
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
		})
	})
	c := testclock.New(time.Now().UTC())
	k, err := keyring.New(context.Background(), secretsmanager.NewKeyring(secrets, secretID), keyring.Options{TTL: time.Minute, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	s, err := buildOn(db, table, c, k, configure)
	if err != nil {
		t.Fatal(err)
	}
	s.keyring, s.secrets, s.secretID, s.keys, s.secretCalls = k, secrets, secretID, keys, calls
	return s
}

func build(db *dynamodb.Client, table string, c *testclock.Clock, keys token.Keys, capabilities ...string) (*stack, error) {
	return buildOn(db, table, c, keys, withCapabilities(capabilities))
}

// buildOn is the API over the table and fresh Secrets Manager prefixes, its host configured by
// configure.
func buildOn(db *dynamodb.Client, table string, c *testclock.Clock, keys token.Keys, configure func(*host.Config)) (*stack, error) {
	s, err := buildWith(dynamoStores(db, table), c, keys, configure)
	if err != nil {
		return nil, err
	}
	s.db, s.table = db, table
	s.dump = s.scan
	return s, nil
}

// buildWith is the API over st, its host configured by configure.
func buildWith(st stores, c *testclock.Clock, keys token.Keys, configure func(*host.Config)) (*stack, error) {
	schemas, err := schema.Load()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	meter := metrics.New(&buf, "test")
	cfg := host.Config{Capabilities: []string{"conversation"}, RefKinds: []string{"principal", "group", "role"}}
	configure(&cfg)
	h := host.New(host.Env{Stores: host.StoresOf(st.log), Schemas: schemas, Now: c.Now, Metrics: meter}, cfg)
	subSecrets, slackSecrets := webhook.NewCache(st.subscriptionSecrets, nil), webhook.NewCache(st.slackSecrets, nil)
	subs := &outbound.Subscriptions{
		Store: st.outbound, Secrets: subSecrets,
		Targets: outbound.Targets{Resolver: names{"hooks.example.com": "93.184.215.14", "intranet.example": "10.0.0.7"}}, Now: c.Now,
	}
	resender := &outbound.Deliverer{
		Store: st.outbound, Log: st.log, Secrets: subSecrets, Client: outbound.NewHTTPClient(false),
		Links: outbound.Links{Keys: keys, BaseURL: "https://host.example"}, Now: c.Now,
	}
	policies := &policy.Book{Store: st.policies, Checker: h, Schemas: schemas, Now: c.Now}
	services := Services{
		Host: h, Tokens: host.NewSigner(h, keys), Webhooks: host.NewWebhooks(h, webhook.NewCache(st.endpointSecrets, nil)),
		Subscriptions: subs, Resender: resender, Contacts: &contacts.Directory{Store: st.contacts, Now: c.Now},
		MCP:         mcp.New(host.NewSigner(h, keys), mcp.Options{Poll: time.Millisecond, Policies: policies}),
		Policies:    policies,
		Delegations: &delegation.Book{Store: st.delegations, Events: h, Now: c.Now},
		Bearer:      mustVerifier(),
		Slack:       &slack.Integrations{Store: st.slackApps, Secrets: slackSecrets, Now: c.Now},
		Clicks: &slack.Interactions{
			Host: h, Apps: st.slackApps, Secrets: slackSecrets, Keys: keys, Contacts: st.contacts, Delegations: st.delegations,
			Poster: outbound.NewHTTPClient(true), AllowPrivate: true,
		},
		Teams: &teams.Integrations{Store: st.teamsBots, Secrets: webhook.NewCache(st.teamsSecrets, nil), Now: c.Now},
		TeamsMessages: &teams.Messages{
			Host: h, Bots: st.teamsBots, Verifier: &teams.KeySet{Metadata: testBotFramework().metadata, Now: c.Now}, Keys: keys, Contacts: st.contacts, Delegations: st.delegations,
		},
	}
	api := apigw.New(slog.New(slog.NewJSONHandler(io.Discard, nil)), apigw.Options{Discovery: host.DiscoveryOf(cfg), Metrics: meter, Issuer: testIssuer,
		AgentsClient: devjwt.MCPClientID, AgentsClientURLs: testClientURLs()})
	return &stack{api: api, services: services, host: h, subs: subs, log: st.log, clock: c, metrics: &buf}, nil
}

// points are the metrics written since the stack was built.
func (s *stack) points(t testing.TB) []metrics.Point {
	t.Helper()
	ps, err := metrics.Read(bytes.NewReader(s.metrics.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// fn is the handler of function, as its main builds it. An event without a route key gets the
// function's first route (its only one, but for GET beside HEAD): tests of one route need not
// name it.
func (s *stack) fn(function string) apigw.Handler {
	h, err := functionOf(s.api, function, s.services)
	if err != nil {
		panic(err)
	}
	var first string
	for _, o := range routes.Operations() {
		if o.Function == function {
			first = o.Route
			break
		}
	}
	return func(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		if req.RouteKey == "" {
			req.RouteKey, req.RequestContext.RouteKey = first, first
			req.RequestContext.HTTP.Method, _, _ = strings.Cut(first, " ")
		}
		return h(ctx, req)
	}
}

// testIssuer is the issuer of the JWTs the test API takes.
const testIssuer = "https://idp.example.com/pool-1"

// caller is who calls: the claims the gateway's JWT authorizer would pass on.
type caller struct {
	sub, tenant string
	scopes      []string
}

var (
	engine   = caller{"engine", "acme", []string{apigw.ScopeInterruptsWrite, apigw.ScopeRunsRead}}
	approver = caller{"alice", "acme", []string{apigw.ScopeApprovalsRespond, apigw.ScopeRunsRead}}
	intruder = caller{"mallory", "evilcorp", []string{apigw.ScopeInterruptsWrite, apigw.ScopeApprovalsRespond, apigw.ScopeRunsRead}}
	delegate = caller{"mailer", "acme", []string{apigw.ScopeTokensDelegate}}
)

func (c caller) named(sub string) caller { c.sub = sub; return c }

type call struct {
	who    *caller // nil: no authorizer context at all
	route  string
	params map[string]string
	query  map[string]string
	body   string
	ctype  string // "-" sends none
	// body64 sends the body base64-encoded, as API Gateway does for binary media.
	body64  bool
	headers map[string]string
	// cookies are the request's, as "name=value"; rawPath is the path the browser asked for.
	cookies []string
	rawPath string
	// claims adds to or replaces the JWT claims of who.
	claims map[string]any
}

// authorize gives req what API Gateway's JWT authorizer gives a function: the bearer token in
// the Authorization header, and its claims flattened to strings in the request context, an
// array as "[a b]". The token is signed by the tests' local issuer (bearerIssuer), for its
// audience, valid for an hour and granting scopes, as the MCP endpoint verifies it itself;
// claims may replace any of those.
func authorize(req *events.APIGatewayV2HTTPRequest, claims map[string]any, scopes []string) {
	signed := devjwt.Claims{"iss": bearerIssuer(), "aud": devjwt.Audience, "exp": time.Now().Add(time.Hour).Unix(), "scope": strings.Join(scopes, " ")}
	maps.Copy(signed, claims)
	token, err := devjwt.Sign(issuerKey(), signed)
	if err != nil {
		panic(err)
	}
	req.Headers["authorization"] = "Bearer " + token
	flat := map[string]string{}
	for k, v := range claims {
		switch v := v.(type) {
		case string:
			flat[k] = v
		case []string:
			flat[k] = "[" + strings.Join(v, " ") + "]"
		default:
			flat[k] = fmt.Sprint(v)
		}
	}
	req.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
		JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: flat, Scopes: scopes},
	}
}

// bearerIssuer is the tests' local identity provider (issuerKey's, serving its JWKS), whose
// issuer the tokens authorize signs name: started once, for the test binary.
var bearerIssuer = sync.OnceValue(func() string {
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	srv.Config.Handler = devjwt.NewProvider(issuerKey(), base, nil)
	srv.Start()
	return devjwt.IssuerAt(base)
})

type response struct {
	Status  int
	Headers map[string]string
	Body    []byte
	Cookies []string
}

func (r response) problem(t testing.TB) apigw.Problem {
	t.Helper()
	var p apigw.Problem
	if err := json.Unmarshal(r.Body, &p); err != nil {
		t.Fatalf("problem body %s: %v", r.Body, err)
	}
	if r.Headers["Content-Type"] != "application/problem+json" {
		t.Errorf("problem content type %q", r.Headers["Content-Type"])
	}
	return p
}

func (r response) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("body %s: %v", r.Body, err)
	}
}

// testDomain is the domain API Gateway's request context names: with no PublicBaseURL
// configured, links and the sign-in's callback are under it.
const testDomain = "abc123.execute-api.eu-west-1.amazonaws.com"

func invoke(t testing.TB, h apigw.Handler, c call) response {
	t.Helper()
	r, err := invokeErr(h, c)
	if err != nil {
		t.Fatalf("handler error: %v", err)
	}
	return r
}

func invokeErr(h apigw.Handler, c call) (response, error) {
	req := events.APIGatewayV2HTTPRequest{
		PathParameters:        c.params,
		QueryStringParameters: c.query,
		Headers:               map[string]string{},
		Body:                  c.body,
		RouteKey:              c.route,
		Cookies:               c.cookies,
		RawPath:               c.rawPath,
		RequestContext:        events.APIGatewayV2HTTPRequestContext{RequestID: "test", RouteKey: c.route, DomainName: testDomain, Stage: "$default"},
	}
	req.RequestContext.HTTP.Method, _, _ = strings.Cut(c.route, " ")
	if c.body != "" {
		req.Headers["content-type"] = "application/json"
	}
	if c.ctype != "" {
		req.Headers["content-type"] = c.ctype
	}
	if c.ctype == "-" {
		delete(req.Headers, "content-type")
	}
	if c.body64 {
		req.IsBase64Encoded = true
	}
	maps.Copy(req.Headers, c.headers)
	if c.who != nil {
		claims := map[string]any{"sub": c.who.sub, "tenant": c.who.tenant}
		maps.Copy(claims, c.claims)
		authorize(&req, claims, c.who.scopes)
	}
	resp, err := h(context.Background(), req)
	return response{resp.StatusCode, resp.Headers, []byte(resp.Body), resp.Cookies}, err
}

func example(t testing.TB, kind string) string {
	t.Helper()
	raw, err := fs.ReadFile(schemas.Examples, "examples/"+kind+".json")
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// reindex stands in for the stream's consumer (read-models): who's tenant's runs are
// reindexed.
func (s *stack) reindex(t testing.TB, who caller, runs ...string) {
	t.Helper()
	for _, run := range runs {
		if err := s.host.Reindex(context.Background(), runlog.Key{Tenant: who.tenant, RunID: run}); err != nil {
			t.Fatal(err)
		}
	}
}

func (s *stack) request(t testing.TB, who caller, run, node, payload string) response {
	t.Helper()
	return invoke(t, s.fn("request-interrupt"), requestCall(who, run, node, payload))
}

func requestCall(who caller, run, node, payload string) call {
	return call{who: &who, params: map[string]string{"runId": run}, body: fmt.Sprintf(`{"nodeId":%q,"payload":%s}`, node, payload)}
}

func (s *stack) resolve(t testing.TB, who caller, run, node, value string) response {
	t.Helper()
	return invoke(t, s.fn("resolve-by-run"), call{
		who: &who, params: map[string]string{"runId": run, "nodeId": node}, body: `{"resumeValue":` + value + `}`,
	})
}

func (s *stack) snapshot(t testing.TB, who caller, run string) (runlog.Snapshot, response) {
	t.Helper()
	r := invoke(t, s.fn("get-run"), call{who: &who, params: map[string]string{"runId": run}})
	var snap runlog.Snapshot
	if r.Status == 200 {
		r.decode(t, &snap)
	}
	return snap, r
}

// commits reads the run's log straight from the table.
func (s *stack) commits(t testing.TB, tenant, run string) []runlog.Commit {
	t.Helper()
	cs, err := s.log.Read(context.Background(), runlog.Key{Tenant: tenant, RunID: run}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// eventTypes lists the types of every event in the run's log, in order, as readers see them.
func (s *stack) eventTypes(t testing.TB, tenant, run string) []string {
	t.Helper()
	var out []string
	for _, c := range s.commits(t, tenant, run) {
		for _, e := range c.Envelopes(run) {
			out = append(out, e.Type)
		}
	}
	return out
}

// items is what the stores hold, rendered: equal before and after only when nothing was written.
func (s *stack) items(t testing.TB) string {
	t.Helper()
	return strings.Join(s.dump(t), "\n")
}

func (s *stack) mustRequest(t testing.TB, run, node, payload string) host.InterruptView {
	t.Helper()
	r := s.request(t, engine, run, node, payload)
	if r.Status != 201 {
		t.Fatalf("request: %d %s", r.Status, r.Body)
	}
	var v host.InterruptView
	r.decode(t, &v)
	return v
}

// opened opens conversation conv in run (its conversation.start requested and resolved), as an
// exchange or a close needs, and answers the commits that took.
func (s *stack) opened(t testing.TB, run, conv string) int {
	t.Helper()
	s.mustRequest(t, run, "open", `{"kind":"conversation.start","key":"open-`+conv+`","data":{"conversationId":"`+conv+`"}}`)
	if r := s.resolve(t, approver, run, "open", `{}`); r.Status != 200 {
		t.Fatalf("open %s: %d %s", conv, r.Status, r.Body)
	}
	return 2
}

// needsOpen reports whether a kind needs its conversation open.
func needsOpen(kind string) bool {
	return kind == "conversation.exchange" || kind == "conversation.close"
}

func compact(t testing.TB, s string) string {
	t.Helper()
	var b strings.Builder
	dec := json.NewDecoder(strings.NewReader(s))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	b.Write(out)
	return b.String()
}

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(helperProcess())
	}
	os.Exit(m.Run())
}

// mustVerifier verifies the tokens authorize signs, as the MCP function's verifier does the
// identity provider's, and takes the clients testClientURLs allow.
func mustVerifier() *bearer.Verifier {
	v, err := bearer.New(bearerIssuer(), []string{devjwt.Audience, devjwt.MCPClientID}, nil, nil)
	if err != nil {
		panic(err)
	}
	return v.AllowClients(testClientURLs())
}

// testClientURLs are the metadata URLs of the MCP clients the tests' deployment allows, as the
// template's McpClientMetadataUrls: one host's, and any loopback one (the local stack's).
func testClientURLs() bearer.URLPatterns {
	p, err := bearer.ParseURLPatterns([]string{"https://agents.example.com/*", "http://127.0.0.1:*/*"})
	if err != nil {
		panic(err)
	}
	return p
}
