// Package inmem is a run log held in memory: the same contract as package dynamo (conditional
// append, paging, size limit, conversation claims), held to it by the suite of pkg/host/storetest,
// which both run, so that the host's rules can be tested in microseconds on any machine. It keeps
// nothing across processes; deployments use package dynamo.
package inmem

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/interrupthost/interrupthost/pkg/channel/slack"
	"github.com/interrupthost/interrupthost/pkg/channel/teams"
	"github.com/interrupthost/interrupthost/pkg/contacts"
	"github.com/interrupthost/interrupthost/pkg/policy"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/webhook"
)

// MaxCommitBytes is the largest commit the log holds, by runlog.Commit.Size: it stands in for
// DynamoDB's item limit, so that a commit too large for the real store is too large here too.
const MaxCommitBytes = 400 * 1024

// Store keeps in memory everything dynamo.Table keeps, to the same contract (package
// host/storetest); safe for concurrent use.
type Store struct {
	mu      sync.Mutex
	commits map[runlog.Key][]stored
	// each run's checkpoint and archive (runlog.Checkpoint), with the expiry Retain gave them
	checkpoints map[runlog.Key]storedCheckpoint
	archives    map[runlog.Key]map[runlog.Ref]storedFound
	claims      map[[2]string]runlog.Claim
	// the webhook correlations: endpoints, correlation slots, answers recorded outside slots
	endpoints map[string]webhook.Endpoint
	slots     map[webhook.Key]*slot
	records   map[[2]string]json.RawMessage
	// the due index by minute, and the sweep's cursor
	due    map[time.Time][]runlog.Due
	cursor runlog.SweepCursor
	// waiting is each tenant's waiting index, by run id
	waiting map[string]map[string]runlog.Waiting
	// runIndex is each tenant's runs index, by run id
	runIndex map[string]map[string]runlog.RunEntry
	// policies are each tenant's tool policies, every version, by tenant and tool
	policies map[[2]string][]policy.Policy
	// delegations are each tenant's delegations as JSON (a copy each read), by tenant and
	// principal
	delegations map[[2]string][]byte
	// assigned are the deciders' inboxes, by tenant and inbox, each by place
	assigned map[[2]string]map[string]runlog.Assignment
	// contacts are each tenant's contacts (contacts.Store)
	contacts map[string]map[contacts.Key]contacts.Contact
	// slackApps are each tenant's Slack app, slackPairs the tenants that registered each app
	// and workspace pair.
	slackApps  map[string]slack.App
	slackPairs map[[2]string]map[string]bool
	// teamsBots are each tenant's Teams bot, teamsApps the tenants that registered each app id.
	teamsBots map[string]teams.Bot
	teamsApps map[string]map[string]bool
	// appends counts the commits written, for tests that assert nothing was.
	appends int
}

// stored is a commit with the expiry Retain gave it.
type stored struct {
	runlog.Commit
	expires time.Time
}

func (s stored) expired() bool { return expired(s.expires) }

type storedCheckpoint struct {
	seq     int64
	origin  string
	raw     json.RawMessage
	expires time.Time
}

type storedFound struct {
	value   json.RawMessage
	origin  string
	seq     int64
	expires time.Time
}

func expired(at time.Time) bool { return !at.IsZero() && !time.Now().Before(at) }

// New returns an empty log.
func New() *Store {
	return &Store{
		commits: map[runlog.Key][]stored{}, claims: map[[2]string]runlog.Claim{},
		checkpoints: map[runlog.Key]storedCheckpoint{}, archives: map[runlog.Key]map[runlog.Ref]storedFound{},
		endpoints: map[string]webhook.Endpoint{}, slots: map[webhook.Key]*slot{}, records: map[[2]string]json.RawMessage{},
		due: map[time.Time][]runlog.Due{}, waiting: map[string]map[string]runlog.Waiting{},
		runIndex:    map[string]map[string]runlog.RunEntry{},
		policies:    map[[2]string][]policy.Policy{},
		delegations: map[[2]string][]byte{},
		assigned:    map[[2]string]map[string]runlog.Assignment{},
	}
}

