package inmem_test

import (
	"testing"

	"github.com/interrupthost/interrupthost/internal/outboundtest"
	"github.com/interrupthost/interrupthost/pkg/channel/slack"
	slackstoretest "github.com/interrupthost/interrupthost/pkg/channel/slack/storetest"
	"github.com/interrupthost/interrupthost/pkg/channel/teams"
	teamsstoretest "github.com/interrupthost/interrupthost/pkg/channel/teams/storetest"
	"github.com/interrupthost/interrupthost/pkg/contacts"
	contactstoretest "github.com/interrupthost/interrupthost/pkg/contacts/storetest"
	"github.com/interrupthost/interrupthost/pkg/delegation"
	delegationstoretest "github.com/interrupthost/interrupthost/pkg/delegation/storetest"
	"github.com/interrupthost/interrupthost/pkg/host"
	hoststoretest "github.com/interrupthost/interrupthost/pkg/host/storetest"
	"github.com/interrupthost/interrupthost/pkg/inmem"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	outboundstoretest "github.com/interrupthost/interrupthost/pkg/outbound/storetest"
	"github.com/interrupthost/interrupthost/pkg/policy"
	policystoretest "github.com/interrupthost/interrupthost/pkg/policy/storetest"
	"github.com/interrupthost/interrupthost/pkg/signin"
	signinstoretest "github.com/interrupthost/interrupthost/pkg/signin/storetest"
)

// The stores the host and its deliverer run on in tests.
var (
	_ host.Store      = (*inmem.Store)(nil)
	_ outbound.Store  = (*inmem.Outbound)(nil)
	_ contacts.Store  = (*inmem.Store)(nil)
	_ slack.Store     = (*inmem.Store)(nil)
	_ signin.Sessions = (*inmem.Sessions)(nil)
)

// TestHostStore holds the in-memory store to the behaviour of every store the host runs on: the
// host's tests run over it alone, so it must behave as the DynamoDB table does.
func TestHostStore(t *testing.T) {
	t.Parallel()
	hoststoretest.Exercise(t, func(*testing.T) host.Store { return inmem.New() })
}

// TestOutboundStore holds the in-memory store of outbound deliveries to the behaviour of every
// such store: the deliverer's tests run over it alone, so it must behave as the table does.
func TestOutboundStore(t *testing.T) {
	t.Parallel()
	open := func(*testing.T) outbound.Store { return inmem.NewOutbound() }
	outboundstoretest.Exercise(t, open)
	t.Run("concurrent deliverers", func(t *testing.T) {
		t.Parallel()
		outboundtest.ConcurrentDeliverers(t, open)
	})
}

// TestContactsStore holds the in-memory store's contacts to the behaviour of every contacts
// store.
func TestContactsStore(t *testing.T) {
	t.Parallel()
	contactstoretest.Exercise(t, func(*testing.T) contacts.Store { return inmem.New() })
}

// TestSlackAppStore holds the in-memory store's Slack apps to the behaviour of every store.
func TestSlackAppStore(t *testing.T) {
	t.Parallel()
	slackstoretest.Exercise(t, func(*testing.T) slack.Store { return inmem.New() })
}

// TestTeamsBotStore holds the in-memory store's Teams bots to the behaviour of every store.
func TestTeamsBotStore(t *testing.T) {
	t.Parallel()
	teamsstoretest.Exercise(t, func(*testing.T) teams.Store { return inmem.New() })
}

// TestTeamsActivities holds the in-memory store's Teams activities to the behaviour of every
// store.
func TestTeamsActivities(t *testing.T) {
	t.Parallel()
	teamsstoretest.ExerciseActivities(t, func(*testing.T) teams.Activities { return inmem.NewOutbound() })
}

// TestSessionStore holds the in-memory store's sessions to the behaviour of every session store:
// the sign-in's fast tests run over it alone, so it must behave as the table does.
func TestSessionStore(t *testing.T) {
	t.Parallel()
	signinstoretest.Exercise(t, func(*testing.T) signin.Sessions { return inmem.NewSessions() })
}

// TestPolicyStore holds the store's tool policies to the behaviour of every policy store.
func TestPolicyStore(t *testing.T) {
	t.Parallel()
	policystoretest.Exercise(t, func(*testing.T) policy.Store { return inmem.New() })
}

// TestDelegationStore holds the in-memory delegations to the contract DynamoDB's keep.
func TestDelegationStore(t *testing.T) {
	t.Parallel()
	delegationstoretest.Exercise(t, func(*testing.T) delegation.Store { return inmem.New() })
}
