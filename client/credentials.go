package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// ClientCredentials is a BearerSource for an engine's own identity: the OAuth 2.0
// client-credentials grant (RFC 6749, 4.4) at TokenURL (Cognito's /oauth2/token, or the local
// stack's /local-issuer/token), its token kept until a minute before it expires, a new one
// fetched when the host refused the last (refresh). One fetch at a time: concurrent calls share
// it. Build it once, with WithBearerSource.
type ClientCredentials struct {
	TokenURL     string
	ClientID     string
	ClientSecret string
	// Scopes are the scopes asked for ("interrupts:write runs:read"); none asks for the
	// client's defaults.
	Scopes []string
	// HTTPClient fetches tokens; nil is http.DefaultClient.
	HTTPClient *http.Client

	mu      sync.Mutex
	token   string
	expires time.Time
}

// refreshEarly is how long before its expiry a token is fetched anew, so that none expires on
// its way to the host.
const refreshEarly = time.Minute

// Bearer answers the token held, or a new one when there is none, it is about to expire, or
// refresh says the host refused it.
func (c *ClientCredentials) Bearer(ctx context.Context, refresh bool) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token != "" && !refresh && time.Until(c.expires) > refreshEarly {
		return c.token, nil
	}
	form := url.Values{"grant_type": {"client_credentials"}}
	if len(c.Scopes) > 0 {
		form.Set("scope", strings.Join(c.Scopes, " "))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(c.ClientID), url.QueryEscape(c.ClientSecret))
	hc := c.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("client credentials: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return "", fmt.Errorf("client credentials: %w", err)
	}
	var t struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
		Error       string `json:"error"`
	}
	_ = json.Unmarshal(body, &t) // a body that is not the grant's answer is refused below
	switch {
	case resp.StatusCode != http.StatusOK:
		return "", fmt.Errorf("client credentials: %s refused the grant: %d %s", c.TokenURL, resp.StatusCode, t.Error)
	case t.AccessToken == "":
		return "", fmt.Errorf("client credentials: %s answered no access_token", c.TokenURL)
	}
	c.token, c.expires = t.AccessToken, time.Now().Add(time.Duration(t.ExpiresIn)*time.Second)
	return c.token, nil
}
