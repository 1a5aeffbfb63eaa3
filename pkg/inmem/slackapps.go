package inmem

import (
	"context"
	"maps"
	"slices"

	"github.com/interrupthost/interrupthost/pkg/channel/slack"
)

// PutSlackApp implements slack.Store.
func (s *Store) PutSlackApp(_ context.Context, a slack.App) (bool, error) {
	if err := checkTenant(a.Tenant); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.slackApps == nil {
		s.slackApps, s.slackPairs = map[string]slack.App{}, map[[2]string]map[string]bool{}
	}
	pair := [2]string{a.AppID, a.TeamID}
	if s.slackPairs[pair] == nil {
		s.slackPairs[pair] = map[string]bool{}
	}
	s.slackPairs[pair][a.Tenant] = true
	old, had := s.slackApps[a.Tenant]
	if oldPair := [2]string{old.AppID, old.TeamID}; had && oldPair != pair {
		s.release(oldPair, a.Tenant)
	}
	s.slackApps[a.Tenant] = a
	return !had, nil
}

// release takes the tenant off the pair's list.
func (s *Store) release(pair [2]string, tenant string) {
	delete(s.slackPairs[pair], tenant)
	if len(s.slackPairs[pair]) == 0 {
		delete(s.slackPairs, pair)
	}
}

// SlackApp implements slack.Store.
func (s *Store) SlackApp(_ context.Context, tenant string) (slack.App, error) {
	if err := checkTenant(tenant); err != nil {
		return slack.App{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.slackApps[tenant]
	if !ok {
		return a, slack.ErrNotFound
	}
	return a, nil
}

// DeleteSlackApp implements slack.Store.
func (s *Store) DeleteSlackApp(_ context.Context, tenant string) error {
	if err := checkTenant(tenant); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.slackApps[tenant]
	if !ok {
		return slack.ErrNotFound
	}
	delete(s.slackApps, tenant)
	s.release([2]string{a.AppID, a.TeamID}, tenant)
	return nil
}

// SlackTenants implements slack.Store.
func (s *Store) SlackTenants(_ context.Context, appID, teamID string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.slackPairs[[2]string{appID, teamID}])), nil
}
