// Package testclock is the clock the tests hand to what takes a Now func (the host, the keyring,
// the deliverer) and then move: one value shared by a test and the code under test, safe for
// the concurrent requests the tests send.
package testclock

import (
	"sync"
	"time"
)

// Clock tells the time it was set to.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// New returns a clock at t.
func New(t time.Time) *Clock { return &Clock{now: t} }

// Now is the clock's time; pass c.Now where a Now func is taken.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
