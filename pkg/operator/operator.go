// Package operator is the operator's command line, ihctl, over the host's public API (never its
// table): what an on-call engineer reads and does by hand. It calls the API with the operator's
// own JWT, so the gateway and the functions check its scopes as for any caller, and it prints a
// table for people, or with -o json JSON (one object per answer, one line per event) for jq and
// scripts.
package operator

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/interrupthost/interrupthost/client"
)

// Environment variables ihctl reads: the URL unless --url says, the JWT always.
const (
	EnvURL   = "INTERRUPT_HOST_URL"
	EnvToken = "INTERRUPT_HOST_TOKEN"
)

// Usage is ihctl's help.
const Usage = `usage: ihctl [--url URL] [-o table|json] <command> [arguments]

The API's base URL comes from --url or INTERRUPT_HOST_URL (an approval link is the page the host
answers for it), the operator's JWT from INTERRUPT_HOST_TOKEN only, so that it is in no shell history or
process list. Each command needs the scopes of its route. Answers print as a table, or with -o
json as JSON: an object indented, a list one JSON line per item.

  run <runId>                      the run's snapshot (runs:read)
  cancel <runId> [--reason TEXT]   cancel the run: its pending interrupts close; prints the end
                                   the host recorded (interrupts:write and runs:read)
  complete <runId> [--reason TEXT] complete the run, likewise (interrupts:write and runs:read)
  events <runId> [--after N] [--updates] [--follow] [--every D]
                                   the run's events, a row each (with -o json, a JSON line
                                   each) (runs:read); --follow reads on until the run ends
  pending [--after RUNID] [--page N] [--run RUNID]
                                   every interrupt the tenant's runs wait on, a row each, in
                                   run id order, with its title, tally and whom it
                                   waits on (runs:read); --page sets how many each request
                                   reads, --run lists one run's
  link <runId> <nodeId> [--for PRINCIPAL] [--ttl D] [--inspect]
                                   mint a token for the interrupt at the node and print its
                                   approval page link (resolve for PRINCIPAL: tokens:delegate)
  subscriptions                    the tenant's subscriptions (subscriptions:manage)
  subscription <id>                a subscription
  deliveries <subscriptionId>      its recent delivery attempts, newest first
  resend <subscriptionId> <eventId>
                                   send an event (a delivery's eventId) to the receiver again
  notify <subscriptionId> <runId> <nodeId>
                                   send the request of the interrupt pending at the node to the
                                   receiver again: its notification, with its approval links
                                   (subscriptions:manage and runs:read)
  endpoints                        the tenant's webhook endpoints (webhooks:manage)
  endpoint show <id>               a webhook endpoint
  endpoint create <provider> [--correlation POINTER]...
                                   a webhook endpoint, its signing secrets read from stdin, one
                                   per line
  endpoint rotate <id>             replace its secrets with those read from stdin
  endpoint delete <id>             delete it and its secrets
  contacts                         the tenant's contacts, every page (contacts:manage)
  contact show <kind> <ref>        a contact (kind: principal, group or role)
  contact put <kind> <ref> [--email A] [--name N] [--slack ID]
                                   make or replace it
  contact delete <kind> <ref>      delete it
  slack show                       the tenant's Slack app (subscriptions:manage or
                                   integrations:manage)
  slack put <appId> <teamId>       make the app the tenant's: its signing secret read from
                                   stdin, and its bot token from the next line if given
                                   (integrations:manage)
  slack delete                     forget the app and its secrets (integrations:manage)
`

// ErrUsage is a command line ihctl cannot run; Usage says what it takes.
var ErrUsage = errors.New("ihctl: usage")

// IO is where a command reads secrets from and writes its answers to.
type IO struct {
	In  io.Reader
	Out io.Writer
}

