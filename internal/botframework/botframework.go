// Package botframework stands in for the Bot Framework's identity where the real one cannot be
// reached (tests, the local stack): a signing key published as the Bot Framework publishes its
// own (OpenID metadata naming a JWKS whose keys carry endorsements), and tokens signed as the
// Bot Connector signs the activities it sends a bot. The host's verifier (pkg/channel/teams)
// reads it exactly as it reads Microsoft's.
package botframework

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Issuer is who the Bot Connector's tokens say issued them.
const Issuer = "https://api.botframework.com"

// Identity is one signing key and the channels it is endorsed for.
type Identity struct {
	KeyID        string
	Endorsements []string
	key          *rsa.PrivateKey
}

// New makes an identity with a fresh 2048-bit RSA key, endorsed for Teams ("msteams").
func New(kid string) (*Identity, error) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	return &Identity{KeyID: kid, Endorsements: []string{"msteams"}, key: k}, nil
}

// Token is what the Bot Connector sends a bot: a JWT for the bot's appID about an activity that
// came through serviceURL, issued at now, valid for ttl.
type Token struct {
	AppID, ServiceURL string
	Now               time.Time
	TTL               time.Duration
	// Issuer replaces Issuer when set (a test of another issuer).
	Issuer string
}

// Sign signs t with the identity's key, as the Bot Connector signs.
func (id *Identity) Sign(t Token) (string, error) {
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: id.key, KeyID: id.KeyID}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", err
	}
	iss := Issuer
	if t.Issuer != "" {
		iss = t.Issuer
	}
	ttl := t.TTL
	if ttl == 0 {
		ttl = time.Hour
	}
	std := jwt.Claims{Issuer: iss, Audience: jwt.Audience{t.AppID}, IssuedAt: jwt.NewNumericDate(t.Now),
		NotBefore: jwt.NewNumericDate(t.Now), Expiry: jwt.NewNumericDate(t.Now.Add(ttl))}
	return jwt.Signed(s).Claims(std).Claims(map[string]any{"serviceurl": t.ServiceURL}).Serialize()
}

// Metadata is the OpenID metadata the identity publishes, naming its keys at jwksURI.
func Metadata(jwksURI string) []byte {
	b, _ := json.Marshal(map[string]any{"issuer": Issuer, "jwks_uri": jwksURI, "id_token_signing_alg_values_supported": []string{"RS256"}})
	return b
}

// JWKS is the key set the identities publish, each public key with its endorsements.
func JWKS(ids ...*Identity) []byte {
	var keys []json.RawMessage
	for _, id := range ids {
		pub, _ := jose.JSONWebKey{Key: id.key.Public(), KeyID: id.KeyID, Use: "sig", Algorithm: string(jose.RS256)}.MarshalJSON()
		var m map[string]any
		_ = json.Unmarshal(pub, &m)
		m["endorsements"] = id.Endorsements
		b, _ := json.Marshal(m)
		keys = append(keys, b)
	}
	b, _ := json.Marshal(map[string]any{"keys": keys})
	return b
}

// Handler serves the metadata at <prefix>/.well-known/openidconfiguration and the keys of ids
// at <prefix>/keys; base is the public URL prefix is served at, which the metadata names.
func Handler(base, prefix string, ids ...*Identity) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+prefix+"/.well-known/openidconfiguration", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(Metadata(strings.TrimSuffix(base, "/") + "/keys"))
	})
	mux.HandleFunc("GET "+prefix+"/keys", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(JWKS(ids...))
	})
	return mux
}

// Path is where the local stack serves its stand-in for the Bot Framework.
const Path = "/local-botframework"

// StandIn serves the identity as the local stack's Bot Framework, under Path of base (the
// stack's URL): the OpenID metadata and keys the host's BotFrameworkOpenIdMetadata names;
// POST <Path>/token {appId, serviceUrl, issuedAt?} answering {"token": ...}, a JWT signed as the Bot
// Connector signs the activities it sends a bot, for tests and local tools that click as Teams
// would; and a Bot Connector (Connector) at <Path>/ as the stack's serviceUrl.
func StandIn(base string, id *Identity) http.Handler {
	mux := http.NewServeMux()
	keys := Handler(strings.TrimSuffix(base, "/")+Path, Path, id)
	mux.Handle("GET "+Path+"/.well-known/", keys)
	mux.Handle("GET "+Path+"/keys", keys)
	mux.HandleFunc("POST "+Path+"/token", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			AppID      string `json:"appId"`
			ServiceURL string `json:"serviceUrl"`
			// IssuedAt backdates the token (a test of an expired one); zero is now.
			IssuedAt time.Time `json:"issuedAt"`
		}
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&req); err != nil || req.AppID == "" || req.ServiceURL == "" {
			http.Error(w, `want {"appId": ..., "serviceUrl": ..., "issuedAt"?: ...}`, http.StatusBadRequest)
			return
		}
		if req.IssuedAt.IsZero() {
			req.IssuedAt = time.Now()
		}
		tok, err := id.Sign(Token{AppID: req.AppID, ServiceURL: req.ServiceURL, Now: req.IssuedAt})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"token": tok})
	})
	mux.Handle(Path+"/", NewConnector(Path).Handler())
	return mux
}

