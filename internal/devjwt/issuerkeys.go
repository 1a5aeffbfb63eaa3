package devjwt

import (
	"context"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// IssuerKeys finds an issuer's keys as API Gateway's JWT authorizer does: it reads the issuer's
// OpenID Connect discovery document (<issuer>/.well-known/openid-configuration), then the JWKS its
// jwks_uri names, and keeps the keys; a kid it does not hold reads them again, at most once per
// refresh interval, so a rotated key is learnt and a flood of made-up kids costs nothing. The
// local gateway verifies with it, so the path every deployment depends on (keys fetched by
// issuer) runs locally too. The JWKS is parsed by go-jose (docs/design.md, "Dependencies").
type IssuerKeys struct {
	client  *http.Client
	refresh time.Duration

	mu      sync.Mutex
	issuers map[string]*issuerSet
}

type issuerSet struct {
	keys    map[string]*rsa.PublicKey
	fetched time.Time
}

// NewIssuerKeys returns an IssuerKeys reading with client.
func NewIssuerKeys(client *http.Client) *IssuerKeys {
	return &IssuerKeys{client: client, refresh: time.Minute, issuers: map[string]*issuerSet{}}
}

// Key implements KeySource.
func (k *IssuerKeys) Key(issuer, kid string) (*rsa.PublicKey, error) {
	k.mu.Lock()
	set := k.issuers[issuer]
	if set != nil {
		if key, ok := set.keys[kid]; ok {
			k.mu.Unlock()
			return key, nil
		}
		if time.Since(set.fetched) < k.refresh {
			k.mu.Unlock()
			return nil, fmt.Errorf("devjwt: %s has no key %q", issuer, kid)
		}
	}
	k.mu.Unlock()
	keys, err := k.fetch(issuer)
	k.mu.Lock()
	defer k.mu.Unlock()
	if err != nil {
		// A failed read is not retried before the interval either.
		if set == nil {
			set = &issuerSet{}
			k.issuers[issuer] = set
		}
		set.fetched = time.Now()
		return nil, err
	}
	k.issuers[issuer] = &issuerSet{keys: keys, fetched: time.Now()}
	if key, ok := keys[kid]; ok {
		return key, nil
	}
	return nil, fmt.Errorf("devjwt: %s has no key %q", issuer, kid)
}

func (k *IssuerKeys) fetch(issuer string) (map[string]*rsa.PublicKey, error) {
	var doc struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if err := k.get(strings.TrimSuffix(issuer, "/")+"/.well-known/openid-configuration", &doc); err != nil {
		return nil, err
	}
	if doc.Issuer != issuer || doc.JWKSURI == "" {
		return nil, fmt.Errorf("devjwt: the discovery document of %s names issuer %q and JWKS %q", issuer, doc.Issuer, doc.JWKSURI)
	}
	var set jose.JSONWebKeySet
	if err := k.get(doc.JWKSURI, &set); err != nil {
		return nil, err
	}
	keys := map[string]*rsa.PublicKey{}
	for _, key := range set.Keys {
		if pub, ok := key.Key.(*rsa.PublicKey); ok && key.Use != "enc" {
			keys[key.KeyID] = pub
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("devjwt: the JWKS of " + issuer + " holds no RSA signing key")
	}
	return keys, nil
}

func (k *IssuerKeys) get(url string, v any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := k.client.Do(req)
	if err != nil {
		return fmt.Errorf("devjwt: read %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("devjwt: read %s: %s", url, resp.Status)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v)
}
