package inmem

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/interrupthost/interrupthost/pkg/delegation"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// Delegation answers principal's delegation.
func (l *Store) Delegation(_ context.Context, tenant, principal string) (delegation.Delegation, error) {
	if !runlog.ValidID(tenant) {
		return delegation.Delegation{}, runlog.ErrInvalidKey
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.delegations[[2]string{tenant, principal}]
	if !ok {
		return delegation.Delegation{}, delegation.ErrNotFound
	}
	return decodeDelegation(tenant, b)
}

// PutDelegation writes d if its principal's delegation is still at d.Version-1.
func (l *Store) PutDelegation(_ context.Context, d delegation.Delegation, _ delegation.Delegation) error {
	if !runlog.ValidID(d.Tenant) {
		return runlog.ErrInvalidKey
	}
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	key := [2]string{d.Tenant, d.Principal}
	var current int64
	if old, ok := l.delegations[key]; ok {
		cur, err := decodeDelegation(d.Tenant, old)
		if err != nil {
			return err
		}
		current = cur.Version
	}
	if d.Version != current+1 {
		return delegation.ErrConflict
	}
	l.delegations[key] = b
	return nil
}

// HeldBy answers the delegations not ended whose delegate is delegate, by principal.
func (l *Store) HeldBy(ctx context.Context, tenant, delegate string) ([]delegation.Delegation, error) {
	all, err := l.Delegations(ctx, tenant)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(d delegation.Delegation) bool { return d.Delegate != delegate || !d.EndedAt.IsZero() }), nil
}

// Delegations answers the tenant's delegations, by principal.
func (l *Store) Delegations(_ context.Context, tenant string) ([]delegation.Delegation, error) {
	if !runlog.ValidID(tenant) {
		return nil, runlog.ErrInvalidKey
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	out := []delegation.Delegation{}
	for key, b := range l.delegations {
		if key[0] != tenant {
			continue
		}
		d, err := decodeDelegation(tenant, b)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b delegation.Delegation) int { return strings.Compare(a.Principal, b.Principal) })
	return out, nil
}

func decodeDelegation(tenant string, b []byte) (delegation.Delegation, error) {
	var d delegation.Delegation
	err := json.Unmarshal(b, &d)
	d.Tenant = tenant
	return d, err
}
