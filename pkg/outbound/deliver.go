package outbound

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/interrupthost/interrupthost/pkg/contacts"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/metrics"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// Reader reads the run log.
type Reader interface {
	// Read answers a run's commits after seq after, in order, at most limit (0: all); none past
	// the last, or of no run. A key that names no one run answers runlog.ErrInvalidKey.
	Read(ctx context.Context, k runlog.Key, after int64, limit int) ([]runlog.Commit, error)
	// Tail is the run's newest checkpoint (nil if none) and the commits after it: the run's
	// state at send time, so that a request decided since is mailed to no one to decide.
	Tail(ctx context.Context, k runlog.Key) (*runlog.Checkpoint, []runlog.Commit, error)
}

// SecretReader reads a subscription's signing secret (webhook.Cache over Secrets Manager).
type SecretReader interface {
	// Get answers the secrets; a subscription with none answers an error wrapping
	// interrupt.ErrUnavailable, as webhook.SecretStore's Get does.
	Get(ctx context.Context, id string) ([]string, error)
}

// Poster sends one delivery (HTTPClient).
type Poster interface {
	Post(ctx context.Context, url string, headers map[string]string, body []byte) (int, error)
}

// Retry policy (docs/engines.md, "Outbound events"): the backoff after the n-th failed attempt of an
// event is Backoff[n-1] (the last entry after that), for MaxRetryAge after its first failure;
// then the event is recorded as failed and the run's next events follow.
var Backoff = []time.Duration{
	time.Second, 5 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute,
	30 * time.Minute, time.Hour, 2 * time.Hour, 4 * time.Hour,
}

// Retention and bounds of deliveries.
const (
	MaxRetryAge = 24 * time.Hour
	// AttemptRetention is how long GET /subscriptions/{id}/deliveries shows an attempt.
	AttemptRetention = 7 * 24 * time.Hour
	// CursorRetention keeps a run's cursor this long after it last moved.
	CursorRetention = 30 * 24 * time.Hour
	// readPage is how many commits one catch-up reads at a time.
	readPage = 100
	// DefaultConcurrency bounds the runs one invocation delivers at once.
	DefaultConcurrency = 16
)

func backoff(attempts int) time.Duration {
	return Backoff[min(max(attempts, 1), len(Backoff))-1]
}

// Deliverer delivers committed events to subscriptions. Build it once per process; it is safe
// for concurrent invocations.
type Deliverer struct {
	Store   Store
	Log     Reader
	Secrets SecretReader
	Client  Poster
	Links   Links
	// Delegations say who stands in for a principal of an audience while they are away
	// (Notice.StandIns); nil: no one does.
	Delegations DelegationReader
	// Contacts say where mail reaches each ref of an audience; nil mails no one.
	Contacts ContactReader
	// Channels render the notices of the subscriptions whose format they post (Channel.Format);
	// a subscription of a format no channel posts is delivered as standard-webhooks.
	Channels []Channel
	// Mailer sends an email subscription's mail; nil: the deployment names no sender, and such a
	// delivery fails.
	Mailer Mailer
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Concurrency bounds the runs delivered at once; 0 means DefaultConcurrency.
	Concurrency int
	Logger      *slog.Logger
	// Metrics counts the events delivered and the attempts that failed, by what became of the
	// event (retrying, failed: given up on); nil counts nothing.
	Metrics *metrics.Log
}

func (d *Deliverer) now() time.Time {
	if d.Now == nil {
		return time.Now()
	}
	return d.Now()
}

func (d *Deliverer) logger() *slog.Logger {
	if d.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return d.Logger
}

// pass is one invocation's deliveries. The first attempt to a receiver in a pass is a probe:
// the pass's other deliveries to it wait for its outcome, and after a failure are not tried in
// this pass (they go to the retrier), so a dead or hanging receiver costs one timeout per
// invocation, not one per event, and holds up no other receiver.
type pass struct {
	mu     sync.Mutex
	probes map[string]*probe
	report Report
	// subs are the tenants' subscriptions as this pass read them, once per tenant.
	subs map[string]*tenantSubs
}

type tenantSubs struct {
	once sync.Once
	subs []Subscription
	err  error
}

// subscriptions reads a tenant's subscriptions once per pass: a batch holds many commits of
// few tenants.
func (p *pass) subscriptions(ctx context.Context, st Store, tenant string) ([]Subscription, error) {
	p.mu.Lock()
	if p.subs == nil {
		p.subs = map[string]*tenantSubs{}
	}
	ts, ok := p.subs[tenant]
	if !ok {
		ts = &tenantSubs{}
		p.subs[tenant] = ts
	}
	p.mu.Unlock()
	ts.once.Do(func() { ts.subs, ts.err = st.Subscriptions(ctx, tenant) })
	return ts.subs, ts.err
}

