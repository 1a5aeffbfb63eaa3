// Package mailbox is the local stack's mail reader, /local-mail: every message the SES stand-in
// (moto) accepted, newest first, each decoded (its text, and its HTML in a sandboxed frame) with
// its links whole and clickable, where moto's own record is raw MIME with quoted-printable lines
// broken mid-link. It reads moto's model data; nothing in AWS has it, and no function uses it.
package mailbox

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/http"
	"net/mail"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Path is where the mailbox is served.
const Path = "/local-mail"

// Message is one message as the mailbox shows it.
type Message struct {
	// N is its place among every message moto accepted, from 1 (oldest): its page's address.
	N       int
	To      string
	Subject string
	Date    time.Time
	Text    string
	HTML    string
}

// Read decodes one raw MIME message: its headers, and its text and HTML parts (a single-part
// message is one or the other), each decoded from quoted-printable or base64.
func Read(raw string) (Message, error) {
	m, err := mail.ReadMessage(strings.NewReader(raw))
	if err != nil {
		return Message{}, err
	}
	dec := new(mime.WordDecoder)
	out := Message{To: m.Header.Get("To")}
	if out.Subject, err = dec.DecodeHeader(m.Header.Get("Subject")); err != nil {
		out.Subject = m.Header.Get("Subject")
	}
	if to, err := dec.DecodeHeader(out.To); err == nil {
		out.To = to
	}
	out.Date, _ = m.Header.Date() // a message without one sorts by its place
	err = parts(&out, m.Header.Get("Content-Type"), m.Header.Get("Content-Transfer-Encoding"), m.Body)
	return out, err
}

// parts reads a body of content type ctype into out's Text and HTML.
func parts(out *Message, ctype, encoding string, body io.Reader) error {
	media, params, err := mime.ParseMediaType(cmp.Or(ctype, "text/plain"))
	if err != nil {
		return err
	}
	if strings.HasPrefix(media, "multipart/") {
		r := multipart.NewReader(body, params["boundary"])
		for {
			p, err := r.NextRawPart()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			if err := parts(out, p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p); err != nil {
				return err
			}
		}
	}
	switch strings.ToLower(encoding) {
	case "quoted-printable":
		body = quotedprintable.NewReader(body)
	case "base64":
		body = base64Reader(body)
	}
	b, err := io.ReadAll(io.LimitReader(body, 4<<20))
	if err != nil {
		return err
	}
	switch media {
	case "text/plain":
		out.Text = string(b)
	case "text/html":
		out.HTML = string(b)
	}
	return nil
}

func base64Reader(r io.Reader) io.Reader { return base64.NewDecoder(base64.StdEncoding, r) }

// Mailbox serves Path from moto's model data at Moto (its base URL).
type Mailbox struct {
	Moto   string
	Client *http.Client
}

// messages are every message moto accepted, newest first.
func (b *Mailbox) messages(r *http.Request) ([]Message, error) {
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, strings.TrimSuffix(b.Moto, "/")+"/moto-api/data.json", nil)
	if err != nil {
		return nil, err
	}
	hc := cmp.Or(b.Client, http.DefaultClient)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var data struct {
		SES struct {
			RawMessage []struct {
				Raw string `json:"raw_data"`
			} `json:"RawMessage"`
		} `json:"ses"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&data); err != nil {
		return nil, fmt.Errorf("mailbox: moto's data: %w", err)
	}
	var out []Message
	for i, m := range data.SES.RawMessage {
		msg, err := Read(m.Raw)
		if err != nil {
			msg = Message{Subject: "(a message that is not MIME: " + err.Error() + ")", Text: m.Raw}
		}
		msg.N = i + 1
		out = append(out, msg)
	}
	slices.Reverse(out)
	return out, nil
}

// ServeHTTP serves the list at Path and each message at Path/<n>.
func (b *Mailbox) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "GET only", http.StatusMethodNotAllowed)
		return
	}
	list, err := b.messages(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	// The message's HTML is shown in a frame with no script and no same origin; links open
	// outside it.
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-src 'self'; img-src data:")
	rest := strings.Trim(strings.TrimPrefix(r.URL.Path, Path), "/")
	if rest == "" {
		_ = page.ExecuteTemplate(w, "list", list)
		return
	}
	n, err := strconv.Atoi(rest)
	i := slices.IndexFunc(list, func(m Message) bool { return m.N == n })
	if err != nil || i < 0 {
		http.NotFound(w, r)
		return
	}
	_ = page.ExecuteTemplate(w, "message", list[i])
}

// link finds URLs in a mail's text, to show them whole and clickable.
var link = regexp.MustCompile(`https?://[^\s<>"]+`)

// linked is text with its URLs as links, everything else escaped.
func linked(text string) template.HTML {
	var b strings.Builder
	last := 0
	for _, at := range link.FindAllStringIndex(text, -1) {
		b.WriteString(template.HTMLEscapeString(text[last:at[0]]))
		u := text[at[0]:at[1]]
		fmt.Fprintf(&b, `<a href="%s" target="_blank" rel="noopener">%s</a>`, template.HTMLEscapeString(u), template.HTMLEscapeString(u))
		last = at[1]
	}
	b.WriteString(template.HTMLEscapeString(text[last:]))
	return template.HTML(b.String()) // every part of it escaped above
}

var page = template.Must(template.New("").Funcs(template.FuncMap{
	"linked": linked,
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
	// framed is the message's HTML for a sandboxed frame: links open a new tab.
	"framed": func(s string) string { return `<base target="_blank">` + s },
}).Parse(`{{define "head"}}<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>{{.}}</title><style>body{font-family:sans-serif;margin:1.5rem;max-width:60rem}table{border-collapse:collapse;width:100%}
td,th{text-align:left;padding:.3rem .6rem;border-bottom:1px solid #ddd}pre{white-space:pre-wrap;background:#f6f6f6;padding:1rem}
iframe{width:100%;height:28rem;border:1px solid #ddd}</style></head><body>{{end}}
{{define "list"}}{{template "head" "Local mail"}}<h1>Local mail</h1>
<p>Every message the local stack's SES stand-in accepted, newest first. Nothing here left this machine.</p>
{{if .}}<table><thead><tr><th>To</th><th>Subject</th><th>Sent</th></tr></thead><tbody>
{{range .}}<tr><td>{{.To}}</td><td><a href="{{printf "/local-mail/%d" .N}}">{{or .Subject "(no subject)"}}</a></td><td>{{when .Date}}</td></tr>
{{end}}</tbody></table>{{else}}<p>No mail yet: a request mails the people it asks once they have contacts with an address and the tenant an email subscription.</p>{{end}}
</body></html>{{end}}
{{define "message"}}{{template "head" .Subject}}<p><a href="/local-mail">All mail</a></p>
<h1>{{or .Subject "(no subject)"}}</h1><p>To {{.To}}{{with when .Date}} · {{.}}{{end}}</p>
{{if .Text}}<h2>Text</h2><pre>{{linked .Text}}</pre>{{end}}
{{if .HTML}}<h2>HTML</h2><iframe sandbox="allow-popups allow-popups-to-escape-sandbox" srcdoc="{{framed .HTML}}" title="the message's HTML"></iframe>{{end}}
</body></html>{{end}}`))