// Connector stands in for the Bot Connector a bot posts through and the Microsoft identity
// platform it has its token from: POST <prefix>/oauth2/token grants a client-credentials token
// to any app id (it knows no passwords, and says which app each token is of), POST and PUT
// <prefix>/v3/conversations/{id}/activities[/{activityId}] take a bot's activities with such a
// token, and GET <prefix>/v3/conversations/{id}/activities lists what a conversation holds,
// each activity as it now stands, with its id. Safe for concurrent use.
type Connector struct {
	prefix string
	mu     sync.Mutex
	tokens map[string]string // token -> app id
	convs  map[string][]Activity
	seq    int
}

// Activity is what a conversation holds: an activity's id, the app id of the bot that posted
// it, how many times it was updated, and the activity as last put.
type Activity struct {
	ID       string          `json:"id"`
	AppID    string          `json:"appId"`
	Updates  int             `json:"updates"`
	Activity json.RawMessage `json:"activity"`
}

// NewConnector makes an empty connector served under prefix.
func NewConnector(prefix string) *Connector {
	return &Connector{prefix: prefix, tokens: map[string]string{}, convs: map[string][]Activity{}}
}

// TokenURL is the connector's token endpoint under base, the URL it is served at.
func TokenURL(base string) string { return strings.TrimSuffix(base, "/") + "/oauth2/token" }

// Handler serves the connector.
func (c *Connector) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+c.prefix+"/oauth2/token", c.token)
	mux.HandleFunc("POST "+c.prefix+"/v3/conversations/{conv}/activities", c.post)
	mux.HandleFunc("PUT "+c.prefix+"/v3/conversations/{conv}/activities/{id}", c.put)
	mux.HandleFunc("GET "+c.prefix+"/v3/conversations/{conv}/activities", c.list)
	return mux
}

func (c *Connector) token(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 8192)
	if r.ParseForm() != nil || r.PostForm.Get("grant_type") != "client_credentials" || r.PostForm.Get("client_id") == "" ||
		r.PostForm.Get("client_secret") == "" || r.PostForm.Get("scope") != "https://api.botframework.com/.default" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"invalid_request"}`))
		return
	}
	tok := rand.Text()
	c.mu.Lock()
	c.tokens[tok] = r.PostForm.Get("client_id")
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600})
}

// app is the app id of the request's token; "" for none the connector granted.
func (c *Connector) app(r *http.Request) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return ""
	}
	return c.tokens[tok]
}

func (c *Connector) post(w http.ResponseWriter, r *http.Request) {
	app := c.app(r)
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 256<<10))
	switch {
	case app == "":
		http.Error(w, "no token of this connector's", http.StatusUnauthorized)
		return
	case err != nil || !json.Valid(body):
		http.Error(w, "the activity is not JSON", http.StatusBadRequest)
		return
	}
	conv := r.PathValue("conv")
	c.mu.Lock()
	c.seq++
	a := Activity{ID: fmt.Sprintf("1%012d", c.seq), AppID: app, Activity: body}
	c.convs[conv] = append(c.convs[conv], a)
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(map[string]string{"id": a.ID})
}

func (c *Connector) put(w http.ResponseWriter, r *http.Request) {
	app := c.app(r)
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 256<<10))
	switch {
	case app == "":
		http.Error(w, "no token of this connector's", http.StatusUnauthorized)
		return
	case err != nil || !json.Valid(body):
		http.Error(w, "the activity is not JSON", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	acts := c.convs[r.PathValue("conv")]
	for i := range acts {
		if acts[i].ID != r.PathValue("id") {
			continue
		}
		if acts[i].AppID != app {
			http.Error(w, "another bot's activity", http.StatusForbidden)
			return
		}
		acts[i].Activity, acts[i].Updates = body, acts[i].Updates+1
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"id": acts[i].ID})
		return
	}
	http.Error(w, "no such activity", http.StatusNotFound)
}

func (c *Connector) list(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	acts := append([]Activity{}, c.convs[r.PathValue("conv")]...)
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"activities": acts})
}

// MetadataURL is the stand-in's OpenID metadata under base.
func MetadataURL(base string) string {
	return strings.TrimSuffix(base, "/") + Path + "/.well-known/openidconfiguration"
}

// ServiceURL is the serviceUrl of the stand-in's conversations under base.
func ServiceURL(base string) string { return strings.TrimSuffix(base, "/") + Path + "/" }

// StandInTokenURL is the stand-in's token endpoint under base (the stack's
// BotFrameworkTokenUrl).
func StandInTokenURL(base string) string { return TokenURL(strings.TrimSuffix(base, "/") + Path) }