// Run runs the command line args (without the program's name), with getenv for the
// environment. Follow mode polls every --every until the run ends or ctx is done.
func Run(ctx context.Context, args []string, getenv func(string) string, stdio IO) error {
	fs := flag.NewFlagSet("ihctl", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	base := fs.String("url", getenv(EnvURL), "")
	format := fs.String("o", FormatTable, "")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	switch {
	case *base == "" || fs.NArg() == 0:
		return fmt.Errorf("%w: a command and the API's URL (--url or %s) are needed", ErrUsage, EnvURL)
	case strings.TrimSpace(getenv(EnvToken)) == "":
		return fmt.Errorf("%w: the operator's JWT is needed, in %s", ErrUsage, EnvToken)
	case *format != FormatTable && *format != FormatJSON:
		return fmt.Errorf("%w: -o is table or json", ErrUsage)
	}
	o := &op{c: client.New(*base, client.WithBearer(getenv(EnvToken))), io: stdio, out: &printer{w: stdio.Out, json: *format == FormatJSON}}
	cmd, rest := fs.Arg(0), fs.Args()[1:]
	switch cmd {
	case "run":
		return show(ctx, o, cmd, rest, o.c.Snapshot)
	case "events":
		return o.events(ctx, rest)
	case "pending":
		return o.pending(ctx, rest)
	case "link":
		return o.link(ctx, rest)
	case "subscriptions":
		return list(ctx, o, cmd, rest, o.c.Subscriptions)
	case "subscription":
		return show(ctx, o, cmd, rest, o.c.Subscription)
	case "endpoints":
		return list(ctx, o, cmd, rest, o.c.Endpoints)
	case "deliveries":
		return show(ctx, o, cmd, rest, o.c.Deliveries)
	case "resend":
		return o.resend(ctx, rest)
	case "notify":
		return o.notify(ctx, rest)
	case "endpoint":
		return o.endpoint(ctx, rest)
	case "cancel", "complete":
		return o.end(ctx, cmd, rest)
	case "contacts":
		return o.contacts(ctx, rest)
	case "contact":
		return o.contact(ctx, rest)
	case "slack":
		return o.slack(ctx, rest)
	}
	return fmt.Errorf("%w: no command %q", ErrUsage, cmd)
}

type op struct {
	c   *client.Client
	io  IO
	out *printer
}

// args parses a command's flags, which may come before or after its arguments (all after a
// "--" are arguments), and wants n arguments.
func args(fs *flag.FlagSet, in []string, n int) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for len(in) > 0 {
		if err := fs.Parse(in); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrUsage, fs.Name(), err)
		}
		rest := fs.Args()
		if len(rest) < len(in) && in[len(in)-len(rest)-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		if len(rest) == 0 {
			break
		}
		pos, in = append(pos, rest[0]), rest[1:]
	}
	if len(pos) != n {
		return nil, fmt.Errorf("%w: %s takes %d argument(s), got %d", ErrUsage, fs.Name(), n, len(pos))
	}
	return pos, nil
}

func (o *op) print(v any) error { return o.out.print(v) }

// list runs a command without arguments that prints what get answers.
func list[T any](ctx context.Context, o *op, name string, in []string, get func(context.Context) (T, error)) error {
	if _, err := args(flag.NewFlagSet(name, flag.ContinueOnError), in, 0); err != nil {
		return err
	}
	v, err := get(ctx)
	if err != nil {
		return err
	}
	return o.print(v)
}

// show runs a command of one argument that prints what get answers for it.
func show[T any](ctx context.Context, o *op, name string, in []string, get func(context.Context, string) (T, error)) error {
	pos, err := args(flag.NewFlagSet(name, flag.ContinueOnError), in, 1)
	if err != nil {
		return err
	}
	v, err := get(ctx, pos[0])
	if err != nil {
		return err
	}
	return o.print(v)
}

// ended are the event types after which a run takes no more commits, endedRuns the statuses
// of a run that has ended, and retryLater the answers a follow waits out.
var (
	ended      = map[string]bool{"run.completed": true, "run.cancelled": true}
	endedRuns  = map[string]bool{"completed": true, "cancelled": true}
	retryLater = map[int]bool{http.StatusTooManyRequests: true, http.StatusServiceUnavailable: true}
)

