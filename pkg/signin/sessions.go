package signin

import (
	"context"
	"errors"
	"time"
)

// Sessions is where the server keeps the sessions it has not ended, so that ending one takes
// effect at once: a sealed cookie alone proves only that this host made it, and stays valid to
// whoever holds it until it expires, sign-out or not. A session is one record, named by its
// tenant and id (the cookie's), holding when it expires; the cookie is a session while its
// record is there and unexpired. Package dynamo keeps them in the host's table (with its TTL
// attribute), package inmem in memory; pkg/signin/storetest holds both to this contract.
//
// Errors: tenant and id are ids (runlog.ValidID), else every method answers an error wrapping
// runlog.ErrInvalidKey and touches nothing. Otherwise an error means the store could not be
// asked (it wraps interrupt.ErrUnavailable where a retry may succeed): the session is then
// neither known live nor known ended, and the caller refuses the request without telling the
// person they are signed out.
//
//   - PutSession records the session until expires, replacing a record of the same tenant and
//     id.
//   - Session answers the expiry of the record of tenant and id, and found false (with a nil
//     error) when there is none: never put, or deleted. A record past its expiry may still be
//     answered (DynamoDB's TTL deletes an item some time after it expires, not at once), so the
//     caller compares the expiry with its clock.
//   - DeleteSession removes the record; deleting one that is not there is not an error, so a
//     sign-out repeated, or of a session that expired meanwhile, succeeds.
type Sessions interface {
	PutSession(ctx context.Context, tenant, id string, expires time.Time) error
	Session(ctx context.Context, tenant, id string) (expires time.Time, found bool, err error)
	DeleteSession(ctx context.Context, tenant, id string) error
}

// ErrNoSession is SessionFrom's answer for a request that carries no live session (no cookie,
// a forged or expired one, or one whose record the server no longer holds because its session
// was signed out): the page signs the person in. Any other error of SessionFrom is the session
// store's, and the request is refused, not signed in again.
var ErrNoSession = errors.New("signin: no live session")
