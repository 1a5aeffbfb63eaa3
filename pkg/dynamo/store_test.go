package dynamo_test

import (
	"testing"

	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/internal/outboundtest"
	"github.com/interrupthost/interrupthost/pkg/channel/slack"
	slackstoretest "github.com/interrupthost/interrupthost/pkg/channel/slack/storetest"
	"github.com/interrupthost/interrupthost/pkg/channel/teams"
	teamsstoretest "github.com/interrupthost/interrupthost/pkg/channel/teams/storetest"
	"github.com/interrupthost/interrupthost/pkg/contacts"
	contactstoretest "github.com/interrupthost/interrupthost/pkg/contacts/storetest"
	"github.com/interrupthost/interrupthost/pkg/delegation"
	delegationstoretest "github.com/interrupthost/interrupthost/pkg/delegation/storetest"
	"github.com/interrupthost/interrupthost/pkg/dynamo"
	"github.com/interrupthost/interrupthost/pkg/host"
	hoststoretest "github.com/interrupthost/interrupthost/pkg/host/storetest"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	outboundstoretest "github.com/interrupthost/interrupthost/pkg/outbound/storetest"
	"github.com/interrupthost/interrupthost/pkg/policy"
	policystoretest "github.com/interrupthost/interrupthost/pkg/policy/storetest"
	"github.com/interrupthost/interrupthost/pkg/signin"
	signinstoretest "github.com/interrupthost/interrupthost/pkg/signin/storetest"
)

// The stores the host and its deliverer run on in AWS.
var (
	_ host.Store       = (*dynamo.Table)(nil)
	_ outbound.Store   = (*dynamo.Outbound)(nil)
	_ contacts.Store   = (*dynamo.Table)(nil)
	_ slack.Store      = (*dynamo.Table)(nil)
	_ teams.Store      = (*dynamo.Table)(nil)
	_ teams.Activities = (*dynamo.Outbound)(nil)
	_ signin.Sessions  = (*dynamo.Table)(nil)
	_ delegation.Store = (*dynamo.Table)(nil)
)

// TestHostStore holds the table to the behaviour of every store the host runs on, the one its
// tests over the in-memory store take for granted: each case on a fresh table of the local stack.
func TestHostStore(t *testing.T) {
	t.Parallel()
	localaws.NeedsStack(t)
	hoststoretest.Exercise(t, func(t *testing.T) host.Store {
		db, table := localaws.NewTable(t)
		return dynamo.NewTable(db, table)
	})
}

// TestOutboundStore holds the table to the behaviour of every store of outbound deliveries, the
// one the deliverer's tests over the in-memory store take for granted: each case on a fresh table
// of the local stack.
func TestOutboundStore(t *testing.T) {
	t.Parallel()
	localaws.NeedsStack(t)
	open := func(t *testing.T) outbound.Store {
		db, table := localaws.NewTable(t)
		return dynamo.NewOutbound(db, table)
	}
	outboundstoretest.Exercise(t, open)
	t.Run("concurrent deliverers", func(t *testing.T) {
		t.Parallel()
		outboundtest.ConcurrentDeliverers(t, open)
	})
}

// TestContactsStore holds the table's contacts to the behaviour of every contacts store: each
// case on a fresh table of the local stack.
func TestContactsStore(t *testing.T) {
	t.Parallel()
	localaws.NeedsStack(t)
	contactstoretest.Exercise(t, func(t *testing.T) contacts.Store {
		db, table := localaws.NewTable(t)
		return dynamo.NewTable(db, table)
	})
}

// TestSlackAppStore holds the table's Slack apps to the behaviour of every store: each case on
// a fresh table of the local stack.
func TestSlackAppStore(t *testing.T) {
	t.Parallel()
	localaws.NeedsStack(t)
	slackstoretest.Exercise(t, func(t *testing.T) slack.Store {
		db, table := localaws.NewTable(t)
		return dynamo.NewTable(db, table)
	})
}

// TestTeamsBotStore holds the table's Teams bots to the behaviour of every store: each case on
// a fresh table of the local stack.
func TestTeamsBotStore(t *testing.T) {
	t.Parallel()
	localaws.NeedsStack(t)
	teamsstoretest.Exercise(t, func(t *testing.T) teams.Store {
		db, table := localaws.NewTable(t)
		return dynamo.NewTable(db, table)
	})
}

// TestTeamsActivities holds the table's Teams activities to the behaviour of every store: each
// case on a fresh table of the local stack.
func TestTeamsActivities(t *testing.T) {
	t.Parallel()
	localaws.NeedsStack(t)
	teamsstoretest.ExerciseActivities(t, func(t *testing.T) teams.Activities {
		db, table := localaws.NewTable(t)
		return dynamo.NewOutbound(db, table)
	})
}

// TestSessionStore holds the table's sessions to the behaviour of every session store: each case
// on a fresh table of the local stack.
func TestSessionStore(t *testing.T) {
	t.Parallel()
	localaws.NeedsStack(t)
	signinstoretest.Exercise(t, func(t *testing.T) signin.Sessions {
		db, table := localaws.NewTable(t)
		return dynamo.NewTable(db, table)
	})
}

// TestPolicyStore holds the store's tool policies to the behaviour of every policy store.
func TestPolicyStore(t *testing.T) {
	t.Parallel()
	localaws.NeedsStack(t)
	policystoretest.Exercise(t, func(t *testing.T) policy.Store {
		db, table := localaws.NewTable(t)
		return dynamo.NewTable(db, table)
	})
}

// TestDelegationStore holds the table's delegations to the behaviour of every delegation store:
// each case on a fresh table of the local stack.
func TestDelegationStore(t *testing.T) {
	t.Parallel()
	localaws.NeedsStack(t)
	delegationstoretest.Exercise(t, func(t *testing.T) delegation.Store {
		db, table := localaws.NewTable(t)
		return dynamo.NewTable(db, table)
	})
}
