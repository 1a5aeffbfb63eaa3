// Package teams is the host's Microsoft Teams channel, all of it in one place, built as the
// second channel through the same ports as Slack's: a tenant's Teams bot (the Azure Bot's app
// id and Entra tenant registered with PUT /integrations/teams, its password in Secrets
// Manager), the Adaptive Cards a subscription of format "teams" posts (Channel, an
// outbound.Channel), their Approve and Reject (Action.Execute with sealed data naming one
// interrupt of one tenant), and the invokes that come back to POST /teams/messages (Messages):
// verified as the Bot Framework's by its published keys (KeySet), each recorded through the
// host's one rule (host.Cast) as the person whose contact names the Entra user, a proof of kind
// interrupt.ViaChat (docs/design.md, "Channels" and "Deciding in Teams").
package teams
