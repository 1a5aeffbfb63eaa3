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
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/runlog"
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

// ExerciseActivities runs the contract of the activities posted (teams.Activities) on stores
// open makes, an empty one each call: what is put reads back under its own key only, a second
// put replaces it, an expired one reads as none, and a key that names no one interrupt is
// runlog.ErrInvalidKey.
func ExerciseActivities(t *testing.T, open func(t *testing.T) teams.Activities) {
	ctx := context.Background()
	k := outbound.AskedKey{Tenant: "acme", Subscription: "sub_a", RunID: "run-1", InterruptID: "int_1"}
	t.Run("put, read back, replace", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		if _, ok, err := st.TeamsActivity(ctx, k); ok || err != nil {
			t.Fatalf("none put: %v %v", ok, err)
		}
		p := teams.Posted{ActivityID: "1:abc", Review: "https://host.example/approve/run-1/int_1"}
		if err := st.PutTeamsActivity(ctx, k, p, time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if got, ok, err := st.TeamsActivity(ctx, k); !ok || err != nil || got != p {
			t.Fatalf("read %+v %v %v, want %+v", got, ok, err, p)
		}
		for _, other := range []outbound.AskedKey{
			{Tenant: "globex", Subscription: "sub_a", RunID: "run-1", InterruptID: "int_1"},
			{Tenant: "acme", Subscription: "sub_b", RunID: "run-1", InterruptID: "int_1"},
			{Tenant: "acme", Subscription: "sub_a", RunID: "run-2", InterruptID: "int_1"},
			{Tenant: "acme", Subscription: "sub_a", RunID: "run-1", InterruptID: "int_2"},
		} {
			if _, ok, err := st.TeamsActivity(ctx, other); ok || err != nil {
				t.Errorf("%+v reads %v %v", other, ok, err)
			}
		}
		q := teams.Posted{ActivityID: "1:def"}
		if err := st.PutTeamsActivity(ctx, k, q, time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if got, ok, err := st.TeamsActivity(ctx, k); !ok || err != nil || got != q {
			t.Fatalf("replaced: read %+v %v %v, want %+v", got, ok, err, q)
		}
	})
	t.Run("expired", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		if err := st.PutTeamsActivity(ctx, k, teams.Posted{ActivityID: "1:abc"}, time.Now().Add(-time.Second)); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := st.TeamsActivity(ctx, k); ok || err != nil {
			t.Errorf("an expired activity reads %v %v", ok, err)
		}
	})
	t.Run("keys that name no interrupt", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		for _, bad := range []outbound.AskedKey{
			{Tenant: "", Subscription: "sub_a", RunID: "run-1", InterruptID: "int_1"},
			{Tenant: "acme", Subscription: "sub#a", RunID: "run-1", InterruptID: "int_1"},
			{Tenant: "acme", Subscription: "sub_a", RunID: "run#1", InterruptID: "int_1"},
			{Tenant: "acme", Subscription: "sub_a", RunID: "run-1", InterruptID: ""},
		} {
			if err := st.PutTeamsActivity(ctx, bad, teams.Posted{ActivityID: "x"}, time.Now().Add(time.Hour)); !errors.Is(err, runlog.ErrInvalidKey) {
				t.Errorf("put %+v: %v", bad, err)
			}
			if _, _, err := st.TeamsActivity(ctx, bad); !errors.Is(err, runlog.ErrInvalidKey) {
				t.Errorf("read %+v: %v", bad, err)
			}
		}
	})
}
