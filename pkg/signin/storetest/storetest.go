// Package storetest holds every signin.Sessions to one behaviour: each store's own tests run
// Exercise (pkg/inmem's and pkg/dynamo's), as pkg/contacts/storetest does for contacts, so the
// in-memory store the fast tests of the sign-in use answers as DynamoDB does.
package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/signin"
)

// Exercise runs the contract on stores open makes, an empty one each call.
func Exercise(t *testing.T, open func(t *testing.T) signin.Sessions) {
	ctx := context.Background()
	// Expiries in the future, to the millisecond: the table's TTL deletes none during the test.
	soon := time.Now().Add(time.Hour).Truncate(time.Millisecond)
	const id, other = "3QZP6X2C4RKTM7NBV5YHJWDFLE", "7KD2MWQX4ZPRT6BNC3YVHJ5LEA"
	t.Run("put, read back, replace, delete", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		if err := st.PutSession(ctx, "acme", id, soon); err != nil {
			t.Fatal(err)
		}
		if got, found, err := st.Session(ctx, "acme", id); err != nil || !found || !got.Equal(soon) {
			t.Fatalf("read %v %v %v, want %v", got, found, err, soon)
		}
		later := soon.Add(90*time.Minute + 7*time.Millisecond)
		if err := st.PutSession(ctx, "acme", id, later); err != nil {
			t.Fatal(err)
		}
		if got, found, err := st.Session(ctx, "acme", id); err != nil || !found || !got.Equal(later) {
			t.Fatalf("read after replace %v %v %v, want %v", got, found, err, later)
		}
		if err := st.DeleteSession(ctx, "acme", id); err != nil {
			t.Fatal(err)
		}
		if got, found, err := st.Session(ctx, "acme", id); err != nil || found {
			t.Errorf("read after delete: %v %v %v, want none", got, found, err)
		}
		if err := st.DeleteSession(ctx, "acme", id); err != nil {
			t.Errorf("delete again: %v, want nil (a repeated sign-out succeeds)", err)
		}
	})
	t.Run("never put", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		if got, found, err := st.Session(ctx, "acme", id); err != nil || found {
			t.Errorf("%v %v %v, want none", got, found, err)
		}
		if err := st.DeleteSession(ctx, "acme", id); err != nil {
			t.Errorf("delete: %v", err)
		}
	})
	t.Run("tenants and ids apart", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		if err := st.PutSession(ctx, "acme", id, soon); err != nil {
			t.Fatal(err)
		}
		if _, found, err := st.Session(ctx, "globex", id); err != nil || found {
			t.Errorf("another tenant reads it: %v %v", found, err)
		}
		if _, found, err := st.Session(ctx, "acme", other); err != nil || found {
			t.Errorf("another id reads it: %v %v", found, err)
		}
		if err := st.DeleteSession(ctx, "globex", id); err != nil {
			t.Fatal(err)
		}
		if err := st.DeleteSession(ctx, "acme", other); err != nil {
			t.Fatal(err)
		}
		if _, found, err := st.Session(ctx, "acme", id); err != nil || !found {
			t.Errorf("after another tenant's and another id's delete: %v %v", found, err)
		}
	})
	t.Run("past its expiry, answered with it or not at all", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		past := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
		if err := st.PutSession(ctx, "acme", id, past); err != nil {
			t.Fatal(err)
		}
		if got, found, err := st.Session(ctx, "acme", id); err != nil || found && !got.Equal(past) {
			t.Errorf("%v %v %v: an expired record is answered with its expiry (the caller refuses it) or not at all", got, found, err)
		}
	})
	t.Run("a key that is no session's is refused", func(t *testing.T) {
		t.Parallel()
		st := open(t)
		for _, k := range [][2]string{{"", id}, {"acme#run", id}, {"a b", id}, {"acme", ""}, {"acme", "x#session#y"}} {
			if err := st.PutSession(ctx, k[0], k[1], soon); !errors.Is(err, runlog.ErrInvalidKey) {
				t.Errorf("put %q %q: %v, want ErrInvalidKey", k[0], k[1], err)
			}
			if _, found, err := st.Session(ctx, k[0], k[1]); !errors.Is(err, runlog.ErrInvalidKey) || found {
				t.Errorf("read %q %q: %v %v, want ErrInvalidKey", k[0], k[1], found, err)
			}
			if err := st.DeleteSession(ctx, k[0], k[1]); !errors.Is(err, runlog.ErrInvalidKey) {
				t.Errorf("delete %q %q: %v, want ErrInvalidKey", k[0], k[1], err)
			}
		}
	})
}
