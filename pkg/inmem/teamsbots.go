package inmem

import (
	"context"
	"maps"
	"slices"

	"github.com/interrupthost/interrupthost/pkg/channel/teams"
)

// PutTeamsBot implements teams.Store.
func (s *Store) PutTeamsBot(_ context.Context, b teams.Bot) (bool, error) {
	if err := checkTenant(b.Tenant); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.teamsBots == nil {
		s.teamsBots, s.teamsApps = map[string]teams.Bot{}, map[string]map[string]bool{}
	}
	if s.teamsApps[b.AppID] == nil {
		s.teamsApps[b.AppID] = map[string]bool{}
	}
	s.teamsApps[b.AppID][b.Tenant] = true
	old, had := s.teamsBots[b.Tenant]
	if had && old.AppID != b.AppID {
		s.releaseTeams(old.AppID, b.Tenant)
	}
	s.teamsBots[b.Tenant] = b
	return !had, nil
}

// releaseTeams takes the tenant off the app id's list.
func (s *Store) releaseTeams(appID, tenant string) {
	delete(s.teamsApps[appID], tenant)
	if len(s.teamsApps[appID]) == 0 {
		delete(s.teamsApps, appID)
	}
}

// TeamsBot implements teams.Store.
func (s *Store) TeamsBot(_ context.Context, tenant string) (teams.Bot, error) {
	if err := checkTenant(tenant); err != nil {
		return teams.Bot{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.teamsBots[tenant]
	if !ok {
		return b, teams.ErrNotFound
	}
	return b, nil
}

// DeleteTeamsBot implements teams.Store.
func (s *Store) DeleteTeamsBot(_ context.Context, tenant string) error {
	if err := checkTenant(tenant); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.teamsBots[tenant]
	if !ok {
		return teams.ErrNotFound
	}
	delete(s.teamsBots, tenant)
	s.releaseTeams(b.AppID, tenant)
	return nil
}

// TeamsTenants implements teams.Store.
func (s *Store) TeamsTenants(_ context.Context, appID string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.teamsApps[appID])), nil
}
