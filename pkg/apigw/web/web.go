// Package web serves the HTML surfaces a person opens in a browser: the approval page
// (pkg/approvalpage's views), its OpenID Connect sign-in and sign-out, and the operators'
// console (pkg/console's views), both signed in with one session (pkg/signin). It reads the host
// and hands the views what it read; the views call nothing.
package web

import (
	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/contacts"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/signin"
)

type (
	call     = apigw.Call
	function = apigw.Function[*API]
	endpoint = apigw.Endpoint[*API]
)

// API serves the page's and the console's functions through a gateway. Safe for concurrent
// invocations. New makes one with no service; each function's constructor (API.ApprovalPage,
// API.Console) takes the services its routes call, by type.
type API struct {
	gw     *apigw.Gateway
	host   *host.Host
	tokens *host.Signer
	// signIn signs approvers in on the approval page; nil: the page's links without a credential
	// answer 404.
	signIn   *signin.Flow
	subs     *outbound.Subscriptions
	resend   apigw.Resender
	contacts *contacts.Directory
	opts     apigw.Options
}

// New returns the HTML controllers over g, with no service.
func New(g *apigw.Gateway) *API { return &API{gw: g, opts: g.Options()} }

var (
	consoleRoutes = function{Function: "console", Operations: []endpoint{
		{Route: "GET /console", Proof: apigw.ProofOperator, Page: (*API).consoleHome, Crash: consoleCrash},
		{Route: "HEAD /console", Proof: apigw.ProofOperator, Page: (*API).consoleHome, Crash: consoleCrash},
		{Route: "GET /console/runs", Proof: apigw.ProofOperator, Page: (*API).consoleRuns, Crash: consoleCrash},
		{Route: "HEAD /console/runs", Proof: apigw.ProofOperator, Page: (*API).consoleRuns, Crash: consoleCrash},
		{Route: "GET /console/runs/{runId}", Proof: apigw.ProofOperator, Page: (*API).consoleRun, Crash: consoleCrash},
		{Route: "HEAD /console/runs/{runId}", Proof: apigw.ProofOperator, Page: (*API).consoleRun, Crash: consoleCrash},
		{Route: "POST /console/runs/{runId}/cancel", Proof: apigw.ProofOperator, Page: (*API).consoleEnd, Crash: consoleCrash},
		{Route: "POST /console/runs/{runId}/complete", Proof: apigw.ProofOperator, Page: (*API).consoleEnd, Crash: consoleCrash},
		{Route: "POST /console/runs/{runId}/resend", Proof: apigw.ProofOperator, Page: (*API).consoleResend, Crash: consoleCrash},
	}}
	approvalPage = function{Function: "approval-page", Operations: []endpoint{
		{Route: "GET /approve/{token}", Proof: apigw.ProofLink, Page: (*API).pageByToken, Crash: pageCrash},
		{Route: "HEAD /approve/{token}", Proof: apigw.ProofLink, Page: (*API).pageByToken, Crash: pageCrash},
		{Route: "POST /approve/{token}", Proof: apigw.ProofLink, Page: (*API).pageByToken, Crash: pageCrash},
		{Route: "GET /approve/{runId}/{interruptId}", Proof: apigw.ProofSession, Page: (*API).pageSignedIn, Crash: pageCrash},
		{Route: "HEAD /approve/{runId}/{interruptId}", Proof: apigw.ProofSession, Page: (*API).pageSignedIn, Crash: pageCrash},
		{Route: "POST /approve/{runId}/{interruptId}", Proof: apigw.ProofSession, Page: (*API).pageSignedIn, Crash: pageCrash},
		{Route: "GET /approve", Proof: apigw.ProofSession, Page: (*API).inboxPage, Crash: pageCrash},
		{Route: "HEAD /approve", Proof: apigw.ProofSession, Page: (*API).inboxPage, Crash: pageCrash},
		{Route: "GET /signin/callback", Proof: apigw.ProofSignIn, Page: (*API).signInCallback, Crash: pageCrash},
		{Route: "POST /signin/signout", Proof: apigw.ProofSignIn, Page: (*API).signOut, Crash: pageCrash},
	}}
)

// Routes are the functions of the HTML surfaces, for the table of every function (package
// routes).
func Routes() []apigw.Routes {
	return []apigw.Routes{approvalPage.Routes(), consoleRoutes.Routes()}
}

// ApprovalPage serves approval-page: the page of a token's link, and of a link without a
// credential for an approver signed in by signIn (nil: such links answer 404).
func (a *API) ApprovalPage(t *host.Signer, signIn *signin.Flow) apigw.Handler {
	b := *a
	b.host, b.tokens, b.signIn = t.Host(), t, signIn
	return apigw.Serve(a.gw, &b, approvalPage)
}

// Console serves console: the operators' pages, signed in by signIn as the approval page is,
// reading the host, the subscriptions' deliveries and the contacts' names, resending by r.
func (a *API) Console(h *host.Host, signIn *signin.Flow, s *outbound.Subscriptions, r apigw.Resender, d *contacts.Directory) apigw.Handler {
	b := *a
	b.host, b.signIn, b.subs, b.resend, b.contacts = h, signIn, s, r, d
	return apigw.Serve(a.gw, &b, consoleRoutes)
}
