package devjwt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The bounds of fetching a client ID metadata document (draft-ietf-oauth-client-id-metadata-
// document; MCP's preferred registration): a document is a few hundred bytes, so 5 KB (the
// draft's own suggestion) leaves room and stops a URL that streams forever; 5 s is a slow
// server's answer, not a stalled sign-in; a document is kept MetadataTTL (or less, when its
// Cache-Control says so), so a sign-in's three reads (the form, its post, the code's exchange)
// fetch it once, and a changed document is read again within minutes.
const (
	MaxMetadataBytes = 5 << 10
	MetadataTimeout  = 5 * time.Second
	MetadataTTL      = 5 * time.Minute
	// maxMetadataTTL bounds a max-age the document's server asks for.
	maxMetadataTTL = 24 * time.Hour
	// maxMetadataDocs bounds the cache: past it, expired documents are dropped, then all.
	maxMetadataDocs = 256
)

// clientMetadata is what the provider reads of a client ID metadata document.
type clientMetadata struct {
	ClientID                string   `json:"client_id"`
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	ClientSecret            *string  `json:"client_secret"`
}

// metadataDocs fetches and keeps client ID metadata documents. Only documents that passed
// every check are kept: a bad one is fetched again next time, so a fixed document is seen at
// once.
type metadataDocs struct {
	client *http.Client
	now    func() time.Time

	mu   sync.Mutex
	docs map[string]cachedMetadata
}

type cachedMetadata struct {
	doc     clientMetadata
	expires time.Time
}

func newMetadataDocs(now func() time.Time, timeout time.Duration) *metadataDocs {
	return &metadataDocs{
		// No redirect is followed: the document must be at the URL that is the client's id.
		client: &http.Client{Timeout: timeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		now:    now,
		docs:   map[string]cachedMetadata{},
	}
}

// IsMetadataURL reports whether clientID is a client ID metadata document's URL as this
// provider takes one: https, or http on a loopback host (a developer's client serving its
// document locally), with a path past "/", no fragment, no user or password, no dot segments
// (the draft's rules, so that one document has one spelling).
func IsMetadataURL(clientID string) bool {
	return metadataURLProblem(clientID) == ""
}

// metadataURLProblem says what keeps clientID from being a metadata URL, or "".
func metadataURLProblem(clientID string) string {
	u, err := url.Parse(clientID)
	switch {
	case err != nil || u.Host == "" || u.Opaque != "":
		return "is not an absolute URL"
	case u.Scheme != "https" && !(u.Scheme == "http" && loopback(u.Hostname())):
		return "must be https (or http on a loopback host)"
	case u.User != nil:
		return "must not carry a user or password"
	case u.Fragment != "" || strings.Contains(clientID, "#"):
		return "must not have a fragment"
	case u.Path == "" || u.Path == "/":
		return "must have a path"
	case slices.ContainsFunc(strings.Split(u.Path, "/"), func(s string) bool { return s == "." || s == ".." }):
		return "must not have . or .. segments"
	}
	return ""
}

// loopback reports whether host names this machine: a literal loopback address or localhost.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// errMetadata is a document that cannot be used, in words for the person or client shown it.
type errMetadata struct{ msg string }

func (e errMetadata) Error() string { return e.msg }

func metadataErrorf(format string, args ...any) error {
	return errMetadata{fmt.Sprintf(format, args...)}
}

// get returns the document at clientID, checked: from the cache while it is fresh, else
// fetched within MaxMetadataBytes and the client's timeout.
func (m *metadataDocs) get(ctx context.Context, clientID string) (clientMetadata, error) {
	if problem := metadataURLProblem(clientID); problem != "" {
		return clientMetadata{}, metadataErrorf("client_id %s", problem)
	}
	now := m.now()
	m.mu.Lock()
	c, ok := m.docs[clientID]
	m.mu.Unlock()
	if ok && now.Before(c.expires) {
		return c.doc, nil
	}
	doc, ttl, err := m.fetch(ctx, clientID)
	if err != nil {
		return clientMetadata{}, err
	}
	if ttl > 0 {
		m.mu.Lock()
		if len(m.docs) >= maxMetadataDocs {
			for k, other := range m.docs {
				if !now.Before(other.expires) {
					delete(m.docs, k)
				}
			}
			if len(m.docs) >= maxMetadataDocs {
				clear(m.docs)
			}
		}
		m.docs[clientID] = cachedMetadata{doc: doc, expires: now.Add(ttl)}
		m.mu.Unlock()
	}
	return doc, nil
}

// fetch reads and checks the document at clientID, and how long it may be kept.
func (m *metadataDocs) fetch(ctx context.Context, clientID string) (clientMetadata, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, clientID, nil)
	if err != nil {
		return clientMetadata{}, 0, metadataErrorf("client_id is not a URL that can be fetched")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := m.client.Do(req)
	if err != nil {
		var timeout interface{ Timeout() bool }
		if errors.As(err, &timeout) && timeout.Timeout() {
			return clientMetadata{}, 0, metadataErrorf("the client's metadata document at client_id did not arrive within %s", m.client.Timeout)
		}
		return clientMetadata{}, 0, metadataErrorf("the client's metadata document at client_id could not be fetched")
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return clientMetadata{}, 0, metadataErrorf("the client's metadata document at client_id answered %d, not 200 (redirects are not followed)", resp.StatusCode)
	}
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return clientMetadata{}, 0, metadataErrorf("the client's metadata document must be application/json")
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxMetadataBytes+1))
	if err != nil {
		var timeout interface{ Timeout() bool }
		if errors.As(err, &timeout) && timeout.Timeout() {
			return clientMetadata{}, 0, metadataErrorf("the client's metadata document at client_id did not arrive within %s", m.client.Timeout)
		}
		return clientMetadata{}, 0, metadataErrorf("the client's metadata document at client_id could not be read")
	}
	if len(raw) > MaxMetadataBytes {
		return clientMetadata{}, 0, metadataErrorf("the client's metadata document exceeds %d bytes", MaxMetadataBytes)
	}
	var doc clientMetadata
	if err := json.Unmarshal(raw, &doc); err != nil {
		return clientMetadata{}, 0, metadataErrorf("the client's metadata document is not a JSON object of client metadata")
	}
	if err := doc.check(clientID); err != nil {
		return clientMetadata{}, 0, err
	}
	return doc, cacheFor(resp.Header.Get("Cache-Control")), nil
}

