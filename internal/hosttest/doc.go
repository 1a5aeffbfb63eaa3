// Package hosttest holds what the host's tests share across packages: pkg/host's tests, which
// run the host over the in-memory store, and pkg/dynamo's, which run the same host on a DynamoDB
// table to measure its round trips and request units, race it against the real API and inject
// faults into its client. Helpers in a _test.go file cannot be imported by another package, so
// the fixtures both need (principals, payloads, a Stripe endpoint's events, a long run) and the
// scenarios both run against their own store are written once, here.
package hosttest