// Read returns copies of the commits after seq after, in order; limit caps their number (0: all).
// Commits past their expiry are not read.
func (l *Store) Read(_ context.Context, k runlog.Key, after int64, limit int) ([]runlog.Commit, error) {
	if !k.Valid() {
		return nil, runlog.ErrInvalidKey
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []runlog.Commit
	log := l.commits[k] // commit seq is at index seq-1
	for _, c := range log[min(max(after, 0), int64(len(log))):] {
		if c.expired() {
			continue
		}
		if limit > 0 && len(out) == limit {
			break
		}
		out = append(out, clone(c.Commit))
	}
	return out, nil
}

// Append writes c if and only if no live commit with its seq exists in the run yet, and it fits.
func (l *Store) Append(_ context.Context, k runlog.Key, c runlog.Commit) error {
	if !k.Valid() {
		return runlog.ErrInvalidKey
	}
	if size := c.Size(); size > MaxCommitBytes {
		return &runlog.TooLargeError{Size: size, Limit: MaxCommitBytes}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	log := l.commits[k]
	switch i := int(c.Seq) - 1; {
	case i < len(log) && !log[i].expired():
		return runlog.ErrSeqTaken
	case i < len(log):
		log[i] = stored{Commit: compacted(c)}
	case i == len(log):
		l.commits[k] = append(log, stored{Commit: compacted(c)})
	default:
		return fmt.Errorf("inmem: commit %d after %d", c.Seq, len(log))
	}
	l.appends++
	return nil
}

// Retain gives the run's items that have no expiry yet (commits, checkpoint, archive) the
// expiry, at most budget of them per call; more tells whether some are left.
func (l *Store) Retain(_ context.Context, k runlog.Key, expires time.Time, budget int) (more bool, err error) {
	if !k.Valid() {
		return false, runlog.ErrInvalidKey
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	give := func(at *time.Time) {
		if at.IsZero() {
			if n == budget {
				more = true
				return
			}
			*at = expires
			n++
		}
	}
	log := l.commits[k]
	for i := range log {
		give(&log[i].expires)
	}
	if cp, ok := l.checkpoints[k]; ok {
		give(&cp.expires)
		l.checkpoints[k] = cp
	}
	for r, f := range l.archives[k] {
		give(&f.expires)
		l.archives[k][r] = f
	}
	return more, nil
}

// Tail answers the run's checkpoint, if live, and copies of the commits after it.
func (l *Store) Tail(ctx context.Context, k runlog.Key) (*runlog.Checkpoint, []runlog.Commit, error) {
	if !k.Valid() {
		return nil, nil, runlog.ErrInvalidKey
	}
	l.mu.Lock()
	stored, ok := l.checkpoints[k]
	l.mu.Unlock()
	var after int64
	var cp *runlog.Checkpoint
	if ok && !expired(stored.expires) {
		cp = &runlog.Checkpoint{}
		if err := json.Unmarshal(stored.raw, cp); err != nil {
			return nil, nil, err
		}
		l.mu.Lock()
		log := l.commits[k]
		backed := cp.Seq >= 1 && cp.Seq <= int64(len(log)) && !log[cp.Seq-1].expired() && log[cp.Seq-1].ID == cp.Commit
		l.mu.Unlock()
		if backed {
			after = cp.Seq
		} else {
			cp = nil // not beside its commit: read the log whole
		}
	}
	commits, err := l.Read(ctx, k, after, 0)
	return cp, commits, err
}

// Checkpoint keeps the archive items, then cp, unless the run's checkpoint is newer. A
// checkpoint or an archive item too large for package dynamo's item is refused before anything
// is written.
func (l *Store) Checkpoint(_ context.Context, k runlog.Key, cp *runlog.Checkpoint, archive []runlog.Found) error {
	if !k.Valid() {
		return runlog.ErrInvalidKey
	}
	raw, err := runlog.Marshal(cp)
	if err != nil {
		return err
	}
	if len(raw) > MaxCommitBytes {
		return &runlog.TooLargeError{Size: len(raw), Limit: MaxCommitBytes}
	}
	for _, f := range archive {
		if size := len(f.Name) + len(f.Value) + len(f.Origin); size > MaxCommitBytes {
			return &runlog.TooLargeError{Size: size, Limit: MaxCommitBytes}
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	items := l.archives[k]
	if items == nil {
		items = map[runlog.Ref]storedFound{}
		l.archives[k] = items
	}
	for _, f := range archive {
		if old, ok := items[f.Ref]; ok && f.Seq > 0 && old.seq >= f.Seq && old.origin == f.Origin {
			continue // a value that changes: the newest stays
		}
		items[f.Ref] = storedFound{value: slices.Clone(f.Value), origin: f.Origin, seq: f.Seq}
	}
	if old, ok := l.checkpoints[k]; ok && old.seq >= cp.Seq && !expired(old.expires) && old.origin == cp.Origin {
		return nil
	}
	l.checkpoints[k] = storedCheckpoint{seq: cp.Seq, origin: cp.Origin, raw: raw}
	return nil
}

// Lookup answers the archive items refs name that the run holds.
func (l *Store) Lookup(_ context.Context, k runlog.Key, refs []runlog.Ref) ([]runlog.Found, error) {
	if !k.Valid() {
		return nil, runlog.ErrInvalidKey
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var found []runlog.Found
	for _, r := range refs {
		if f, ok := l.archives[k][r]; ok && !expired(f.expires) {
			found = append(found, runlog.Found{Ref: r, Value: slices.Clone(f.value), Origin: f.origin, Seq: f.seq})
		}
	}
	return found, nil
}

// Expires is the expiry of a run's commits, in order, for tests of the retention rule.
func (l *Store) Expires(k runlog.Key) []time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []time.Time
	for _, c := range l.commits[k] {
		out = append(out, c.expires)
	}
	return out
}

// ClaimConversation makes c.RunID the owner of c.Tenant's conversation c.ConversationID unless
// another run than c.TakeOverFrom owns it (runlog.ErrClaimed, with the owner); a claim already
// c.RunID's is kept as it is.
func (l *Store) ClaimConversation(_ context.Context, c runlog.ConversationClaim) (runlog.Claim, error) {
	if !runlog.ValidID(c.Tenant) {
		return runlog.Claim{}, runlog.ErrInvalidKey
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	key := [2]string{c.Tenant, c.ConversationID}
	owner, taken := l.claims[key]
	switch {
	case taken && owner.RunID == c.RunID:
		return owner, nil
	case taken && owner.RunID != c.TakeOverFrom:
		return owner, runlog.ErrClaimed
	}
	claim := runlog.Claim{RunID: c.RunID, At: c.At}
	l.claims[key] = claim
	return claim, nil
}

// Writes is how many commits, claims, endpoints, slots, records and due entries the log holds
// and how often the sweep's cursor moved, for tests that check a refused request wrote nothing.
func (l *Store) Writes() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.appends + len(l.claims) + len(l.endpoints) + len(l.slots) + len(l.records) + int(l.cursor.Version)
	for _, d := range l.due {
		n += len(d)
	}
	return n
}

// clone copies a commit deeply, so that no caller shares memory with what the log holds.
func clone(c runlog.Commit) runlog.Commit {
	c = c.Stored()
	for i := range c.Events {
		c.Events[i].Payload = slices.Clone(c.Events[i].Payload)
	}
	if c.Idem != nil {
		idem := *c.Idem
		idem.Response = json.RawMessage(slices.Clone(idem.Response))
		idem.Value = nil
		c.Idem = &idem
	}
	return c
}

// compacted is c as package dynamo stores it: its payloads without insignificant whitespace,
// since encoding/json compacts the raw JSON of each event it encodes.
func compacted(c runlog.Commit) runlog.Commit {
	c = clone(c)
	for i := range c.Events {
		var b bytes.Buffer
		if json.Compact(&b, c.Events[i].Payload) == nil {
			c.Events[i].Payload = b.Bytes()
		}
	}
	return c
}

// Export is everything the log holds of run k (its commits, checkpoint and archive), for a
// benchmark that builds a long run in memory and copies it into another store.
func (l *Store) Export(k runlog.Key) ([]runlog.Commit, *runlog.Checkpoint, []runlog.Found, error) {
	commits, err := l.Read(context.Background(), k, 0, 0)
	if err != nil {
		return nil, nil, nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var cp *runlog.Checkpoint
	if stored, ok := l.checkpoints[k]; ok {
		cp = &runlog.Checkpoint{}
		if err := json.Unmarshal(stored.raw, cp); err != nil {
			return nil, nil, nil, err
		}
	}
	var archive []runlog.Found
	for r, f := range l.archives[k] {
		archive = append(archive, runlog.Found{Ref: r, Value: slices.Clone(f.value), Origin: f.origin, Seq: f.seq})
	}
	return commits, cp, archive, nil
}
