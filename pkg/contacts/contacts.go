// Package contacts is a tenant's directory of where the people, groups and roles its approvals
// name are reached: an address for mail, a Slack user or user group, a Teams user, a display
// name. An approval
// names refs (approversList, approverGroupRefs, approverRoleRefs, audience); the host sends to
// a ref only what its contact says (docs/design.md, "Contacts").
package contacts

import (
	"context"
	"encoding/base64"
	"errors"
	"net/mail"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// Kinds of ref a contact is for: the kinds an approval's refs have.
const (
	KindPrincipal = interrupt.RefPrincipal
	KindGroup     = interrupt.RefGroup
	KindRole      = interrupt.RefRole
)

// Limits of a contact.
const (
	// MaxRef is the longest ref in characters, as an approval's refs are bounded
	// (suspend-request's ref), and MaxRefBytes in bytes: a contact's key in the table is
	// <kind>#<ref>, within DynamoDB's 1024 bytes of a sort key for the longest kind
	// ("principal#"). A ref of 256 four-byte characters is longer, and is no contact's.
	MaxRef      = 256
	MaxRefBytes = 1024 - len(KindPrincipal+"#")
	// MaxName is the longest display name.
	MaxName = 200
	// MaxEmail is the longest address SMTP carries (RFC 5321's path, less its brackets).
	MaxEmail = 254
	// DefaultPage and MaxPage bound a page of GET /contacts.
	DefaultPage, MaxPage = 50, 100
)

// Contact is where one ref of a tenant is reached. A group's or a role's address is a
// distribution list, its Slack a user group.
type Contact struct {
	Kind  string `json:"kind"`
	Ref   string `json:"ref"`
	Email string `json:"email,omitempty"`
	Name  string `json:"name,omitempty"`
	Slack string `json:"slack,omitempty"`
	// Teams is a principal's Microsoft Entra object id (what Teams names from.aadObjectId): the
	// person a Teams card's click comes from.
	Teams     string    `json:"teams,omitempty"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Request is the body of PUT /contacts/{kind}/{ref}: the contact as a whole (a member left out
// is removed).
type Request struct {
	Email string `json:"email,omitempty"`
	Name  string `json:"name,omitempty"`
	Slack string `json:"slack,omitempty"`
	Teams string `json:"teams,omitempty"`
}

// ErrNotFound is what a Store answers for a contact it does not hold.
var ErrNotFound = errors.New("contacts: no such contact")

// Store keeps contacts, each tenant's apart from every other's. Implementations: dynamo.Table,
// inmem.Store, held to one behaviour by package contacts/storetest.
type Store interface {
	// PutContact creates or replaces the contact of c.Kind and c.Ref; created says which.
	PutContact(ctx context.Context, tenant string, c Contact) (created bool, err error)
	// Contact answers the contact of kind and ref, or ErrNotFound.
	Contact(ctx context.Context, tenant, kind, ref string) (Contact, error)
	// DeleteContact removes the contact of kind and ref, or answers ErrNotFound when there is
	// none.
	DeleteContact(ctx context.Context, tenant, kind, ref string) error
	// Contacts lists up to limit of the tenant's contacts ordered by kind, then by ref in byte
	// order, after the contact of kind and ref named by after (none: from the first). A tenant
	// with none answers none, and no error.
	Contacts(ctx context.Context, tenant string, after Key, limit int) ([]Contact, error)
}

// Key names one contact of a tenant; the zero Key is before every contact.
type Key struct {
	Kind, Ref string
}

// Valid reports whether k can name a contact: a kind approvals have and a ValidRef. A store
// refuses any other key (runlog.ErrInvalidKey).
func (k Key) Valid() bool {
	return (k.Kind == KindPrincipal || k.Kind == KindGroup || k.Kind == KindRole) && ValidRef(k.Ref)
}

// Directory is the contacts operations of the API, over a Store: the caller's tenant's contacts
// only. Safe for concurrent use.
type Directory struct {
	Store Store
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Page is the answer of GET /contacts: a page, and the cursor of the next one while there is
// more.
type Page struct {
	Contacts []Contact `json:"contacts"`
	Next     string    `json:"next,omitempty"`
}

// Put creates or replaces the contact of kind and ref with req; created says which.
func (d *Directory) Put(ctx context.Context, p interrupt.Principal, kind, ref string, req Request) (Contact, bool, error) {
	if err := checkKey(kind, ref); err != nil {
		return Contact{}, false, err
	}
	if fields := req.check(kind); len(fields) > 0 {
		return Contact{}, false, interrupt.Invalid("the contact is not acceptable", fields...)
	}
	now := time.Now
	if d.Now != nil {
		now = d.Now
	}
	c := Contact{Kind: kind, Ref: ref, Email: req.Email, Name: req.Name, Slack: req.Slack, Teams: req.Teams, UpdatedAt: now().UTC()}
	created, err := d.Store.PutContact(ctx, p.Tenant, c)
	return c, created, err
}

// Get answers the contact of kind and ref.
func (d *Directory) Get(ctx context.Context, p interrupt.Principal, kind, ref string) (Contact, error) {
	if err := checkKey(kind, ref); err != nil {
		return Contact{}, err
	}
	c, err := d.Store.Contact(ctx, p.Tenant, kind, ref)
	if errors.Is(err, ErrNotFound) {
		return c, notFound(kind, ref)
	}
	return c, err
}

// Delete removes the contact of kind and ref.
func (d *Directory) Delete(ctx context.Context, p interrupt.Principal, kind, ref string) error {
	if err := checkKey(kind, ref); err != nil {
		return err
	}
	err := d.Store.DeleteContact(ctx, p.Tenant, kind, ref)
	if errors.Is(err, ErrNotFound) {
		return notFound(kind, ref)
	}
	return err
}

// List answers a page of the tenant's contacts, by kind then ref, after the cursor after (a
// page's Next; empty: the first page), of at most limit (0: DefaultPage).
func (d *Directory) List(ctx context.Context, p interrupt.Principal, after string, limit int) (Page, error) {
	if limit == 0 {
		limit = DefaultPage
	}
	if limit < 1 || limit > MaxPage {
		return Page{}, interrupt.Invalid("limit is out of range", interrupt.FieldError{Path: "limit", Message: "must be from 1 to 100"})
	}
	from, err := decodeCursor(after)
	if err != nil {
		return Page{}, err
	}
	cs, err := d.Store.Contacts(ctx, p.Tenant, from, limit+1)
	if err != nil {
		return Page{}, err
	}
	page := Page{Contacts: cs}
	if len(cs) > limit {
		page.Contacts = cs[:limit]
		last := cs[limit-1]
		page.Next = encodeCursor(Key{Kind: last.Kind, Ref: last.Ref})
	}
	if page.Contacts == nil {
		page.Contacts = []Contact{}
	}
	return page, nil
}

func notFound(kind, ref string) error {
	return interrupt.Errorf(interrupt.CodeNotFound, "no contact for %s %q", kind, ref)
}

// checkKey refuses a kind or a ref no approval could name: it is answered as not found, as a
// path that names nothing is.
func checkKey(kind, ref string) error {
	if kind != KindPrincipal && kind != KindGroup && kind != KindRole {
		return interrupt.Errorf(interrupt.CodeNotFound, "no contact kind %q: principal, group or role", kind)
	}
	if !ValidRef(ref) {
		return interrupt.Errorf(interrupt.CodeNotFound, "no contact for a ref of that form (1 to %d characters and %d bytes, no control characters)", MaxRef, MaxRefBytes)
	}
	return nil
}

// ValidRef reports whether ref can have a contact: 1 to MaxRef characters of UTF-8 and at most
// MaxRefBytes bytes, none a control character.
func ValidRef(ref string) bool {
	if ref == "" || len(ref) > MaxRefBytes || !utf8.ValidString(ref) || utf8.RuneCountInString(ref) > MaxRef {
		return false
	}
	return strings.IndexFunc(ref, unicode.IsControl) < 0
}

// slackUser and slackGroup are Slack's member ids (a person's) and user-group ids (a group's or
// role's), which a message mentions.
var (
	slackUser  = regexp.MustCompile(`^[UW][A-Z0-9]{2,20}$`)
	slackGroup = regexp.MustCompile(`^S[A-Z0-9]{2,20}$`)
	// entraObject is an Entra object id as Teams sends it (aadObjectId): a GUID, lower case.
	entraObject = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
)

// check lists what is wrong with r as the contact of a ref of kind.
func (r Request) check(kind string) []interrupt.FieldError {
	var fields []interrupt.FieldError
	add := func(path, msg string) { fields = append(fields, interrupt.FieldError{Path: path, Message: msg}) }
	if r.Email == "" && r.Slack == "" && r.Teams == "" {
		add("", "needs an email, a slack id or a teams id: a contact says where its ref is reached")
	}
	if r.Email != "" {
		a, err := mail.ParseAddress(r.Email)
		if err != nil || a.Name != "" || a.Address != r.Email || len(r.Email) > MaxEmail || !strings.Contains(r.Email[strings.LastIndexByte(r.Email, '@')+1:], ".") {
			add("/email", "must be one address (name@example.com), at most 254 characters, without a display name")
		}
	}
	if r.Slack != "" {
		switch kind {
		case KindPrincipal:
			if !slackUser.MatchString(r.Slack) {
				add("/slack", "must be a Slack member id (U or W and capitals or digits, as U024BE7LH)")
			}
		default:
			if !slackGroup.MatchString(r.Slack) {
				add("/slack", "must be a Slack user group id (S and capitals or digits, as SAZ94GDB8)")
			}
		}
	}
	if r.Teams != "" {
		switch {
		case kind != KindPrincipal:
			add("/teams", "only a principal's contact names a Teams user: a card's click proves one person")
		case !entraObject.MatchString(r.Teams):
			add("/teams", "must be the person's Microsoft Entra object id, lower case (as 00000000-0000-0000-0000-000000000000)")
		}
	}
	if utf8.RuneCountInString(r.Name) > MaxName || !utf8.ValidString(r.Name) || strings.IndexFunc(r.Name, unicode.IsControl) >= 0 {
		add("/name", "must be at most 200 characters, without control characters")
	}
	return fields
}

// A cursor is the last listed contact's key, opaque to clients.
func encodeCursor(k Key) string {
	return base64.RawURLEncoding.EncodeToString([]byte(k.Kind + "/" + k.Ref))
}

func decodeCursor(s string) (Key, error) {
	if s == "" {
		return Key{}, nil
	}
	bad := interrupt.Invalid("after is not a cursor this list answered", interrupt.FieldError{Path: "after", Message: "must be a page's next"})
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Key{}, bad
	}
	kind, ref, ok := strings.Cut(string(raw), "/")
	if !ok || checkKey(kind, ref) != nil {
		return Key{}, bad
	}
	return Key{Kind: kind, Ref: ref}, nil
}
