// Package storetest holds every teams.Store to one behaviour: pkg/inmem's and pkg/dynamo's
// tests run Exercise, so the in-memory store the fast tests use answers as DynamoDB does.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/pkg/channel/teams"
)

// App ids of the suite's bots.
const (
	app1 = "00000000-0000-4000-8000-000000000001"
	app2 = "00000000-0000-4000-8000-000000000002"
	app9 = "00000000-0000-4000-8000-000000000009"
)

// Exercise runs the contract on stores open makes, an empty one each call.
func Exercise(t *testing.T, open func(t *testing.T) teams.Store) {
	ctx := context.Background()
	t0 := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	bot := func(tenant, appID string) teams.Bot {
		return teams.Bot{Tenant: tenant, AppID: appID, EntraTenant: "11111111-2222-4333-8444-555555555555", UpdatedAt: t0}
	}
	t.Run("put, read back, replace, delete", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		a := bot("acme", app1)
		if created, err := st.PutTeamsBot(ctx, a); err != nil || !created {
			t.Fatalf("put: created %v, %v", created, err)
		}
		if got, err := st.TeamsBot(ctx, "acme"); err != nil || got != a {
			t.Fatalf("read %+v %v, want %+v", got, err, a)
		}
		if got, err := st.TeamsTenants(ctx, app1); err != nil || !slices.Equal(got, []string{"acme"}) {
			t.Fatalf("tenants of the app: %q %v", got, err)
		}
		b := bot("acme", app2)
		b.EntraTenant = "99999999-2222-4333-8444-555555555555"
		if created, err := st.PutTeamsBot(ctx, b); err != nil || created {
			t.Fatalf("replace: created %v, %v", created, err)
		}
		if got, err := st.TeamsBot(ctx, "acme"); err != nil || got != b {
			t.Fatalf("read after replace %+v %v, want %+v", got, err, b)
		}
		if got, err := st.TeamsTenants(ctx, app1); err != nil || len(got) != 0 {
			t.Errorf("the replaced app lists %q %v, want none", got, err)
		}
		if err := st.DeleteTeamsBot(ctx, "acme"); err != nil {
			t.Fatal(err)
		}
		if _, err := st.TeamsBot(ctx, "acme"); !errors.Is(err, teams.ErrNotFound) {
			t.Errorf("read after delete: %v", err)
		}
		if got, err := st.TeamsTenants(ctx, app2); err != nil || len(got) != 0 {
			t.Errorf("the deleted bot's app lists %q %v", got, err)
		}
		if err := st.DeleteTeamsBot(ctx, "acme"); !errors.Is(err, teams.ErrNotFound) {
			t.Errorf("delete again: %v, want ErrNotFound", err)
		}
	})
	t.Run("an app id is no one's: every tenant that registered it is listed", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		for _, tenant := range []string{"evilcorp", "acme"} {
			if _, err := st.PutTeamsBot(ctx, bot(tenant, app1)); err != nil {
				t.Fatalf("%s: %v", tenant, err)
			}
		}
		if got, err := st.TeamsTenants(ctx, app1); err != nil || !slices.Equal(got, []string{"acme", "evilcorp"}) {
			t.Errorf("tenants of the app: %q %v", got, err)
		}
		if got, _ := st.TeamsTenants(ctx, app2); len(got) != 0 {
			t.Errorf("another app lists %q", got)
		}
		if _, err := st.PutTeamsBot(ctx, bot("evilcorp", app9)); err != nil {
			t.Fatal(err)
		}
		if got, _ := st.TeamsTenants(ctx, app1); !slices.Equal(got, []string{"acme"}) {
			t.Errorf("after evilcorp moved: %q", got)
		}
		if err := st.DeleteTeamsBot(ctx, "acme"); err != nil {
			t.Fatal(err)
		}
		if got, _ := st.TeamsTenants(ctx, app1); len(got) != 0 {
			t.Errorf("after acme's bot went: %q", got)
		}
	})
	t.Run("concurrent registrations of one app: each tenant listed", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		const n = 6
		errs := make([]error, n)
		var want []string
		var wg sync.WaitGroup
		for i := range n {
			want = append(want, fmt.Sprintf("tenant%d", i))
			wg.Go(func() { _, errs[i] = st.PutTeamsBot(ctx, bot(fmt.Sprintf("tenant%d", i), app1)) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		if got, err := st.TeamsTenants(ctx, app1); err != nil || !slices.Equal(got, want) {
			t.Errorf("tenants %q %v, want %q", got, err, want)
		}
	})
}
