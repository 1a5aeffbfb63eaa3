package host

import (
	"context"
	"fmt"

	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// RecordTenantEvent records an event of the tenant's own (runlog.TenantLog): what the tenant's
// people changed rather than what a run did, kept and delivered to subscriptions as a run's
// events are. One commit per event, ordered in the tenant's log as a run's are in its own.
func (h *Host) RecordTenantEvent(ctx context.Context, tenant, by, typ string, payload any) error {
	k := runlog.Key{Tenant: tenant, RunID: runlog.TenantLog}
	if !k.Valid() {
		return fmt.Errorf("host: the log of tenant %q: %w", tenant, runlog.ErrInvalidKey)
	}
	ev, err := runlog.NewEvent(typ, "", "", payload)
	if err != nil {
		return err
	}
	st, err := h.load(ctx, k)
	if err != nil {
		return err
	}
	_, err = commit(ctx, h, k, st, by, func(*runlog.State) (decision[recorded], error) {
		return decision[recorded]{events: []runlog.Event{ev}}, nil
	})
	return err
}

// recorded is what a commit of the tenant's log answers: its seq.
type recorded struct{ seq int64 }

func (r recorded) atSeq(seq int64) recorded { r.seq = seq; return r }
