package inmem

import (
	"context"
	"errors"

	"github.com/interrupthost/interrupthost/pkg/policy"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// PutPolicy appends p to its tool's record, unless its version is there.
func (l *Store) PutPolicy(_ context.Context, tenant string, p policy.Policy) error {
	if !runlog.ValidID(tenant) {
		return runlog.ErrInvalidKey
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	key := [2]string{tenant, p.Tool}
	if len(l.policies[key]) >= p.Version {
		return policy.ErrVersionTaken
	}
	if len(l.policies[key]) != p.Version-1 {
		return errors.New("inmem: a policy's versions follow one another")
	}
	p.SetAt = p.SetAt.UTC()
	l.policies[key] = append(l.policies[key], p)
	return nil
}

// Policy answers the latest version of tool's policy.
func (l *Store) Policy(_ context.Context, tenant, tool string) (policy.Policy, error) {
	if !runlog.ValidID(tenant) {
		return policy.Policy{}, runlog.ErrInvalidKey
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	versions := l.policies[[2]string{tenant, tool}]
	if len(versions) == 0 {
		return policy.Policy{}, policy.ErrNotFound
	}
	return versions[len(versions)-1], nil
}

// Policies answers the latest version of each tool's policy in force, by tool.
func (l *Store) Policies(_ context.Context, tenant string) ([]policy.Policy, error) {
	if !runlog.ValidID(tenant) {
		return nil, runlog.ErrInvalidKey
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	out := []policy.Policy{}
	for key, versions := range l.policies {
		if latest := versions[len(versions)-1]; key[0] == tenant && !latest.Deleted {
			out = append(out, latest)
		}
	}
	return policy.Sorted(out), nil
}
