package inmem_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/interrupthost/interrupthost/pkg/inmem"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/webhook"
)

var _ webhook.SecretStore = (*inmem.Secrets)(nil)

// TestSecrets: secrets read back as put, and secrets not there answer as Secrets Manager's do
// (webhook.SecretStore): a read, interrupt.ErrUnavailable; a delete, no error.
func TestSecrets(t *testing.T) {
	ctx := context.Background()
	s := inmem.NewSecrets()
	if err := s.Put(ctx, "we_1", []string{"whsec_a"}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, "we_1"); err != nil || !slices.Equal(got, []string{"whsec_a"}) {
		t.Errorf("Get = %v, %v", got, err)
	}
	for range 2 {
		if err := s.Delete(ctx, "we_1"); err != nil {
			t.Errorf("delete: %v", err)
		}
	}
	if got, err := s.Get(ctx, "we_1"); !errors.Is(err, interrupt.ErrUnavailable) {
		t.Errorf("a read after the delete: %v %v, want interrupt.ErrUnavailable", got, err)
	}
}
