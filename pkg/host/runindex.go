package host

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// RunIndex is each tenant's index of all its runs, newest activity first (runlog.RunEntry): what
// the console's list of runs reads, so that an operator finds a run that stopped waiting as
// easily as one that waits. It is a read model kept by the stream's consumer (Reindex), never the
// commit path. Every method refuses a tenant or run id that is not an id with
// runlog.ErrInvalidKey.
type RunIndex interface {
	// FileRun files e, unless its run's entry there reflects a later commit of the same run
	// (runlog.RunEntry.Replaces): that entry stays, and that is no error (filed is false).
	FileRun(ctx context.Context, e runlog.RunEntry) (filed bool, err error)
	// Runs answers a page of the tenant's entries that q matches (runlog.RunQuery.Matches), in
	// activity order, newest first, or in run id order for a prefix (RunQuery.ByID), after the
	// cursor q.After (RunQuery.Cursor of the last entry of the page before). It reads at most
	// runlog.MaxRunsRead entries, so a page of a rare filter may hold fewer than q.Limit, or
	// none, with a Next. An entry past its Expires is not listed.
	Runs(ctx context.Context, tenant string, q runlog.RunQuery) (runlog.RunPage, error)
}

// Bounds of a page of runs: DefaultRunsLimit unless the caller asks for up to MaxRunsLimit; a
// search of at most maxSearchWords words.
const (
	DefaultRunsLimit = 50
	MaxRunsLimit     = 200
	maxSearchWords   = 8
	maxPrefix        = 128
)

// RunSearch is a list of runs as a caller asks for it (the console's ?status=, ?since=, ?until=,
// ?q=), before it is a store's query.
type RunSearch struct {
	// Status is a phase (runlog.Phases), or "" for any.
	Status       string
	Since, Until time.Time
	// Text is what the caller typed: a run id prefix when it is one word that names runs,
	// else words of titles.
	Text  string
	After string
	Limit int
}

// Runs answers a page of the caller's tenant's runs (RunIndex.Runs), as search asks: a status
// that is no phase, a time range that ends before it starts, or a search of more than
// maxSearchWords words is invalid. Text that is one word is a run id prefix when some run's id
// starts so, else a word of titles (one read of the index more); the cursor says which a later
// page goes on with (an activity cursor holds "#", which no run id does).
func (h *Host) Runs(ctx context.Context, p interrupt.Principal, search RunSearch) (runlog.RunPage, runlog.RunQuery, error) {
	q, err := runQuery(search)
	if err != nil || !runlog.ValidID(p.Tenant) {
		return runlog.RunPage{}, q, err
	}
	if q.Prefix != "" && strings.Contains(q.After, "#") {
		// A page after one of activity order: the word found no run id, and titles go on.
		q.Words, q.Prefix = runlog.SearchWords(q.Prefix), ""
	}
	if q.Prefix != "" {
		page, err := h.runIndex.Runs(ctx, p.Tenant, q)
		if err != nil || len(page.Runs) > 0 || page.Next != "" || q.After != "" {
			return page, q, err
		}
		q.Words, q.Prefix = runlog.SearchWords(q.Prefix), ""
	}
	page, err := h.runIndex.Runs(ctx, p.Tenant, q)
	return page, q, err
}

// runQuery is search as the index reads it.
func runQuery(search RunSearch) (runlog.RunQuery, error) {
	q := runlog.RunQuery{Since: search.Since, Until: search.Until, After: search.After, Limit: search.Limit}
	if q.Limit <= 0 {
		q.Limit = DefaultRunsLimit
	}
	q.Limit = min(q.Limit, MaxRunsLimit)
	if ph := runlog.Phase(search.Status); ph != "" && !slices.Contains(runlog.Phases, ph) {
		return q, interrupt.Invalid("the status is not one a run has", interrupt.FieldError{Path: "status", Message: "must be waiting, running, expired, completed or cancelled"})
	}
	q.Phase = runlog.Phase(search.Status)
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Since.Before(q.Until) {
		return q, interrupt.Invalid("the time range ends before it starts", interrupt.FieldError{Path: "until", Message: "must be after since"})
	}
	text := strings.TrimSpace(search.Text)
	if f := strings.Fields(text); len(f) == 1 && runlog.ValidID(f[0]) && len(f[0]) <= maxPrefix {
		q.Prefix = f[0]
		return q, nil
	}
	q.Words = runlog.SearchWords(text)
	if len(q.Words) > maxSearchWords {
		return q, interrupt.Invalid("the search has too many words", interrupt.FieldError{Path: "q", Message: "must be at most 8 words"})
	}
	return q, nil
}
