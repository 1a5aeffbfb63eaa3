// Package environ reads a function's configuration from the environment template.yaml gives
// it, once, at init, and refuses what it cannot honour. It builds no AWS client: a function that
// needs none (discovery) is served from here alone, and the functions that do are wired by
// package app on top of it.
package environ

import (
	"cmp"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/bearer"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/identity"
	"github.com/interrupthost/interrupthost/pkg/metrics"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// Environment variables the functions read (set by template.yaml).
const (
	EnvTable = "TABLE_NAME"
	// EnvPrincipalClaim names the claim that is the caller's principal (identity.PrincipalClaims);
	// sub when unset.
	EnvPrincipalClaim = "PRINCIPAL_CLAIM"
	EnvTenantClaim    = "TENANT_CLAIM"
	// EnvScopePrefix is what the identity provider puts before every scope name.
	EnvScopePrefix  = "SCOPE_PREFIX"
	EnvCapabilities = "CAPABILITIES"
	EnvKeyring      = "KEYRING_SECRET_ID"
	// EnvKeyringCache is how many seconds a function trusts its read of the keyring
	// (template.yaml's KeyringCacheSeconds); unset, the keyring's default.
	EnvKeyringCache = "KEYRING_CACHE_SECONDS"
	EnvRefKinds     = "REF_KINDS"
	EnvOverride     = "OVERRIDE_PRINCIPALS"
	EnvGroupsClaim  = "GROUPS_CLAIM"
	EnvRolesClaim   = "ROLES_CLAIM"
	// EnvWebhookSecrets is the name prefix of the webhook endpoints' secrets.
	EnvWebhookSecrets = "WEBHOOK_SECRET_PREFIX"
	EnvInboxRetention = "INBOX_RETENTION_DAYS"
	EnvRetention      = "RETENTION_DAYS"
	EnvEscalation     = "ESCALATION_THRESHOLD"
	// EnvFollowUp is the deployment's follow-ups of an interrupt whose request names none
	// (host.Config.FollowUp), as JSON of the request's reminders and escalation members.
	EnvFollowUp = "FOLLOW_UP"
	// EnvSubscriptionSecrets is the name prefix of the subscriptions' signing secrets.
	EnvSubscriptionSecrets = "SUBSCRIPTION_SECRET_PREFIX"
	// EnvAllowPrivateTargets ("true") lets subscriptions deliver to private addresses and http.
	EnvAllowPrivateTargets = "ALLOW_PRIVATE_DELIVERY_TARGETS"
	// EnvPublicBaseURL is where the API is reached from outside: approval links start with it.
	// The functions the API invokes may be given none (then each request's domain is the
	// base); the others must be, since no request tells them (docs/design.md, "Deployment").
	EnvPublicBaseURL = "PUBLIC_BASE_URL"
	// EnvOIDCIssuer and EnvOIDCClientID are the identity provider approvers sign in with on the
	// approval page, and its app client; the issuer is also what the MCP endpoint's protected
	// resource metadata names.
	EnvOIDCIssuer   = "OIDC_ISSUER"
	EnvOIDCClientID = "OIDC_CLIENT_ID"
	// EnvStackName is the stack's name, which tags the secrets the functions create.
	EnvStackName = "STACK_NAME"
	// EnvMetricsNamespace is the CloudWatch namespace of the functions' metrics; without it
	// they publish none.
	EnvMetricsNamespace = "METRICS_NAMESPACE"
	// EnvMailSender is the address mail is sent from, an identity SES verified (template.yaml's
	// SenderAddress); unset, the deployment sends no mail. EnvMailSenderName is its display
	// name.
	EnvMailSender     = "MAIL_SENDER"
	EnvMailSenderName = "MAIL_SENDER_NAME"
	// EnvSlackSecrets is the name prefix of the tenants' Slack apps' secrets (a tenant's is the
	// prefix and its id).
	EnvSlackSecrets = "SLACK_SECRET_PREFIX"
	// EnvTeamsSecrets is the name prefix of the tenants' Teams bots' passwords (a tenant's is
	// the prefix, its id and the bot's app id).
	EnvTeamsSecrets = "TEAMS_SECRET_PREFIX"
	// EnvBotFrameworkMetadata is the OpenID metadata URL of the Bot Framework's signing keys
	// (template.yaml's BotFrameworkOpenIdMetadata); unset, Microsoft's own.
	EnvBotFrameworkMetadata = "BOTFRAMEWORK_OPENID_METADATA"
	// EnvBotFrameworkTokenURL is the token endpoint of the bots' client-credentials grant
	// (template.yaml's BotFrameworkTokenUrl); unset, the multi-tenant bots' own.
	EnvBotFrameworkTokenURL = "BOTFRAMEWORK_TOKEN_URL"
	// EnvSlackAPI is the base URL of Slack's Web API, where a Reject's modal is opened; unset,
	// Slack's own. Only tests point it elsewhere.
	EnvSlackAPI = "SLACK_API_URL"
	// EnvJwtAudiences lists, comma-separated, the app clients whose JWTs the API takes (the
	// template's JwtAudience), for the one function that verifies tokens itself (mcp).
	EnvJwtAudiences = "JWT_AUDIENCES"
	// EnvMCPOrigins lists, comma-separated, the Origins a request to the MCP endpoint may carry.
	EnvMCPOrigins = "MCP_ALLOWED_ORIGINS"
	// EnvOperatorRole is the role claim that opens the console.
	EnvOperatorRole = "OPERATOR_ROLE"
	// EnvAgentsClient is the app client of the agents' sign-in (the template's AgentsClientId):
	// its tokens open only the MCP endpoint, which takes them beside JWT_AUDIENCES' own.
	EnvAgentsClient = "AGENTS_CLIENT_ID"
	// EnvClientMetadataURLs lists, comma-separated, the URL patterns of the MCP clients known by
	// their metadata document's URL (CIMD) whose tokens the MCP endpoint takes as the agents'
	// sign-in's (the template's McpClientMetadataUrls); set for the mcp function alone.
	EnvClientMetadataURLs = "MCP_CLIENT_METADATA_URLS"
	// EnvRedriveSegments is how many segments redrive-stream's Scan of the table reads at once.
	EnvRedriveSegments = "REDRIVE_SCAN_SEGMENTS"
)

// Host reads the host's behaviour from the environment and refuses what it cannot honour.
func Host() (host.Config, error) {
	hc := host.Config{
		Capabilities:       list(os.Getenv(EnvCapabilities)),
		RefKinds:           list(os.Getenv(EnvRefKinds)),
		OverridePrincipals: list(os.Getenv(EnvOverride)),
	}
	if v := os.Getenv(EnvEscalation); v != "" {
		t, err := strconv.ParseFloat(v, 64)
		// The range a run may configure (host.Configure) and the template admits.
		if err != nil || t < 0 || t > 1 {
			return hc, fmt.Errorf("environ: %s=%q is not a threshold from 0 to 1", EnvEscalation, v)
		}
		hc.EscalationThreshold = &t
	}
	for env, into := range map[string]*time.Duration{EnvInboxRetention: &hc.InboxRetention, EnvRetention: &hc.Retention} {
		if v := os.Getenv(env); v != "" {
			days, err := strconv.Atoi(v)
			if err != nil || days < 1 {
				return hc, fmt.Errorf("environ: %s=%q is not a number of days", env, v)
			}
			*into = time.Duration(days) * 24 * time.Hour
		}
	}
	if v := os.Getenv(EnvFollowUp); v != "" {
		dec := json.NewDecoder(strings.NewReader(v))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&hc.FollowUp); err != nil {
			return hc, fmt.Errorf("environ: %s is not the JSON of reminders and escalation: %w", EnvFollowUp, err)
		}
		if fields := hc.FollowUp.Check(""); len(fields) > 0 {
			return hc, fmt.Errorf("environ: %s: %s %s", EnvFollowUp, fields[0].Path, fields[0].Message)
		}
	}
	return hc, host.CheckConfig(hc)
}

