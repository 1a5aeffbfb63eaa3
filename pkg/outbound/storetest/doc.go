// Package storetest holds every store of outbound deliveries to one behaviour: the contract of
// outbound.Store (subscriptions and their limit, cursors, attempts, the retry index, the keys it
// refuses, and deliverers racing over it), written once as cases that any implementation must
// pass.
//
// The deliverer is tested over the in-memory store alone, so its tests can take the in-memory
// store's word only if every other store behaves as it does. Each store's own package therefore
// runs this suite from its tests, as riverqueue/river's drivers run its driver test suite
// (riverdrivertest): pkg/inmem over inmem.NewOutbound, pkg/dynamo over a fresh DynamoDB table
// of the local stack. A new store passes the same cases before a deliverer may run on it, and a
// case added here holds every store at once.
//
// The open function given to Exercise must return an empty store each time it is called: the
// cases run in parallel, each over a store of its own, and assume nothing written before them.
package storetest