func (o *op) events(ctx context.Context, in []string) error {
	fs := flag.NewFlagSet("events", flag.ContinueOnError)
	after := fs.Int64("after", 0, "")
	updates := fs.Bool("updates", false, "")
	follow := fs.Bool("follow", false, "")
	every := fs.Duration("every", 2*time.Second, "")
	pos, err := args(fs, in, 1)
	if err != nil {
		return err
	}
	if *every <= 0 {
		return fmt.Errorf("%w: --every must be positive", ErrUsage)
	}
	var opts []client.EventsOption
	if *updates {
		opts = append(opts, client.Updates())
	}
	cursor := *after
	// over: the snapshot said the run ended, after a read that found nothing new; one more read
	// prints what it committed in between (its end, when the cursor had not passed it).
	over := false
	for {
		page, err := o.c.Events(ctx, pos[0], cursor, opts...)
		var p *client.Problem
		switch {
		case *follow && errors.As(err, &p) && retryLater[p.Status]:
			// A follow outlasts a throttle or an outage: it reads on after the next wait.
		case err != nil:
			return err
		default:
			done := false
			if err := o.print(page.Events); err != nil {
				return err
			}
			for _, e := range page.Events {
				done = done || ended[e.Type]
			}
			moved := page.Next != cursor
			cursor = page.Next
			switch {
			case moved && !done:
				continue // more may be there already
			case !*follow || done || over:
				return nil
			}
			// Nothing new: the run may have ended since the read, or before the cursor (--after
			// past its end).
			if snap, err := o.c.Snapshot(ctx, pos[0]); err == nil && endedRuns[snap.Status] {
				over = true
				continue
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(*every):
		}
	}
}

func (o *op) pending(ctx context.Context, in []string) error {
	fs := flag.NewFlagSet("pending", flag.ContinueOnError)
	after := fs.String("after", "", "")
	size := fs.Int("page", 0, "")
	run := fs.String("run", "", "")
	if _, err := args(fs, in, 0); err != nil {
		return err
	}
	switch {
	case *size < 0:
		return fmt.Errorf("%w: --page must be positive", ErrUsage)
	case *run != "" && (*after != "" || *size != 0):
		return fmt.Errorf("%w: --run lists one run, without --after or --page", ErrUsage)
	}
	read := func(cursor string) (client.PendingPage, error) { return o.c.Pending(ctx, cursor, *size) }
	if *run != "" { // one run's, on one page
		read = func(string) (client.PendingPage, error) {
			pending, err := o.c.PendingIn(ctx, *run)
			return client.PendingPage{Interrupts: pending}, err
		}
	}
	for cursor := *after; ; {
		page, err := read(cursor)
		if err != nil {
			return err
		}
		var rows any = page.Interrupts
		if !o.out.json {
			rows = pendingRows(page.Interrupts)
		}
		if err := o.print(rows); err != nil {
			return err
		}
		if page.Next == "" {
			return nil
		}
		cursor = page.Next
	}
}

func (o *op) resend(ctx context.Context, in []string) error {
	pos, err := args(flag.NewFlagSet("resend", flag.ContinueOnError), in, 2)
	if err != nil {
		return err
	}
	a, err := o.c.Resend(ctx, pos[0], pos[1])
	if err != nil {
		return err
	}
	return o.print(a)
}

// ErrNotPending is notify finding no interrupt pending at the node: there is nothing to notify
// of (a decided interrupt's request can still be resent by its eventId).
var ErrNotPending = errors.New("no interrupt is pending at the node")

// notify finds the interrupt pending at the node, then its interrupt.requested event in the
// commit that requested it, and resends that.
func (o *op) notify(ctx context.Context, in []string) error {
	pos, err := args(flag.NewFlagSet("notify", flag.ContinueOnError), in, 3)
	if err != nil {
		return err
	}
	sub, run, node := pos[0], pos[1], pos[2]
	pending, err := o.c.PendingIn(ctx, run)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(pending, func(p client.PendingInterrupt) bool { return p.NodeID == node })
	if i < 0 {
		return fmt.Errorf("%w: run %s, node %s", ErrNotPending, run, node)
	}
	page, err := o.c.Events(ctx, run, pending[i].Seq-1, client.Limit(1))
	if err != nil {
		return err
	}
	for _, e := range page.Events {
		if e.Type == "interrupt.requested" && e.InterruptID == pending[i].InterruptID {
			a, err := o.c.Resend(ctx, sub, fmt.Sprintf("%s:%d:%d", run, e.Seq, e.Index))
			if err != nil {
				return err
			}
			return o.print(a)
		}
	}
	return fmt.Errorf("commit %d of run %s does not hold interrupt %s's request", pending[i].Seq, run, pending[i].InterruptID)
}

// Link is what ihctl link prints: the approval page's link holding the token, and when it
// stops working.
type Link struct {
	URL       string `json:"url"`
	Intent    string `json:"intent"`
	ExpiresAt string `json:"expiresAt"`
}

func (o *op) link(ctx context.Context, in []string) error {
	fs := flag.NewFlagSet("link", flag.ContinueOnError)
	principal := fs.String("for", "", "")
	ttl := fs.Duration("ttl", 0, "")
	inspect := fs.Bool("inspect", false, "")
	pos, err := args(fs, in, 2)
	if err != nil {
		return err
	}
	req := client.TokenRequest{Intent: "resolve", Principal: *principal, TTLMs: ttl.Milliseconds()}
	if *inspect {
		req.Intent = "inspect"
	}
	tok, err := o.c.Mint(ctx, pos[0], pos[1], req)
	if err != nil {
		return err
	}
	return o.print(Link{URL: tok.URL, Intent: tok.Intent, ExpiresAt: tok.ExpiresAt})
}

// multi is a flag given once per value.
type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

func (o *op) endpoint(ctx context.Context, in []string) error {
	if len(in) == 0 {
		return fmt.Errorf("%w: endpoint takes show, create, rotate or delete", ErrUsage)
	}
	fs := flag.NewFlagSet("endpoint "+in[0], flag.ContinueOnError)
	var correlation multi
	if in[0] == "create" {
		fs.Var(&correlation, "correlation", "")
	}
	pos, err := args(fs, in[1:], 1)
	if err != nil {
		return err
	}
	var e client.Endpoint
	switch in[0] {
	case "show":
		e, err = o.c.Endpoint(ctx, pos[0])
	case "create", "rotate":
		var secrets []string
		if secrets, err = o.secrets(); err != nil {
			return err
		}
		if in[0] == "create" {
			e, err = o.c.CreateEndpoint(ctx, pos[0], secrets, correlation)
		} else {
			e, err = o.c.ReplaceEndpointSecrets(ctx, pos[0], secrets)
		}
	case "delete":
		return o.c.DeleteEndpoint(ctx, pos[0])
	default:
		return fmt.Errorf("%w: no endpoint command %q", ErrUsage, in[0])
	}
	if err != nil {
		return err
	}
	return o.print(e)
}

// slack serves slack show, put and delete: the tenant's Slack app (docs/approvers.md, "Deciding
// in Slack"), its secrets read from stdin.
func (o *op) slack(ctx context.Context, in []string) error {
	if len(in) == 0 {
		return fmt.Errorf("%w: slack takes show, put or delete", ErrUsage)
	}
	n := map[string]int{"show": 0, "put": 2, "delete": 0}[in[0]]
	pos, err := args(flag.NewFlagSet("slack "+in[0], flag.ContinueOnError), in[1:], n)
	if err != nil {
		return err
	}
	var app client.SlackApp
	switch in[0] {
	case "show":
		app, err = o.c.SlackApp(ctx)
	case "put":
		secrets, serr := o.secrets()
		if serr != nil {
			return serr
		}
		if len(secrets) > 2 {
			return fmt.Errorf("%w: stdin holds the signing secret and, on the next line, the bot token: no more", ErrUsage)
		}
		req := client.SlackAppRequest{AppID: pos[0], TeamID: pos[1], SigningSecret: secrets[0]}
		if len(secrets) == 2 {
			req.BotToken = secrets[1]
		}
		app, err = o.c.PutSlackApp(ctx, req)
	case "delete":
		return o.c.DeleteSlackApp(ctx)
	default:
		return fmt.Errorf("%w: no slack command %q", ErrUsage, in[0])
	}
	if err != nil {
		return err
	}
	return o.print(app)
}

// secrets reads signing secrets from stdin, one per line, so that none is in a shell's history
// or a process list.
func (o *op) secrets() ([]string, error) {
	var out []string
	sc := bufio.NewScanner(o.io.In)
	for sc.Scan() {
		if s := strings.TrimSpace(sc.Text()); s != "" {
			out = append(out, s)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no secret on stdin (one per line)", ErrUsage)
	}
	return out, nil
}

// Ended is what cancel and complete print: the run, how it ended, by whom and why, as the host
// recorded it (a run ended before keeps its first end and reason, whatever this call sent).
type Ended struct {
	RunID  string `json:"runId"`
	Status string `json:"status"`
	By     string `json:"by,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// end cancels or completes a run (cmd), with the reason given.
func (o *op) end(ctx context.Context, cmd string, in []string) error {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	reason := fs.String("reason", "", "")
	pos, err := args(fs, in, 1)
	if err != nil {
		return err
	}
	end := o.c.Cancel
	if cmd == "complete" {
		end = o.c.Complete
	}
	if err := end(ctx, pos[0], *reason); err != nil {
		return err
	}
	recorded, err := o.recordedEnd(ctx, pos[0])
	if err != nil {
		return err
	}
	return o.print(recorded)
}

// recordedEnd is how the run ended as its log records it: its snapshot's status, and the end's
// event (the last commit's run.cancelled or run.completed) for who ended it and why.
func (o *op) recordedEnd(ctx context.Context, runID string) (Ended, error) {
	snap, err := o.c.Snapshot(ctx, runID)
	if err != nil {
		return Ended{}, err
	}
	out := Ended{RunID: runID, Status: snap.Status}
	page, err := o.c.Events(ctx, runID, max(snap.LastSeq-1, 0))
	if err != nil {
		return Ended{}, err
	}
	for _, e := range page.Events {
		if ended[e.Type] {
			var p struct {
				By     string `json:"by"`
				Reason string `json:"reason"`
			}
			_ = json.Unmarshal(e.Payload, &p) // an end without them says only its status
			out.By, out.Reason = p.By, p.Reason
		}
	}
	return out, nil
}

// contacts prints every contact of the tenant, a page at a time.
func (o *op) contacts(ctx context.Context, in []string) error {
	if _, err := args(flag.NewFlagSet("contacts", flag.ContinueOnError), in, 0); err != nil {
		return err
	}
	for after := ""; ; {
		page, err := o.c.Contacts(ctx, after, 0)
		if err != nil {
			return err
		}
		if err := o.print(page.Contacts); err != nil {
			return err
		}
		if page.Next == "" {
			return nil
		}
		after = page.Next
	}
}

// contact shows, puts or deletes one contact.
func (o *op) contact(ctx context.Context, in []string) error {
	if len(in) == 0 {
		return fmt.Errorf("%w: contact takes show, put or delete", ErrUsage)
	}
	fs := flag.NewFlagSet("contact "+in[0], flag.ContinueOnError)
	var email, name, slack *string
	if in[0] == "put" {
		email, name, slack = fs.String("email", "", ""), fs.String("name", "", ""), fs.String("slack", "", "")
	}
	pos, err := args(fs, in[1:], 2)
	if err != nil {
		return err
	}
	var c client.Contact
	switch in[0] {
	case "show":
		c, err = o.c.Contact(ctx, pos[0], pos[1])
	case "put":
		c, err = o.c.PutContact(ctx, pos[0], pos[1], *email, *name, *slack)
	case "delete":
		return o.c.DeleteContact(ctx, pos[0], pos[1])
	default:
		return fmt.Errorf("%w: no contact command %q", ErrUsage, in[0])
	}
	if err != nil {
		return err
	}
	return o.print(c)
}

// pendingRow is a pending interrupt as the table shows it, within 120 columns: the tally in
// words ("1 of 2"), the title and whom it waits on cut, the deadline to the minute. -o json
// prints the interrupt whole.
type pendingRow struct {
	Run      string `json:"run"`
	Node     string `json:"node"`
	Kind     string `json:"kind"`
	Title    string `json:"title"`
	Tally    string `json:"tally"`
	WaitsOn  string `json:"waits on"`
	Deadline string `json:"deadline"`
}

func pendingRows(list []client.PendingInterrupt) []pendingRow {
	rows := make([]pendingRow, len(list))
	for i, p := range list {
		r := pendingRow{Run: cut(p.RunID, 16), Node: cut(p.NodeID, 12), Kind: cut(p.Kind, 14), Title: cut(p.Title, 20),
			WaitsOn: cut(strings.Join(p.WaitingOn, ", "), 18), Deadline: cut(strings.Replace(p.ExpiresAt, "T", " ", 1), 16)}
		if t := p.Tally; t != nil {
			r.Tally = fmt.Sprintf("%d of %d", t.Approvals, t.Required)
			if t.Rejections > 0 {
				r.Tally += fmt.Sprintf(", %d no", t.Rejections)
			}
			r.Tally = cut(r.Tally, 12)
		}
		rows[i] = r
	}
	return rows
}

// cut is s in at most n characters, its end marked when cut.
func cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
