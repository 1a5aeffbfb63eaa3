// Package web serves the HTML surfaces a person opens in a browser: the approval page
// (pkg/approvalpage's views), its OpenID Connect sign-in and sign-out, and the operators'
// console (pkg/console's views), both signed in with one session (pkg/signin). It reads the host
// and hands the views what it read; the views call nothing.
package web

import (
	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/contacts"
	"github.com/interrupthost/interrupthost/pkg/delegation"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/signin"
)

type (
	call     = apigw.Call
	function = apigw.Function[*controller]
	endpoint = apigw.Endpoint[*controller]
)

// API serves the page's and the console's functions through a gateway. Safe for concurrent
// invocations. New makes one with no service; each function's constructor (API.ApprovalPage,
// API.Console) takes the services its routes call, by type.
type API struct{ c controller }

// controller is the pages' handlers over the services one function was built with: a type with
// no exported method, since the type a table's handlers are served on has its exported methods
// kept by the linker wherever a template reflects (the page's), which would link the approval
// page's handlers into the console and the console's into the page.
type controller struct {
	gw     *apigw.Gateway
	host   *host.Host
	tokens *host.Signer
	// signIn signs approvers in on the approval page; nil: the page's links without a credential
	// answer 404.
	signIn   *signin.Flow
	subs     *outbound.Subscriptions
	resend   apigw.Resender
	contacts *contacts.Directory
	// away keeps the approvers' delegations the inbox's "I am away" sets; nil offers none.
	away *delegation.Book
	opts apigw.Options
}

// New returns the HTML controllers over g, with no service.
func New(g *apigw.Gateway) *API { return &API{c: controller{gw: g, opts: g.Options()}} }

func consoleRoutes() function {
	return function{Function: "console", Operations: []endpoint{
		{Route: "GET /console", Proof: apigw.ProofOperator, Page: (*controller).consoleHome, Crash: consoleCrash},
		{Route: "HEAD /console", Proof: apigw.ProofOperator, Page: (*controller).consoleHome, Crash: consoleCrash},
		{Route: "GET /console/runs", Proof: apigw.ProofOperator, Page: (*controller).consoleRuns, Crash: consoleCrash},
		{Route: "HEAD /console/runs", Proof: apigw.ProofOperator, Page: (*controller).consoleRuns, Crash: consoleCrash},
		{Route: "GET /console/runs/{runId}", Proof: apigw.ProofOperator, Page: (*controller).consoleRun, Crash: consoleCrash},
		{Route: "HEAD /console/runs/{runId}", Proof: apigw.ProofOperator, Page: (*controller).consoleRun, Crash: consoleCrash},
		{Route: "POST /console/runs/{runId}/cancel", Proof: apigw.ProofOperator, Page: (*controller).consoleEnd, Crash: consoleCrash},
		{Route: "POST /console/runs/{runId}/complete", Proof: apigw.ProofOperator, Page: (*controller).consoleEnd, Crash: consoleCrash},
		{Route: "POST /console/runs/{runId}/resend", Proof: apigw.ProofOperator, Page: (*controller).consoleResend, Crash: consoleCrash},
	}}
}

func approvalPage() function {
	return function{Function: "approval-page", Operations: []endpoint{
		{Route: "GET /approve/{token}", Proof: apigw.ProofLink, Page: (*controller).pageByToken, Crash: pageCrash},
		{Route: "HEAD /approve/{token}", Proof: apigw.ProofLink, Page: (*controller).pageByToken, Crash: pageCrash},
		{Route: "POST /approve/{token}", Proof: apigw.ProofLink, Page: (*controller).pageByToken, Crash: pageCrash},
		{Route: "GET /approve/{runId}/{interruptId}", Proof: apigw.ProofSession, Page: (*controller).pageSignedIn, Crash: pageCrash},
		{Route: "HEAD /approve/{runId}/{interruptId}", Proof: apigw.ProofSession, Page: (*controller).pageSignedIn, Crash: pageCrash},
		{Route: "POST /approve/{runId}/{interruptId}", Proof: apigw.ProofSession, Page: (*controller).pageSignedIn, Crash: pageCrash},
		{Route: "POST /approve/away", Proof: apigw.ProofSession, Page: (*controller).awayPage, Crash: pageCrash},
		{Route: "GET /approve", Proof: apigw.ProofSession, Page: (*controller).inboxPage, Crash: pageCrash},
		{Route: "HEAD /approve", Proof: apigw.ProofSession, Page: (*controller).inboxPage, Crash: pageCrash},
		{Route: "GET /signin/callback", Proof: apigw.ProofSignIn, Page: (*controller).signInCallback, Crash: pageCrash},
		{Route: "POST /signin/signout", Proof: apigw.ProofSignIn, Page: (*controller).signOut, Crash: pageCrash},
	}}
}

// Routes are the functions of the HTML surfaces, for the table of every function (package
// routes).
func Routes() []apigw.Routes {
	return []apigw.Routes{approvalPage().Routes(), consoleRoutes().Routes()}
}

// ApprovalPage serves approval-page: the page of a token's link, and of a link without a
// credential for an approver signed in by signIn (nil: such links answer 404).
func (a *API) ApprovalPage(t *host.Signer, signIn *signin.Flow, away *delegation.Book) apigw.Handler {
	b := a.c
	b.host, b.tokens, b.signIn, b.away = t.Host(), t, signIn, away
	return apigw.Serve(b.gw, &b, approvalPage())
}

// Console serves console: the operators' pages, signed in by signIn as the approval page is,
// reading the host, the subscriptions' deliveries and the contacts' names, resending by r.
func (a *API) Console(h *host.Host, signIn *signin.Flow, s *outbound.Subscriptions, r apigw.Resender, d *contacts.Directory) apigw.Handler {
	b := a.c
	b.host, b.signIn, b.subs, b.resend, b.contacts = h, signIn, s, r, d
	return apigw.Serve(b.gw, &b, consoleRoutes())
}