type probe struct {
	done chan struct{}
	ok   bool
}

// admit reports whether a delivery to receiver id may be tried now: it waits for the pass's
// probe of it, if one is in flight. A caller admitted with a probe must settle it.
func (p *pass) admit(ctx context.Context, id string) (ok bool, mine *probe) {
	p.mu.Lock()
	if p.probes == nil {
		p.probes = map[string]*probe{}
	}
	pr, seen := p.probes[id]
	if !seen {
		pr = &probe{done: make(chan struct{})}
		p.probes[id] = pr
		p.mu.Unlock()
		return true, pr
	}
	p.mu.Unlock()
	select {
	case <-pr.done:
		return pr.ok, nil
	case <-ctx.Done():
		return false, nil
	}
}

func (pr *probe) settle(ok bool) {
	if pr != nil {
		pr.ok = ok
		close(pr.done)
	}
}

func (p *pass) count(f func(*Report)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(&p.report)
}

// Report says what an invocation did, for its log line.
type Report struct {
	Commits   int `json:"commits"`
	Delivered int `json:"delivered"`
	Retrying  int `json:"retrying"`
	Failed    int `json:"failed"`
	// Retries is how many retry entries were due (the retrier only).
	Retries int `json:"retries,omitempty"`
}

// Commits delivers a batch of the stream's commits: the runs at once (bounded), each run's
// commits in order. A receiver's failure is not an error: its events go to the retrier. The
// error for a commit is the store's (its deliveries may be incomplete, and it is safe to
// deliver again); errs[i] belongs to batch[i].
func (d *Deliverer) Commits(ctx context.Context, batch []runlog.StreamRecord) (Report, []error) {
	errs := make([]error, len(batch))
	byRun := map[runlog.Key][]int{}
	var order []runlog.Key
	for i, c := range batch {
		if _, ok := byRun[c.Key]; !ok {
			order = append(order, c.Key)
		}
		byRun[c.Key] = append(byRun[c.Key], i)
	}
	p := &pass{}
	d.each(len(order), func(n int) {
		failed := false
		for _, i := range byRun[order[n]] {
			if failed { // a run's later commits wait for its earlier ones
				errs[i] = errors.New("outbound: an earlier commit of the run was not delivered")
				continue
			}
			errs[i] = d.commit(ctx, p, batch[i])
			failed = errs[i] != nil
		}
	})
	p.report.Commits = len(batch)
	return p.report, errs
}

// each runs f(0..n-1) with at most Concurrency at once.
func (d *Deliverer) each(n int, f func(int)) {
	limit := d.Concurrency
	if limit <= 0 {
		limit = DefaultConcurrency
	}
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			f(i)
		})
	}
	wg.Wait()
}

