package host

import (
	"context"
	"time"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// Story is a run as an operator reads it (the console): where it stands, what it waits on and
// from whom, and a page of its commits, each with who made it and when.
type Story struct {
	RunID  string
	Status interrupt.RunStatus
	// Waiting are the interrupts pending now, in the order they were requested.
	Waiting []StoryWaiting
	// Chapters are the commits after the page's after, oldest first; Next is the after of the
	// page that follows, More whether there is one.
	Chapters []Chapter
	Next     int64
	More     bool
}

// StoryWaiting is one interrupt a run waits on, and on whom.
type StoryWaiting struct {
	NodeID, InterruptID string
	Kind                interrupt.Kind
	// Raw is its payload as requested; Title what it is called (runlog.Interrupt.Title).
	Raw         []byte
	Title       string
	RequestedAt time.Time
	RequestedBy string
	Deadline    time.Time
	// Tally is an approval's count so far; Undecided whom it is told to who have not voted
	// (the refs of its audience, less the principals who voted).
	Tally     *interrupt.Tally
	Undecided []interrupt.Ref
	Votes     []interrupt.Vote
}

// Chapter is one commit of a run: when, by whom (runlog.Commit.By: a principal, "token:<jti>"
// for a link's bearer, "" for the host), and its events as clients read them.
type Chapter struct {
	Seq    int64
	At     time.Time
	By     string
	Events []runlog.Envelope
	// Calls are the calls the commit's requests ask people to allow, by interrupt id, with the
	// policy each was asked under; Titles the titles their displays give (a question's): what
	// the envelopes do not carry (the host's own record beside a payload).
	Calls  map[string]*interrupt.ToolCall
	Titles map[string]string
}

// MaxStoryChapters bounds a page of a run's story.
const MaxStoryChapters = 50

// Story reads runID of the caller's tenant for the console: its state (one read from its newest
// checkpoint) and up to limit of its commits after seq after (at most MaxStoryChapters), each
// with its author. Another tenant's run answers 404.
func (h *Host) Story(ctx context.Context, p interrupt.Principal, runID string, after int64, limit int) (Story, error) {
	k, st, err := h.loadRun(ctx, p, runID)
	if err != nil {
		return Story{}, err
	}
	if !st.Exists() {
		return Story{}, interrupt.Errorf(interrupt.CodeNotFound, "no run %s", runID)
	}
	if limit <= 0 || limit > MaxStoryChapters {
		limit = MaxStoryChapters
	}
	now := h.now()
	s := Story{RunID: runID, Status: st.Snapshot(runID, now).Status, Next: after}
	for _, in := range st.Pending(now) {
		w := StoryWaiting{
			NodeID: in.NodeID, InterruptID: in.ID, Kind: in.Payload.Kind, Raw: in.Raw, Title: in.Title(), RequestedAt: in.RequestedAt,
			RequestedBy: in.RequestedBy, Deadline: in.Deadline, Votes: in.CountedVotes(),
			Undecided: in.Deciders.Undecided(func(p string) bool { return in.Voted(p) != nil }),
		}
		if in.Payload.Kind == interrupt.KindApproval {
			t := in.Tally()
			w.Tally = &t
		}
		s.Waiting = append(s.Waiting, w)
	}
	if after >= st.Seq {
		return s, nil
	}
	commits, err := h.runs.Read(ctx, k, after, limit+1)
	if err != nil {
		return Story{}, err
	}
	if len(commits) > limit {
		commits, s.More = commits[:limit], true
	}
	for _, c := range commits {
		ch := Chapter{Seq: c.Seq, At: c.At, By: c.By, Events: c.Envelopes(runID)}
		for _, e := range c.Events {
			if e.Type == interrupt.EventRequested && e.ToolCall != nil {
				if ch.Calls == nil {
					ch.Calls = map[string]*interrupt.ToolCall{}
				}
				ch.Calls[e.InterruptID] = e.ToolCall
			}
			if e.Type == interrupt.EventRequested && e.Display != nil && e.Display.Title != "" {
				if ch.Titles == nil {
					ch.Titles = map[string]string{}
				}
				ch.Titles[e.InterruptID] = e.Display.Title
			}
		}
		s.Chapters = append(s.Chapters, ch)
		s.Next = c.Seq
	}
	return s, nil
}