// check is the document's own rules: it names the URL it was fetched from as its client_id,
// exactly (else any URL could claim another client's document), and is a public client's,
// whose redirect URIs are absolute.
func (d clientMetadata) check(clientID string) error {
	switch {
	case d.ClientID != clientID:
		return metadataErrorf("the client's metadata document names client_id %q, not the URL it was fetched from", d.ClientID)
	case d.ClientSecret != nil:
		return metadataErrorf("the client's metadata document must not carry a client_secret")
	case d.TokenEndpointAuthMethod != "" && d.TokenEndpointAuthMethod != "none":
		return metadataErrorf("the client's metadata document must be a public client's (token_endpoint_auth_method none)")
	case len(d.RedirectURIs) == 0:
		return metadataErrorf("the client's metadata document lists no redirect_uris")
	}
	for _, r := range d.RedirectURIs {
		u, err := url.Parse(r)
		if err != nil || !u.IsAbs() || u.Fragment != "" || (u.Scheme == "http" && !loopback(u.Hostname())) {
			return metadataErrorf("the client's metadata document lists a redirect_uri that is not an absolute URL without a fragment (http only on a loopback host): %q", r)
		}
	}
	return nil
}

// cacheFor is how long a document served with Cache-Control header may be kept: none for
// no-store or no-cache, its max-age up to maxMetadataTTL, else MetadataTTL.
func cacheFor(header string) time.Duration {
	for _, d := range strings.Split(header, ",") {
		name, value, _ := strings.Cut(strings.TrimSpace(strings.ToLower(d)), "=")
		switch name {
		case "no-store", "no-cache":
			return 0
		case "max-age":
			if n, err := strconv.Atoi(strings.Trim(value, `"`)); err == nil && n >= 0 {
				return min(time.Duration(n)*time.Second, maxMetadataTTL)
			}
		}
	}
	return MetadataTTL
}
