// Package storetest holds every slackapp.Store to one behaviour: pkg/inmem's and pkg/dynamo's
// tests run Exercise, so the in-memory store the fast tests use answers as DynamoDB does.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/pkg/slackapp"
)

// Exercise runs the contract on stores open makes, an empty one each call.
func Exercise(t *testing.T, open func(t *testing.T) slackapp.Store) {
	ctx := context.Background()
	t0 := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	app := func(tenant, appID, teamID string) slackapp.App {
		return slackapp.App{Tenant: tenant, AppID: appID, TeamID: teamID, UpdatedAt: t0}
	}
	t.Run("put, read back, replace, delete", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		a := app("acme", "A0001", "T0001")
		a.BotToken = true
		if created, err := st.PutSlackApp(ctx, a); err != nil || !created {
			t.Fatalf("put: created %v, %v", created, err)
		}
		if got, err := st.SlackApp(ctx, "acme"); err != nil || got != a {
			t.Fatalf("read %+v %v, want %+v", got, err, a)
		}
		if got, err := st.SlackTenant(ctx, "A0001", "T0001"); err != nil || got != "acme" {
			t.Fatalf("tenant of the pair: %q %v", got, err)
		}
		b := app("acme", "A0002", "T0001")
		if created, err := st.PutSlackApp(ctx, b); err != nil || created {
			t.Fatalf("replace: created %v, %v", created, err)
		}
		if got, err := st.SlackApp(ctx, "acme"); err != nil || got != b {
			t.Fatalf("read after replace %+v %v, want %+v (a bot token left out is gone)", got, err, b)
		}
		if _, err := st.SlackTenant(ctx, "A0001", "T0001"); !errors.Is(err, slackapp.ErrNotFound) {
			t.Errorf("the replaced pair: %v, want ErrNotFound", err)
		}
		if err := st.DeleteSlackApp(ctx, "acme"); err != nil {
			t.Fatal(err)
		}
		if _, err := st.SlackApp(ctx, "acme"); !errors.Is(err, slackapp.ErrNotFound) {
			t.Errorf("read after delete: %v", err)
		}
		if _, err := st.SlackTenant(ctx, "A0002", "T0001"); !errors.Is(err, slackapp.ErrNotFound) {
			t.Errorf("the deleted app's pair: %v", err)
		}
		if err := st.DeleteSlackApp(ctx, "acme"); !errors.Is(err, slackapp.ErrNotFound) {
			t.Errorf("delete again: %v, want ErrNotFound", err)
		}
	})
	t.Run("one pair, one tenant", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		if _, err := st.PutSlackApp(ctx, app("acme", "A0001", "T0001")); err != nil {
			t.Fatal(err)
		}
		if _, err := st.PutSlackApp(ctx, app("evilcorp", "A0001", "T0001")); !errors.Is(err, slackapp.ErrTaken) {
			t.Fatalf("another tenant's pair: %v, want ErrTaken", err)
		}
		if _, err := st.SlackApp(ctx, "evilcorp"); !errors.Is(err, slackapp.ErrNotFound) {
			t.Errorf("the refused put wrote the tenant's app: %v", err)
		}
		if got, _ := st.SlackTenant(ctx, "A0001", "T0001"); got != "acme" {
			t.Errorf("the pair is %q's now", got)
		}
		// The same app in another workspace is another pair.
		if _, err := st.PutSlackApp(ctx, app("evilcorp", "A0001", "T0002")); err != nil {
			t.Errorf("the app in another workspace: %v", err)
		}
		// A pair given up is anyone's.
		if _, err := st.PutSlackApp(ctx, app("acme", "A0009", "T0001")); err != nil {
			t.Fatal(err)
		}
		if _, err := st.PutSlackApp(ctx, app("evilcorp", "A0001", "T0001")); err != nil {
			t.Errorf("a pair its tenant gave up: %v", err)
		}
	})
	t.Run("concurrent claims of one pair: one tenant wins", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		const n = 6
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = st.PutSlackApp(ctx, app(fmt.Sprintf("tenant%d", i), "A0001", "T0001"))
			}()
		}
		wg.Wait()
		won := 0
		for i, err := range errs {
			switch {
			case err == nil:
				won++
				if got, _ := st.SlackTenant(ctx, "A0001", "T0001"); got != fmt.Sprintf("tenant%d", i) {
					t.Errorf("tenant%d won, the pair is %q's", i, got)
				}
			case !errors.Is(err, slackapp.ErrTaken):
				t.Errorf("tenant%d: %v", i, err)
			}
		}
		if won != 1 {
			t.Errorf("%d tenants hold the pair", won)
		}
	})
}