// Logger is the functions' structured log, one JSON object a line on standard output, where
// Lambda sends it to CloudWatch Logs.
func Logger() *slog.Logger { return slog.New(slog.NewJSONHandler(os.Stdout, nil)) }

// Meter writes the function's metrics beside its log lines, under METRICS_NAMESPACE.
func Meter() *metrics.Log {
	ns := os.Getenv(EnvMetricsNamespace)
	if ns == "" {
		return nil
	}
	return metrics.New(os.Stdout, ns)
}

// PublicBase is PUBLIC_BASE_URL, checked: where approvers reach the API. optional admits it
// unset, for the functions the API invokes, whose requests say where they came in.
func PublicBase(optional bool) (string, error) {
	base := os.Getenv(EnvPublicBaseURL)
	if base == "" && optional {
		return "", nil
	}
	if u, err := url.Parse(base); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", fmt.Errorf("environ: %s=%q is not an http(s) URL", EnvPublicBaseURL, base)
	}
	return base, nil
}

// claims are the claims' names the deployment chose; a principal claim the host does not
// know stops the function, which would otherwise read every caller as nobody.
func claims() (apigw.Options, error) {
	principal, err := identity.PrincipalClaim(os.Getenv(EnvPrincipalClaim))
	if err != nil {
		return apigw.Options{}, fmt.Errorf("environ: %s: %w", EnvPrincipalClaim, err)
	}
	clients, err := ClientMetadataURLs()
	if err != nil {
		return apigw.Options{}, err
	}
	return apigw.Options{
		PrincipalClaim: principal, TenantClaim: os.Getenv(EnvTenantClaim), ScopePrefix: os.Getenv(EnvScopePrefix),
		GroupsClaim: os.Getenv(EnvGroupsClaim), RolesClaim: os.Getenv(EnvRolesClaim), AgentsClient: os.Getenv(EnvAgentsClient),
		AgentsClientURLs: clients,
	}, nil
}

