package devjwt_test

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/internal/devjwt"
)

// mcpRedirect is the loopback redirect the test clients' documents list.
const mcpRedirect = "http://127.0.0.1:8978/callback"

// metadataServer serves a client ID metadata document at /client.json on 127.0.0.1, as serve
// writes it for the URL it is at (which the document names as its client_id), and counts the
// fetches.
type metadataServer struct {
	URL     string // the document's URL: the client's id
	fetches atomic.Int32
}

func newMetadataServer(t *testing.T, serve func(w http.ResponseWriter, r *http.Request, id string)) *metadataServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := &metadataServer{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/client.json" {
			http.NotFound(w, r)
			return
		}
		m.fetches.Add(1)
		serve(w, r, m.URL)
	}))
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	m.URL = srv.URL + "/client.json"
	return m
}

// document serves doc (with id as its client_id unless doc sets one) as JSON, with header's
// Cache-Control when not empty.
func document(doc map[string]any, cacheControl string) func(http.ResponseWriter, *http.Request, string) {
	return func(w http.ResponseWriter, _ *http.Request, id string) {
		out := map[string]any{"client_id": id, "client_name": "Test agent", "redirect_uris": []string{mcpRedirect}, "token_endpoint_auth_method": "none"}
		for k, v := range doc {
			if v == nil {
				delete(out, k)
			} else {
				out[k] = v
			}
		}
		w.Header().Set("Content-Type", "application/json")
		if cacheControl != "" {
			w.Header().Set("Cache-Control", cacheControl)
		}
		_ = json.NewEncoder(w).Encode(out)
	}
}

// metadataParams is a valid authorization request of the client whose id is clientID.
func metadataParams(clientID string) url.Values {
	return with(with(with(authParams(), "client_id", clientID), "redirect_uri", mcpRedirect), "scope", "agents:ask")
}

// metadataLogin posts the login form for params as alice of acme and returns the code.
func (p provider) metadataLogin(t *testing.T, params url.Values) string {
	t.Helper()
	w := p.do(t, "POST", "/authorize", form, with(with(params, "user", "alice"), "tenant", "acme").Encode())
	loc, err := url.Parse(w.Header().Get("Location"))
	if w.Code != http.StatusSeeOther || err != nil || !strings.HasPrefix(loc.String(), mcpRedirect+"?") {
		t.Fatalf("login: %d %q %s", w.Code, w.Header().Get("Location"), w.Body)
	}
	return loc.Query().Get("code")
}

func metadataExchange(clientID, code string) url.Values {
	return url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {mcpRedirect}, "client_id": {clientID}, "code_verifier": {verifier}}
}

// TestMetadataURLSignIn: a client whose id is the URL of its metadata document is shown by the
// name the document gives, signs alice in, and gets the agents' access token naming that URL as
// its client: agents:ask, no aud, alice of acme.
func TestMetadataURLSignIn(t *testing.T) {
	p := newProvider(t)
	m := newMetadataServer(t, document(nil, ""))
	w := p.do(t, "GET", "/authorize?"+metadataParams(m.URL).Encode(), "", "")
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "<strong>Test agent ("+m.URL+")</strong>") || !strings.Contains(w.Body.String(), "<form") {
		t.Fatalf("%d\n%s", w.Code, w.Body)
	}
	a := p.exchange(t, metadataExchange(m.URL, p.metadataLogin(t, metadataParams(m.URL))))
	if a.Status != 200 || a.TokenType != "Bearer" || a.AccessToken == "" || a.IDToken != "" {
		t.Fatalf("%+v", a)
	}
	c, err := devjwt.NewVerifier(devjwt.StaticKey{Public: &p.key.PublicKey}).Verify(a.AccessToken, devjwt.IssuerAt(gatewayURL), m.URL, p.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"client_id": m.URL, "token_use": "access", "scope": "agents:ask", "sub": "alice", "username": "alice", "tenant": "acme"}
	for k, v := range want {
		if c[k] != v {
			t.Errorf("%s = %v, want %v", k, c[k], v)
		}
	}
	if _, ok := c["aud"]; ok {
		t.Errorf("an agents' token with an aud: %v", c["aud"])
	}
	// A code of the metadata client is its own: the public client's id cannot exchange it.
	code := p.metadataLogin(t, metadataParams(m.URL))
	if a := p.exchange(t, metadataExchange(devjwt.MCPClientID, code)); a.Status != 400 || a.Error != "invalid_grant" {
		t.Errorf("another client's exchange: %+v", a)
	}
}

