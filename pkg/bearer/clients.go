package bearer

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// URLPatterns are the clients a deployment allows by the URL of their client ID metadata
// document (CIMD: MCP clients such as Claude and VS Code sign in with no registration, their
// client_id that URL), as a Cognito CIMD policy names them: a token whose client is such a URL
// is taken where one of the patterns matches it, and is refused as any foreign token where none
// does. A pattern is a URL in which * stands for any run of characters: within the scheme, host
// and port (no /, ?, # or @), or anywhere after them (no #); the scheme and host are compared
// without case. "https://vscode.dev/oauth/client-metadata.json" is one client,
// "http://127.0.0.1:*/*" any loopback one on any port. The zero value allows none.
type URLPatterns struct {
	raw      []string
	patterns []*regexp.Regexp
}

// ParseURLPatterns reads patterns (the template's McpClientMetadataUrls), refusing one that is
// not an http(s) URL with a host, so that a typo stops the function instead of allowing nothing
// (or, with a stray *, everything) unseen.
func ParseURLPatterns(patterns []string) (URLPatterns, error) {
	var out URLPatterns
	for _, p := range patterns {
		scheme, rest, ok := strings.Cut(p, "://")
		authority, path, _ := strings.Cut(rest, "/")
		scheme = strings.ToLower(scheme)
		if !ok || (scheme != "https" && scheme != "http") || authority == "" || strings.ContainsAny(p, " \t\r\n#") || strings.ContainsAny(authority, "?@") {
			return URLPatterns{}, fmt.Errorf("bearer: client URL pattern %q is not an http(s) URL with a host (* for any characters)", p)
		}
		re := "^" + scheme + "://" + glob(strings.ToLower(authority), `[^/?#@]*`)
		if strings.Contains(rest, "/") {
			re += "/" + glob(path, `[^#]*`)
		}
		out.raw = append(out.raw, p)
		out.patterns = append(out.patterns, regexp.MustCompile(re+"$"))
	}
	return out, nil
}

// glob is s as a regular expression, each * standing for any run of the characters star takes.
func glob(s, star string) string {
	parts := strings.Split(s, "*")
	for i, part := range parts {
		parts[i] = regexp.QuoteMeta(part)
	}
	return strings.Join(parts, star)
}

// Match reports whether clientID is a metadata document's URL one of the patterns allows: an
// http(s) URL with a host, no user and no fragment, matched with its scheme and host in lower
// case.
func (p URLPatterns) Match(clientID string) bool {
	if len(p.patterns) == 0 {
		return false
	}
	u, err := url.Parse(clientID)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || strings.Contains(clientID, "#") {
		return false
	}
	_, rest, _ := strings.Cut(clientID, "://")
	authority, path, hasPath := strings.Cut(rest, "/")
	candidate := strings.ToLower(u.Scheme) + "://" + strings.ToLower(authority)
	if hasPath {
		candidate += "/" + path
	}
	for _, re := range p.patterns {
		if re.MatchString(candidate) {
			return true
		}
	}
	return false
}

// String is the patterns as configured, comma-separated.
func (p URLPatterns) String() string { return strings.Join(p.raw, ",") }
