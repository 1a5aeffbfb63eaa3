package console

import (
	"cmp"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// Runs is the list of every run of the tenant, newest activity first: what an operator asks
// "did my approval go through?" of, whether the run still waits or not.
type Runs struct {
	// Summary says what the page holds and in which order.
	Summary string
	Rows    []RunRow
	// Query, Status, Since and Until are the search as asked (Since and Until as days,
	// 2006-01-02); Statuses the filter's choices.
	Query, Status, Since, Until string
	Statuses                    []Choice
	// First and Next link the list's first and next pages; "" for none.
	First, Next string
}

// RunRow is one run of the list.
type RunRow struct {
	Href, RunID, Title, Status, Active string
	// Others is how many more titles the run's entry holds than the one shown.
	Others int
	// Attention marks a run that stopped waiting because what it asked expired.
	Attention bool
}

// RunsParams are what the list of runs is made of: a page of the index, the search it answers
// (ByID when a run id prefix found it), and the pages around it.
type RunsParams struct {
	Page                        runlog.RunPage
	ByID                        bool
	Query, Status, Since, Until string
	FirstPage, NextPage         string
	Now                         time.Time
}

// phaseWords are the statuses as the list offers and says them.
var phaseWords = map[runlog.Phase]string{
	runlog.PhaseWaiting:   "Waiting",
	runlog.PhaseRunning:   "Running, waits on nothing",
	runlog.PhaseExpired:   "Stopped waiting: what it asked expired",
	runlog.PhaseCompleted: "Completed",
	runlog.PhaseCancelled: "Cancelled",
}

// RunsOf lays out a page of the runs index.
func RunsOf(in RunsParams) *Runs {
	r := &Runs{Query: in.Query, Status: in.Status, Since: in.Since, Until: in.Until, First: in.FirstPage, Next: in.NextPage}
	r.Statuses = append(r.Statuses, Choice{Value: "", Label: "Any status", Selected: in.Status == ""})
	for _, ph := range runlog.Phases {
		r.Statuses = append(r.Statuses, Choice{Value: string(ph), Label: phaseWords[ph], Selected: in.Status == string(ph)})
	}
	for _, e := range in.Page.Runs {
		row := RunRow{Href: "runs/" + url.PathEscape(e.Key.RunID), RunID: e.Key.RunID, Title: "(it asked nothing yet)",
			Status: phaseWords[e.Phase], Active: ago(e.At, in.Now), Attention: e.Phase == runlog.PhaseExpired}
		if len(e.Titles) > 0 {
			row.Title, row.Others = e.Titles[0], len(e.Titles)-1
		}
		if e.Phase == runlog.PhaseWaiting {
			row.Status = "Waits on " + plural(e.Waiting, "interrupt")
		}
		row.Status = cmp.Or(row.Status, string(e.Phase))
		r.Rows = append(r.Rows, row)
	}
	order := "most recent activity first"
	if in.ByID {
		order = "by run id, as they start with " + strconv.Quote(in.Query)
	}
	switch n := len(r.Rows); {
	case n == 0 && in.NextPage == "":
		r.Summary = "No run matches."
	case n == 0:
		r.Summary = "No run on this page matches; the next page may hold some."
	default:
		r.Summary = fmt.Sprintf("%s on this page, %s.", plural(n, "run"), order)
		if in.NextPage != "" {
			r.Summary += " More are on the next page."
		}
	}
	return r
}

// plural is n with noun, in the plural unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
