// Package storetest holds every slack.Store to one behaviour: pkg/inmem's and pkg/dynamo's
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

	"github.com/interrupthost/interrupthost/pkg/channel/slack"
)

// Exercise runs the contract on stores open makes, an empty one each call.
func Exercise(t *testing.T, open func(t *testing.T) slack.Store) {
	ctx := context.Background()
	t0 := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	app := func(tenant, appID, teamID string) slack.App {
		return slack.App{Tenant: tenant, AppID: appID, TeamID: teamID, UpdatedAt: t0}
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
		if got, err := st.SlackTenants(ctx, "A0001", "T0001"); err != nil || !slices.Equal(got, []string{"acme"}) {
			t.Fatalf("tenants of the pair: %q %v", got, err)
		}
		b := app("acme", "A0002", "T0001")
		if created, err := st.PutSlackApp(ctx, b); err != nil || created {
			t.Fatalf("replace: created %v, %v", created, err)
		}
		if got, err := st.SlackApp(ctx, "acme"); err != nil || got != b {
			t.Fatalf("read after replace %+v %v, want %+v (a bot token left out is gone)", got, err, b)
		}
		if got, err := st.SlackTenants(ctx, "A0001", "T0001"); err != nil || len(got) != 0 {
			t.Errorf("the replaced pair lists %q %v, want none", got, err)
		}
		if err := st.DeleteSlackApp(ctx, "acme"); err != nil {
			t.Fatal(err)
		}
		if _, err := st.SlackApp(ctx, "acme"); !errors.Is(err, slack.ErrNotFound) {
			t.Errorf("read after delete: %v", err)
		}
		if got, err := st.SlackTenants(ctx, "A0002", "T0001"); err != nil || len(got) != 0 {
			t.Errorf("the deleted app's pair lists %q %v", got, err)
		}
		if err := st.DeleteSlackApp(ctx, "acme"); !errors.Is(err, slack.ErrNotFound) {
			t.Errorf("delete again: %v, want ErrNotFound", err)
		}
	})
	t.Run("a pair is no one's: every tenant that registered it is listed", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		for _, tenant := range []string{"evilcorp", "acme"} {
			if _, err := st.PutSlackApp(ctx, app(tenant, "A0001", "T0001")); err != nil {
				t.Fatalf("%s: %v", tenant, err)
			}
		}
		if got, err := st.SlackTenants(ctx, "A0001", "T0001"); err != nil || !slices.Equal(got, []string{"acme", "evilcorp"}) {
			t.Errorf("tenants of the pair: %q %v", got, err)
		}
		// The same app in another workspace is another pair.
		if got, _ := st.SlackTenants(ctx, "A0001", "T0002"); len(got) != 0 {
			t.Errorf("another workspace lists %q", got)
		}
		// A tenant that gives the pair up leaves the others listed.
		if _, err := st.PutSlackApp(ctx, app("evilcorp", "A0009", "T0001")); err != nil {
			t.Fatal(err)
		}
		if got, _ := st.SlackTenants(ctx, "A0001", "T0001"); !slices.Equal(got, []string{"acme"}) {
			t.Errorf("after evilcorp moved: %q", got)
		}
		if err := st.DeleteSlackApp(ctx, "acme"); err != nil {
			t.Fatal(err)
		}
		if got, _ := st.SlackTenants(ctx, "A0001", "T0001"); len(got) != 0 {
			t.Errorf("after acme's app went: %q", got)
		}
	})
	t.Run("concurrent registrations of one pair: each tenant listed", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		const n = 6
		errs := make([]error, n)
		var want []string
		var wg sync.WaitGroup
		for i := range n {
			want = append(want, fmt.Sprintf("tenant%d", i))
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = st.PutSlackApp(ctx, app(fmt.Sprintf("tenant%d", i), "A0001", "T0001"))
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		if got, err := st.SlackTenants(ctx, "A0001", "T0001"); err != nil || !slices.Equal(got, want) {
			t.Errorf("tenants %q %v, want %q", got, err, want)
		}
	})
}
