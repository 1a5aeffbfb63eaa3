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
	"net/http"
	"strings"
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
// stack's URL): the OpenID metadata and keys the host's BotFrameworkOpenIdMetadata names, and
// POST <Path>/token {appId, serviceUrl} answering {"token": ...}, a JWT signed as the Bot
// Connector signs the activities it sends a bot, for tests and local tools that click as Teams
// would.
func StandIn(base string, id *Identity) http.Handler {
	mux := http.NewServeMux()
	keys := Handler(strings.TrimSuffix(base, "/")+Path, Path, id)
	mux.Handle("GET "+Path+"/", keys)
	mux.HandleFunc("POST "+Path+"/token", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			AppID      string `json:"appId"`
			ServiceURL string `json:"serviceUrl"`
		}
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&req); err != nil || req.AppID == "" || req.ServiceURL == "" {
			http.Error(w, `want {"appId": ..., "serviceUrl": ...}`, http.StatusBadRequest)
			return
		}
		tok, err := id.Sign(Token{AppID: req.AppID, ServiceURL: req.ServiceURL, Now: time.Now()})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"token": tok})
	})
	return mux
}

// MetadataURL is the stand-in's OpenID metadata under base.
func MetadataURL(base string) string {
	return strings.TrimSuffix(base, "/") + Path + "/.well-known/openidconfiguration"
}

// ServiceURL is the serviceUrl of the stand-in's conversations under base.
func ServiceURL(base string) string { return strings.TrimSuffix(base, "/") + Path + "/" }
