// Package slack is the host's Slack channel, all of it in one place: a tenant's Slack app (the
// app and workspace registered with PUT /integrations/slack, its secrets in Secrets Manager),
// the Block Kit messages a subscription of format "slack" posts (Channel, an
// outbound.Channel), their Approve and Reject buttons (sealed values naming one interrupt of
// one tenant), and the clicks that come back to POST /slack/interactions (Interactions):
// verified as Slack's with the app's signing secret, each recorded through the host's one rule
// (host.Cast) as the person whose contact names the Slack member, a proof of kind
// interrupt.ViaChat (docs/design.md, "Channels" and "Deciding in Slack").
//
// slack-go's own package is imported as slackgo.
package slack