// commit delivers one commit's events to every subscription of its tenant that names one of
// them, the subscriptions at once.
func (d *Deliverer) commit(ctx context.Context, p *pass, c runlog.StreamRecord) error {
	subs, err := p.subscriptions(ctx, d.Store, c.Key.Tenant)
	if err != nil {
		return err
	}
	envs := c.Commit.Envelopes(c.Key.RunID)
	errs := make([]error, len(subs))
	var wg sync.WaitGroup
	for i, s := range subs {
		if !s.wantsAny(envs) {
			continue
		}
		wg.Go(func() { errs[i] = d.fromStream(ctx, p, s, c) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// fromStream moves a subscription's cursor of the run through commit c, unless c was delivered
// already or the retrier owns the cursor (an earlier event failed: c waits behind it). A
// subscription meets a run at the first commit it sees of it.
func (d *Deliverer) fromStream(ctx context.Context, p *pass, s Subscription, c runlog.StreamRecord) error {
	cur, err := d.Store.Cursor(ctx, c.Key.Tenant, s.ID, c.Key.RunID)
	if err != nil {
		return err
	}
	if c.Rewrite && cur.Version > 0 && c.Commit.Seq < cur.Next.Seq {
		// The old run's cursor: the new run starts where its commit is.
		cur = Cursor{Tenant: c.Key.Tenant, Subscription: s.ID, RunID: c.Key.RunID, Next: Position{Seq: c.Commit.Seq}, Version: cur.Version}
	}
	if cur.Version > 0 && (c.Commit.Seq < cur.Next.Seq || !cur.RetryAt.IsZero()) {
		return nil
	}
	if cur.Version == 0 && c.Redriven && s.CreatedAt.After(c.Commit.At) {
		return nil
	}
	if cur.Version == 0 {
		cur = Cursor{Tenant: c.Key.Tenant, Subscription: s.ID, RunID: c.Key.RunID, Next: Position{Seq: c.Commit.Seq}}
	}
	return d.catchUp(ctx, p, s, cur, &c.Commit)
}

// catchUp delivers the run's events from cur.Next in order: through commit upTo when the stream
// drives it (upTo itself in hand), to the end of the log when the retrier does (upTo nil). The
// first event that fails puts the cursor in the retrier's hands; an event that has failed for
// MaxRetryAge is recorded as failed and passed over.
func (d *Deliverer) catchUp(ctx context.Context, p *pass, s Subscription, cur Cursor, upTo *runlog.Commit) error {
	owned := !cur.RetryAt.IsZero()
	for {
		commits, err := d.pending(ctx, cur, upTo)
		if err != nil {
			return err
		}
		for _, c := range commits {
			failed, err := d.deliverCommit(ctx, p, s, &cur, c)
			if err != nil || failed {
				return err
			}
			cur.Next = Position{Seq: c.Seq + 1}
		}
		if len(commits) == readPage && (upTo == nil || cur.Next.Seq <= upTo.Seq) {
			continue
		}
		if len(commits) == 0 && !owned {
			return nil
		}
		released := owned
		cur.RetryAt, owned = time.Time{}, false
		if err := d.save(ctx, &cur); err != nil || !released {
			return err
		}
		// The stream passed this run's commits over while the retrier owned the cursor: read
		// once more for any committed since the log was last read.
		upTo = nil
	}
}

// pending reads the commits from cur.Next on: through upTo (in hand, or read from the log up to
// it), or a page to the end of the log when upTo is nil.
func (d *Deliverer) pending(ctx context.Context, cur Cursor, upTo *runlog.Commit) ([]runlog.Commit, error) {
	limit := readPage
	switch {
	case upTo == nil:
	case cur.Next.Seq > upTo.Seq:
		return nil, nil
	case cur.Next.Seq == upTo.Seq:
		return []runlog.Commit{*upTo}, nil
	default:
		limit = int(min(upTo.Seq-cur.Next.Seq+1, readPage))
	}
	return d.Log.Read(ctx, runlog.Key{Tenant: cur.Tenant, RunID: cur.RunID}, cur.Next.Seq-1, limit)
}

// deliverCommit delivers c's events from cur.Next that s names. failed reports that one failed
// and the cursor went to the retrier.
func (d *Deliverer) deliverCommit(ctx context.Context, p *pass, s Subscription, cur *Cursor, c runlog.Commit) (failed bool, err error) {
	for _, e := range c.Envelopes(cur.RunID) {
		pos := Position{Seq: e.Seq, Index: e.Index}
		if pos.before(cur.Next) || !s.Wants(e.Type) {
			continue
		}
		ok, err := d.attempt(ctx, p, s, cur, c, e)
		if err != nil {
			return false, err
		}
		if !ok {
			return true, nil
		}
		cur.Next = Position{Seq: e.Seq, Index: e.Index + 1}
		cur.Attempts, cur.FailingSince, cur.LastError = 0, time.Time{}, ""
	}
	return false, nil
}

// attempt sends one event. ok means the cursor may move past it: delivered, or failed for good.
// Otherwise the cursor is saved in the retrier's hands.
func (d *Deliverer) attempt(ctx context.Context, p *pass, s Subscription, cur *Cursor, c runlog.Commit, e runlog.Envelope) (ok bool, _ error) {
	now := d.now()
	a := Attempt{EventID: EventID(e), EventType: e.Type, RunID: e.RunID, Attempts: cur.Attempts + 1, At: now.UTC()}
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < Timeout+time.Second {
		return false, d.retryLater(ctx, cur, now, "not attempted: the invocation was ending")
	}
	admitted, pr := p.admit(ctx, s.ID)
	if !admitted {
		return false, d.retryLater(ctx, cur, now, "not attempted: the receiver failed earlier in this pass")
	}
	out, sendErr := d.send(ctx, s, c, e, now, sendMode{links: d.Links})
	if errors.Is(sendErr, ErrStore) {
		return false, sendErr
	}
	pr.settle(sendErr == nil)
	a.StatusCode, a.Unreached, a.Refused = out.status, out.unreached, out.refused
	if sendErr == nil {
		a.Status = StatusDelivered
		p.count(func(r *Report) { r.Delivered++ })
		return true, d.recorded(ctx, cur.Tenant, s.ID, a, now)
	}
	a.LastError = sendErr.Error()
	first := cur.FailingSince
	if first.IsZero() {
		first = now
	}
	if now.Sub(first) >= MaxRetryAge {
		a.Status = StatusFailed
		p.count(func(r *Report) { r.Failed++ })
		d.logger().Warn("delivery failed for good", "subscription", s.ID, "eventId", a.EventID, "attempts", a.Attempts, "error", a.LastError)
		return true, d.recorded(ctx, cur.Tenant, s.ID, a, now)
	}
	a.Status = StatusRetrying
	p.count(func(r *Report) { r.Retrying++ })
	if err := d.recorded(ctx, cur.Tenant, s.ID, a, now); err != nil {
		return false, err
	}
	cur.Attempts, cur.FailingSince, cur.LastError = a.Attempts, first, a.LastError
	return false, d.retryLater(ctx, cur, now.Add(backoff(a.Attempts)), a.LastError)
}

// recorded records the attempt and then counts it by its status: a delivery as
// metrics.Delivered, any other as metrics.DeliveryFailures under what became of its event
// (failure). An attempt whose record failed is made again, and counted then.
func (d *Deliverer) recorded(ctx context.Context, tenant, subscription string, a Attempt, now time.Time) error {
	if err := d.Store.RecordAttempt(ctx, tenant, subscription, a, now.Add(AttemptRetention)); err != nil {
		return err
	}
	if a.Status == StatusDelivered {
		d.Metrics.Count(metrics.Delivered)
	} else {
		d.Metrics.Count(metrics.DeliveryFailures, failure(a))
	}
	return nil
}

// failure is a failed attempt's dimension: what became of its event.
func failure(a Attempt) metrics.Dim {
	return metrics.Dim{Name: metrics.DimOutcome, Value: string(a.Status)}
}

// retryLater hands the cursor to the retrier from at: the entry first, then the cursor (an
// entry without its cursor is dropped when it comes due).
func (d *Deliverer) retryLater(ctx context.Context, cur *Cursor, at time.Time, reason string) error {
	if cur.RetryAt.Equal(at) {
		return nil
	}
	if !cur.RetryAt.IsZero() && at.Before(cur.RetryAt) {
		at = cur.RetryAt
	}
	if cur.LastError == "" {
		cur.LastError = reason
	}
	r := Retry{At: at, Tenant: cur.Tenant, Subscription: cur.Subscription, RunID: cur.RunID}
	if err := d.Store.ScheduleRetry(ctx, r); err != nil {
		return err
	}
	cur.RetryAt = at
	return d.save(ctx, cur)
}

// save writes the cursor; one another worker moved meanwhile is left to it.
func (d *Deliverer) save(ctx context.Context, cur *Cursor) error {
	err := d.Store.SaveCursor(ctx, *cur, d.now().Add(CursorRetention))
	if errors.Is(err, ErrCursorMoved) {
		return nil
	}
	if err == nil {
		cur.Version++
	}
	return err
}

// ContactReader finds where a tenant's ref is reached (contacts.Store): answering
// contacts.ErrNotFound for a ref without a contact.
type ContactReader interface {
	Contact(ctx context.Context, tenant, kind, ref string) (contacts.Contact, error)
}

// sent is what a send did: the receiver's status (an HTTP status; for mail, 202 when any went
// out, 204 when none was due), and the refs mail could not reach (no contact, or no address).
type sent struct {
	status    int
	unreached []string
	// refused are the addresses a bound of the tenant's mail kept from being mailed.
	refused []string
}

// sendMode is how a send is made: by the deliverer's own attempt (its Links), or by an
// operator's resend (Resend: resend true, the links at the base the operator's call came in
// on), which mails every address again and records no one as asked.
type sendMode struct {
	// links make the approval links of the send's notice.
	links  Links
	resend bool
}

// send renders and posts one event to the subscription's receiver, as mode says.
func (d *Deliverer) send(ctx context.Context, s Subscription, c runlog.Commit, e runlog.Envelope, now time.Time, mode sendMode) (sent, error) {
	notice, err := mode.links.For(ctx, s, c, e, now)
	if err != nil {
		return sent{}, fmt.Errorf("approval links: %w", err)
	}
	if err := d.standIns(ctx, s.Tenant, c, e, &notice); err != nil {
		return sent{}, err
	}
	if err := mode.links.standInLinks(ctx, s, c, e, &notice); err != nil {
		return sent{}, fmt.Errorf("approval links: %w", err)
	}
	if s.Format == FormatEmail {
		return d.sendMail(ctx, s, c, e, notice, mode)
	}
	if sender := d.sender(s.Format); sender != nil {
		if err := d.about(ctx, s.Tenant, c, e, &notice); err != nil {
			return sent{}, fmt.Errorf("%w: the run: %w", ErrStore, err)
		}
		status, err := sender.Send(ctx, s, c, e, notice, now)
		return sent{status: status}, err
	}
	b, err := d.render(ctx, s, c, e, notice, now)
	if err != nil {
		return sent{}, err
	}
	secrets, err := d.Secrets.Get(ctx, s.ID)
	if err != nil || len(secrets) == 0 {
		return sent{}, errors.New("the subscription's signing secret could not be read")
	}
	headers, err := signedHeaders(secrets[0], EventID(e), now, b)
	if err != nil {
		return sent{}, err
	}
	status, err := d.Client.Post(ctx, s.URL, headers, b)
	return sent{status: status}, err
}

// ErrStore marks a send that failed on the host's own store before anything was sent: it is
// no fault of the receiver, so it fails the pass (its batch is delivered again) rather than the
// attempt.
var ErrStore = errors.New("outbound: the store failed before the send")

// sender is the channel that sends the notices of format itself, if one does.
func (d *Deliverer) sender(format string) Sender {
	for _, ch := range d.Channels {
		if s, ok := ch.(Sender); ok && ch.Format() == format {
			return s
		}
	}
	return nil
}

// render is the body of a delivery: in the channel's form where a channel posts the
// subscription's format, else the standard-webhooks message. A channel's error is the host's
// own (ErrStore): nothing was sent.
func (d *Deliverer) render(ctx context.Context, s Subscription, c runlog.Commit, e runlog.Envelope, n Notice, now time.Time) ([]byte, error) {
	for _, ch := range d.Channels {
		if ch.Format() == s.Format {
			if err := d.about(ctx, s.Tenant, c, e, &n); err != nil {
				return nil, fmt.Errorf("%w: the run: %w", ErrStore, err)
			}
			b, err := ch.Render(ctx, s.Tenant, c, e, n, now)
			if err != nil {
				return nil, fmt.Errorf("%w: %s: %w", ErrStore, s.Format, err)
			}
			return b, nil
		}
	}
	return runlog.Marshal(Message{Type: e.Type, Timestamp: e.At, Data: e, Audience: n.Audience, Links: n.Links})
}

// about fills in n what a channel's sentence names the interrupt of e by: its title, and for
// a follow-up its deadline. The request's commit holds them; a later event's are read from the
// run as it stands (its newest checkpoint and the commits after it), once per such delivery.
// An interrupt the state no longer holds (archived) is told without its title.
func (d *Deliverer) about(ctx context.Context, tenant string, c runlog.Commit, e runlog.Envelope, n *Notice) error {
	if e.InterruptID == "" {
		return nil
	}
	in := runlog.RequestedIn(c, e.InterruptID)
	if in == nil && d.Log != nil {
		st, err := d.standing(ctx, tenant, e.RunID)
		if err != nil {
			return err
		}
		if st != nil {
			in = st.ByID(e.InterruptID)
		}
	}
	if in == nil {
		return nil
	}
	n.Title = titleOf(runlog.Envelope{Payload: in.Raw}, in.Display)
	if n.Deadline.IsZero() && in.StatusAt(d.now()) == interrupt.StatusPending {
		n.Deadline = in.Deadline
	}
	return nil
}

// Retries delivers the cursors due in the retry index: at most limit entries, each run from
// where its cursor stands to the end of its log.
func (d *Deliverer) Retries(ctx context.Context, limit int) (Report, error) {
	now := d.now()
	due, err := d.Store.DueRetries(ctx, now, limit)
	if err != nil {
		return Report{}, err
	}
	p := &pass{}
	errs := make([]error, len(due))
	d.each(len(due), func(i int) { errs[i] = d.retry(ctx, p, due[i], now) })
	p.report.Retries = len(due)
	return p.report, errors.Join(errs...)
}

func (d *Deliverer) retry(ctx context.Context, p *pass, r Retry, now time.Time) error {
	s, err := d.Store.Subscription(ctx, r.Tenant, r.Subscription)
	if errors.Is(err, ErrNoSubscription) {
		return d.Store.DropRetry(ctx, r)
	}
	if err != nil {
		return err
	}
	cur, err := d.Store.Cursor(ctx, r.Tenant, r.Subscription, r.RunID)
	if err != nil {
		return err
	}
	if cur.Version > 0 && !cur.RetryAt.IsZero() && !cur.RetryAt.After(now) {
		if err := d.catchUp(ctx, p, s, cur, nil); err != nil {
			return err
		}
	}
	return d.Store.DropRetry(ctx, r)
}
