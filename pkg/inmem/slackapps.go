package inmem

import (
	"context"

	"github.com/interrupthost/interrupthost/pkg/slackapp"
)

// PutSlackApp implements slackapp.Store: a pair left naming a tenant whose app is another is
// taken over, as the table's is.
func (s *Store) PutSlackApp(_ context.Context, a slackapp.App) (bool, error) {
	if err := checkTenant(a.Tenant); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.slackApps == nil {
		s.slackApps, s.slackPairs = map[string]slackapp.App{}, map[[2]string]string{}
	}
	pair := [2]string{a.AppID, a.TeamID}
	if owner, ok := s.slackPairs[pair]; ok && owner != a.Tenant {
		if held, ok := s.slackApps[owner]; ok && held.AppID == a.AppID && held.TeamID == a.TeamID {
			return false, slackapp.ErrTaken
		}
	}
	s.slackPairs[pair] = a.Tenant
	old, had := s.slackApps[a.Tenant]
	if oldPair := [2]string{old.AppID, old.TeamID}; had && oldPair != pair && s.slackPairs[oldPair] == a.Tenant {
		delete(s.slackPairs, oldPair)
	}
	s.slackApps[a.Tenant] = a
	return !had, nil
}

// SlackApp implements slackapp.Store.
func (s *Store) SlackApp(_ context.Context, tenant string) (slackapp.App, error) {
	if err := checkTenant(tenant); err != nil {
		return slackapp.App{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.slackApps[tenant]
	if !ok {
		return a, slackapp.ErrNotFound
	}
	return a, nil
}

// DeleteSlackApp implements slackapp.Store.
func (s *Store) DeleteSlackApp(_ context.Context, tenant string) error {
	if err := checkTenant(tenant); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.slackApps[tenant]
	if !ok {
		return slackapp.ErrNotFound
	}
	delete(s.slackApps, tenant)
	if pair := [2]string{a.AppID, a.TeamID}; s.slackPairs[pair] == tenant {
		delete(s.slackPairs, pair)
	}
	return nil
}

// SlackTenant implements slackapp.Store.
func (s *Store) SlackTenant(_ context.Context, appID, teamID string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.slackPairs[[2]string{appID, teamID}]
	if !ok {
		return "", slackapp.ErrNotFound
	}
	return t, nil
}
