package teams

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// The Bot Framework's published identity: where its signing keys are named, and the issuer of
// the tokens it sends a bot (Microsoft's "Authenticate requests from the Bot Connector Service").
const (
	DefaultOpenIDMetadata = "https://login.botframework.com/v1/.well-known/openidconfiguration"
	Issuer                = "https://api.botframework.com"
)

// Skew is how far a token's exp and nbf may be from the host's clock: the Bot Framework's own
// advice is five minutes.
const Skew = 5 * time.Minute

// refreshEvery bounds how often an unknown key id makes the key set be read again: a flood of
// tokens naming made-up keys costs one read of Microsoft's keys a minute, not one each.
const refreshEvery = time.Minute

// Claims are what the host reads of a verified Bot Framework token.
type Claims struct {
	// Audience is the bot's Microsoft app id the token was issued for.
	Audience string
	// ServiceURL is the serviceurl claim: the Bot Connector the activity came through.
	ServiceURL string
}

// KeySet holds the Bot Framework's signing keys, each with its endorsements (the channels it
// may sign for), read from the OpenID metadata and its jwks_uri. go-oidc's key set drops the
// endorsements, which the Bot Framework's validation requires, so the host reads the keys
// itself and verifies with go-jose. Safe for concurrent use.
type KeySet struct {
	// Metadata is the OpenID metadata URL ("" is DefaultOpenIDMetadata).
	Metadata string
	// Client fetches the metadata and keys; nil is a client with a 5 second timeout.
	Client *http.Client
	// Now is the clock; nil is time.Now.
	Now func() time.Time

	mu      sync.Mutex
	keys    map[string]endorsedKey
	fetched time.Time
}

// endorsedKey is one signing key and the channels it signs for.
type endorsedKey struct {
	key          jose.JSONWebKey
	endorsements []string
}

func (ks *KeySet) now() time.Time {
	if ks.Now == nil {
		return time.Now()
	}
	return ks.Now()
}

// key answers the key of kid, reading the key set when it is not known yet (at most once a
// refreshEvery).
func (ks *KeySet) key(ctx context.Context, kid string) (endorsedKey, bool, error) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if k, ok := ks.keys[kid]; ok {
		return k, true, nil
	}
	if !ks.fetched.IsZero() && ks.now().Sub(ks.fetched) < refreshEvery {
		return endorsedKey{}, false, nil
	}
	keys, err := ks.fetch(ctx)
	if err != nil {
		return endorsedKey{}, false, err
	}
	ks.keys, ks.fetched = keys, ks.now()
	k, ok := keys[kid]
	return k, ok, nil
}

// fetch reads the metadata, then the keys it names.
func (ks *KeySet) fetch(ctx context.Context) (map[string]endorsedKey, error) {
	var meta struct {
		JWKSURI string `json:"jwks_uri"`
	}
	metadata := ks.Metadata
	if metadata == "" {
		metadata = DefaultOpenIDMetadata
	}
	if err := ks.get(ctx, metadata, &meta); err != nil {
		return nil, err
	}
	if meta.JWKSURI == "" {
		return nil, errors.New("teams: the Bot Framework's OpenID metadata names no jwks_uri")
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := ks.get(ctx, meta.JWKSURI, &set); err != nil {
		return nil, err
	}
	out := map[string]endorsedKey{}
	for _, raw := range set.Keys {
		var k endorsedKey
		var extra struct {
			Endorsements []string `json:"endorsements"`
		}
		if k.key.UnmarshalJSON(raw) != nil || json.Unmarshal(raw, &extra) != nil || k.key.KeyID == "" || !k.key.Valid() || !k.key.IsPublic() {
			continue // a key the host cannot use verifies nothing
		}
		k.endorsements = extra.Endorsements
		out[k.key.KeyID] = k
	}
	return out, nil
}

func (ks *KeySet) get(ctx context.Context, url string, v any) error {
	c := ks.Client
	if c == nil {
		c = &http.Client{Timeout: 5 * time.Second}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	res, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("teams: the Bot Framework's keys: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("teams: the Bot Framework's keys: %s answered %d", url, res.StatusCode)
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(v); err != nil {
		return fmt.Errorf("teams: the Bot Framework's keys: %w", err)
	}
	return nil
}

// errToken is every way a request can fail to carry a Bot Framework token for this host: one
// answer, whichever it was.
var errToken = errors.New("teams: not a Bot Framework token for this activity")

// Verify checks authorization ("Bearer <jwt>") as the Bot Framework's for an activity of
// channelID that came through serviceURL: signed with RS256 by a key of the set that endorses
// channelID, issued by Issuer, unexpired within Skew, its serviceurl claim serviceURL. The
// audience is answered, for the caller to hold against the bots registered; a failure is
// errToken, or the key set's own error when it could not be read.
func (ks *KeySet) Verify(ctx context.Context, authorization, channelID, serviceURL string) (Claims, error) {
	raw, ok := bearer(authorization)
	if !ok || channelID == "" || serviceURL == "" {
		return Claims{}, errToken
	}
	tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil || len(tok.Headers) != 1 || tok.Headers[0].KeyID == "" {
		return Claims{}, errToken
	}
	k, ok, err := ks.key(ctx, tok.Headers[0].KeyID)
	if err != nil {
		return Claims{}, err
	}
	if !ok || !slices.Contains(k.endorsements, channelID) {
		return Claims{}, errToken
	}
	var std jwt.Claims
	var bf struct {
		ServiceURL string `json:"serviceurl"`
	}
	if err := tok.Claims(k.key.Key, &std, &bf); err != nil {
		return Claims{}, errToken
	}
	if err := std.ValidateWithLeeway(jwt.Expected{Issuer: Issuer, Time: ks.now()}, Skew); err != nil || std.Expiry == nil || len(std.Audience) != 1 {
		return Claims{}, errToken
	}
	if bf.ServiceURL == "" || !sameServiceURL(bf.ServiceURL, serviceURL) {
		return Claims{}, errToken
	}
	return Claims{Audience: std.Audience[0], ServiceURL: bf.ServiceURL}, nil
}

// bearer is the token of an Authorization header of scheme Bearer (any case, as RFC 9110 has it).
func bearer(h string) (string, bool) {
	if len(h) < 7 || !strings.EqualFold(h[:7], "bearer ") {
		return "", false
	}
	t := h[7:]
	return t, t != ""
}

// sameServiceURL compares service URLs as the Bot Framework writes them, with or without the
// trailing slash.
func sameServiceURL(a, b string) bool {
	return strings.TrimRight(a, "/") == strings.TrimRight(b, "/")
}