// TestMetadataURLRefusals: each document, URL or request the provider does not take is shown
// as what is wrong, with no form and no redirect, whether the form is fetched or posted; the
// document's fetch is bounded in size and time.
func TestMetadataURLRefusals(t *testing.T) {
	big := strings.Repeat("x", devjwt.MaxMetadataBytes)
	cases := []struct {
		name   string
		serve  func(http.ResponseWriter, *http.Request, string)
		params func(id string) url.Values
		shows  string
	}{
		{"client_id not the URL", document(map[string]any{"client_id": "https://client.example/client.json"}, ""), metadataParams, "not the URL it was fetched from"},
		{"client_id missing", document(map[string]any{"client_id": nil}, ""), metadataParams, "not the URL it was fetched from"},
		{"redirect_uri not listed", document(nil, ""), func(id string) url.Values {
			return with(metadataParams(id), "redirect_uri", "http://127.0.0.1:8979/callback")
		}, "redirect_uri is not one of the redirect_uris"},
		{"no redirect_uris", document(map[string]any{"redirect_uris": nil}, ""), metadataParams, "lists no redirect_uris"},
		{"an http redirect_uri off loopback", document(map[string]any{"redirect_uris": []string{"http://client.example/cb"}}, ""), func(id string) url.Values {
			return with(metadataParams(id), "redirect_uri", "http://client.example/cb")
		}, "http only on a loopback host"},
		{"a confidential client", document(map[string]any{"token_endpoint_auth_method": "client_secret_basic"}, ""), metadataParams, "public client"},
		{"a secret", document(map[string]any{"client_secret": "s3cret"}, ""), metadataParams, "must not carry a client_secret"},
		{"past 5 KB", document(map[string]any{"client_name": big}, ""), metadataParams, "exceeds 5120 bytes"},
		{"not found", func(w http.ResponseWriter, r *http.Request, _ string) { http.NotFound(w, r) }, metadataParams, "answered 404"},
		{"a redirect", func(w http.ResponseWriter, r *http.Request, _ string) {
			http.Redirect(w, r, "https://client.example/client.json", http.StatusFound)
		}, metadataParams, "answered 302"},
		{"not JSON's type", func(w http.ResponseWriter, _ *http.Request, id string) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte(`{"client_id":"` + id + `"}`))
		}, metadataParams, "must be application/json"},
		{"not JSON", func(w http.ResponseWriter, _ *http.Request, _ string) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`<html>`))
		}, metadataParams, "not a JSON object"},
		{"too slow", func(_ http.ResponseWriter, r *http.Request, _ string) { <-r.Context().Done() }, metadataParams, "did not arrive within"},
		{"another scope", document(nil, ""), func(id string) url.Values { return with(metadataParams(id), "scope", "agents:ask runs:read") }, "scope may name only"},
		{"no challenge", document(nil, ""), func(id string) url.Values { return with(metadataParams(id), "code_challenge", "") }, "code_challenge"},
		{"http off loopback", document(nil, ""), func(string) url.Values { return metadataParams("http://client.example/client.json") }, "must be https"},
		{"no path", document(nil, ""), func(string) url.Values { return metadataParams("https://client.example/") }, "must have a path"},
		{"a fragment", document(nil, ""), func(id string) url.Values { return metadataParams(id + "#x") }, "fragment"},
		{"a dot segment", document(nil, ""), func(id string) url.Values {
			return metadataParams(strings.Replace(id, "/client.json", "/a/../client.json", 1))
		}, "segments"},
		{"a user", document(nil, ""), func(id string) url.Values { return metadataParams(strings.Replace(id, "http://", "http://u:p@", 1)) }, "user or password"},
	}
	// One provider for every case: each serves its document on a port of its own, and no
	// refused document is kept.
	p := newProvider(t)
	devjwt.SetMetadataTimeout(p.Provider, 200*time.Millisecond)
	for _, c := range cases {
		for _, method := range []string{"GET", "POST"} {
			t.Run(c.name+" "+method, func(t *testing.T) {
				m := newMetadataServer(t, c.serve)
				params := c.params(m.URL)
				var w *httptest.ResponseRecorder
				if method == "GET" {
					w = p.do(t, "GET", "/authorize?"+params.Encode(), "", "")
				} else {
					w = p.do(t, "POST", "/authorize", form, with(with(params, "user", "alice"), "tenant", "acme").Encode())
				}
				if w.Code != http.StatusBadRequest || w.Header().Get("Location") != "" {
					t.Fatalf("%d Location %q, want 400 without a redirect", w.Code, w.Header().Get("Location"))
				}
				if body := w.Body.String(); !strings.Contains(body, c.shows) || strings.Contains(body, "<form") {
					t.Errorf("page does not say what is wrong (%s) or still offers the form:\n%s", c.shows, body)
				}
			})
		}
	}
}