// ClientMetadataURLs are the metadata URLs of the MCP clients the deployment allows
// (MCP_CLIENT_METADATA_URLS); a pattern that is no http(s) URL stops the function, which would
// otherwise refuse (or take) clients the operator did not mean to.
func ClientMetadataURLs() (bearer.URLPatterns, error) {
	p, err := bearer.ParseURLPatterns(list(os.Getenv(EnvClientMetadataURLs)))
	if err != nil {
		return p, fmt.Errorf("environ: %s: %w", EnvClientMetadataURLs, err)
	}
	return p, nil
}

// HostEnv is what a host reports to: the metrics (Meter) and the log, where a checkpoint not
// written is a warning (the operation succeeded; its run's reads stay longer until one is). The
// stores and schemas are the caller's to add.
func HostEnv() host.Env {
	log := Logger()
	return host.Env{
		Metrics: Meter(),
		OnCheckpointError: func(k runlog.Key, seq int64, err error) {
			log.Warn("checkpoint not written", "tenant", k.Tenant, "runId", k.RunID, "seq", seq, "error", err.Error())
		},
	}
}

// APIOptions are the API's options from the environment for a host configured by hc: the claims' names,
// the public base URL if one is set, the discovery document and the metrics.
func APIOptions(hc host.Config) (apigw.Options, error) {
	opts, err := claims()
	if err != nil {
		return opts, err
	}
	if opts.PublicBaseURL, err = PublicBase(true); err != nil {
		return opts, err
	}
	opts.Issuer = os.Getenv(EnvOIDCIssuer)
	opts.MCPOrigins = list(os.Getenv(EnvMCPOrigins))
	opts.OperatorRole = os.Getenv(EnvOperatorRole)
	opts.Discovery = host.DiscoveryOf(hc)
	opts.Metrics = Meter()
	return opts, nil
}

// DiscoveryGateway is the gateway of the one function that needs nothing but its configuration
// (discovery): built here, over no service, so that it links no AWS client. Every other
// function's is app.Env.Gateway, with the services its constructor takes.
func DiscoveryGateway() (*apigw.Gateway, error) {
	hc, err := Host()
	if err != nil {
		return nil, err
	}
	opts, err := APIOptions(hc)
	if err != nil {
		return nil, err
	}
	return apigw.New(Logger(), opts), nil
}

// ExitOn stops a function whose init failed: a function that cannot be configured must not
// start.
func ExitOn(err error) {
	if err != nil {
		slog.Error("init failed", "error", err)
		os.Exit(1)
	}
}

// list is a comma-separated variable's values, trimmed, without empty ones.
func list(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// KeyringCache is how long a function trusts its read of the keyring (EnvKeyringCache): 0, the
// keyring's own default, when unset.
func KeyringCache() (time.Duration, error) {
	v := os.Getenv(EnvKeyringCache)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 3600 {
		return 0, fmt.Errorf("environ: %s=%q is not a number of seconds from 1 to 3600", EnvKeyringCache, v)
	}
	return time.Duration(n) * time.Second, nil
}

// AllowPrivateTargets is ALLOW_PRIVATE_DELIVERY_TARGETS: whether deliveries and a Slack click's
// response_url may go to private addresses and http (the local stack's receivers).
func AllowPrivateTargets() (bool, error) {
	allow, err := strconv.ParseBool(cmp.Or(os.Getenv(EnvAllowPrivateTargets), "false"))
	if err != nil {
		return false, fmt.Errorf("environ: %s=%q is not true or false", EnvAllowPrivateTargets, os.Getenv(EnvAllowPrivateTargets))
	}
	return allow, nil
}

// TokenIssuer is the issuer of the JWTs the API takes, and the app clients they may be for
// (OIDC_ISSUER and JWT_AUDIENCES: the template's JwtIssuer and JwtAudience, and the agents'
// client, AGENTS_CLIENT_ID, when there is one), for the function that verifies tokens itself
// (mcp, with package bearer).
func TokenIssuer() (issuer string, audiences []string) {
	audiences = list(os.Getenv(EnvJwtAudiences))
	if agents := os.Getenv(EnvAgentsClient); agents != "" {
		audiences = append(audiences, agents)
	}
	return os.Getenv(EnvOIDCIssuer), audiences
}
