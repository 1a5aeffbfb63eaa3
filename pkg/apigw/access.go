package apigw

// Proof is a kind of credential an operation takes beside, or instead of, a JWT's scopes. With
// Operation.Scopes it is the host's one table of who may do what: every credential the host
// accepts is named here, and one that an operation does not name is refused (401 or 403, or,
// on a page a browser opens, a new sign-in), writing nothing.
type Proof string

// The proofs, each checked by the function that serves the operation, never by API Gateway
// (whose JWT authorizer checks Scopes alone).
const (
	// ProofJWT is a JWT and its scopes alone (Operation.Scopes): an engine's client-credentials
	// token and a person's are judged alike, by scope; the agents' sign-in's never.
	ProofJWT Proof = ""
	// ProofPublic is nothing: the document is the same for everyone (discovery, metadata).
	ProofPublic Proof = "public"
	// ProofLink is a signed link: a token the host minted for one interrupt, in the path.
	ProofLink Proof = "link"
	// ProofSession is the approval page's session: a sealed cookie whose record the server
	// holds until it expires or its person signs out (package signin).
	ProofSession Proof = "session"
	// ProofOperator is a session whose person holds the operator role (Options.OperatorRole).
	ProofOperator Proof = "operator session"
	// ProofSignIn is the sign-in's own: the state cookie and the identity provider's code the
	// callback turns into a session, and the session a sign-out ends (with its CSRF value), if
	// the browser holds one; without, a sign-out ends nothing and needs nothing.
	ProofSignIn Proof = "sign-in"
	// ProofSlack is a click signed with a registered Slack app's signing secret.
	ProofSlack Proof = "Slack signature"
	// ProofTeams is an activity carrying the Bot Framework's token for a registered Teams bot.
	ProofTeams Proof = "Bot Framework token"
	// ProofProvider is a webhook provider's signature with the endpoint's secret.
	ProofProvider Proof = "provider signature"
	// ProofReceipt is a receipt of an approved call, in the body, beside the JWT's scope.
	ProofReceipt Proof = "receipt"
	// ProofBearer is the MCP endpoint's own check of the bearer JWT: an engine's with the
	// scope a tool names (pkg/mcp's Access), or the agents' sign-in's agents:ask alone.
	ProofBearer Proof = "MCP bearer"
)