// TestMetadataURLCache: a document is fetched once for a sign-in's three reads (the form, its
// post, the exchange) and kept MetadataTTL, or its max-age, or not at all under no-store; a bad
// document is not kept, so its fix is seen at once; and an exchange re-checks the document, so
// one that no longer names its URL gets no token.
func TestMetadataURLCache(t *testing.T) {
	cases := []struct {
		name         string
		cacheControl string
		fresh        time.Duration // how long after a fetch the next read fetches again (0: every read)
	}{
		{"no header", "", devjwt.MetadataTTL},
		{"max-age", "public, max-age=60", time.Minute},
		{"no-store", "no-store", 0},
		{"max-age past a day", "max-age=31536000", 24 * time.Hour},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newProvider(t)
			m := newMetadataServer(t, document(nil, c.cacheControl))
			p.do(t, "GET", "/authorize?"+metadataParams(m.URL).Encode(), "", "")
			a := p.exchange(t, metadataExchange(m.URL, p.metadataLogin(t, metadataParams(m.URL))))
			if a.Status != 200 {
				t.Fatalf("%+v", a)
			}
			want := int32(1)
			if c.fresh == 0 {
				want = 3
			}
			if got := m.fetches.Load(); got != want {
				t.Fatalf("%d fetches for one sign-in, want %d", got, want)
			}
			if c.fresh == 0 {
				return
			}
			p.clock.Advance(c.fresh - time.Second)
			p.do(t, "GET", "/authorize?"+metadataParams(m.URL).Encode(), "", "")
			if got := m.fetches.Load(); got != 1 {
				t.Errorf("%d fetches while fresh, want 1", got)
			}
			p.clock.Advance(time.Second)
			p.do(t, "GET", "/authorize?"+metadataParams(m.URL).Encode(), "", "")
			if got := m.fetches.Load(); got != 2 {
				t.Errorf("%d fetches once stale, want 2", got)
			}
		})
	}
	t.Run("a bad document is not kept", func(t *testing.T) {
		p := newProvider(t)
		var bad atomic.Bool
		bad.Store(true)
		m := newMetadataServer(t, func(w http.ResponseWriter, r *http.Request, id string) {
			if bad.Load() {
				id = "https://client.example/other.json"
			}
			document(map[string]any{"client_id": id}, "")(w, r, id)
		})
		if w := p.do(t, "GET", "/authorize?"+metadataParams(m.URL).Encode(), "", ""); w.Code != http.StatusBadRequest {
			t.Fatalf("the bad document: %d", w.Code)
		}
		bad.Store(false)
		if w := p.do(t, "GET", "/authorize?"+metadataParams(m.URL).Encode(), "", ""); w.Code != http.StatusOK {
			t.Fatalf("the fixed document: %d %s", w.Code, w.Body)
		}
	})
	t.Run("the exchange re-checks the document", func(t *testing.T) {
		p := newProvider(t)
		var bad atomic.Bool
		m := newMetadataServer(t, func(w http.ResponseWriter, r *http.Request, id string) {
			if bad.Load() {
				id = "https://client.example/other.json"
			}
			document(map[string]any{"client_id": id}, "no-store")(w, r, id)
		})
		code := p.metadataLogin(t, metadataParams(m.URL))
		bad.Store(true)
		if a := p.exchange(t, metadataExchange(m.URL, code)); a.Status != 400 || a.Error != "invalid_client" || a.AccessToken != "" {
			t.Fatalf("%+v", a)
		}
	})
}

// TestRegistrationSaysWhatToUse: the provider registers no client; one that tries is told, in
// RFC 7591's error, to use a metadata URL or the public client's id, and the metadata says both.
func TestRegistrationSaysWhatToUse(t *testing.T) {
	p := newProvider(t)
	w := p.do(t, "POST", "/register", "application/json", `{"redirect_uris":["http://127.0.0.1:8978/callback"],"client_name":"agent"}`)
	var answer struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &answer); err != nil || w.Code != http.StatusBadRequest || answer.Error != "invalid_client_metadata" ||
		!strings.Contains(answer.Description, "metadata document") || !strings.Contains(answer.Description, devjwt.MCPClientID) {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	if w := p.do(t, "GET", "/register", "", ""); w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "POST" {
		t.Errorf("GET: %d %q", w.Code, w.Header().Get("Allow"))
	}
	for _, path := range []string{"/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"} {
		var doc struct {
			CIMD     bool   `json:"client_id_metadata_document_supported"`
			Register string `json:"registration_endpoint"`
		}
		if err := json.Unmarshal(p.do(t, "GET", path, "", "").Body.Bytes(), &doc); err != nil || !doc.CIMD || doc.Register != devjwt.IssuerAt(gatewayURL)+"/register" {
			t.Errorf("%s: %+v %v", path, doc, err)
		}
	}
}
