package app_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/retry"

	"github.com/interrupthost/interrupthost/pkg/app"
)

// TestRetryerHasNoQuota: however many calls of one process have failed, the functions' retryer
// still retries the next (the SDK's default empties its process-wide bucket and then fails every
// call of the sandbox without sending it), and it retries each call at most RetryAttempts times
// with backoffs within RetryMaxBackoff.
func TestRetryerHasNoQuota(t *testing.T) {
	ctx := context.Background()
	failure := errors.New("a 5xx")
	exhausted := func(r interface {
		GetRetryToken(context.Context, error) (func(error) error, error)
	}) int {
		for i := range 10_000 {
			if _, err := r.GetRetryToken(ctx, failure); err != nil {
				return i
			}
		}
		return -1
	}
	if n := exhausted(retry.NewStandard()); n < 0 {
		t.Fatalf("the SDK's default retryer never ran out: the test shows nothing")
	} else {
		t.Logf("the SDK's default retryer refuses retries after %d failures", n)
	}
	r := app.Retryer()
	if n := exhausted(r); n >= 0 {
		t.Errorf("the functions' retryer refused a retry after %d failures", n)
	}
	if r.MaxAttempts() != app.RetryAttempts {
		t.Errorf("%d attempts, want %d", r.MaxAttempts(), app.RetryAttempts)
	}
	for attempt := 1; attempt < app.RetryAttempts; attempt++ {
		if d, err := r.RetryDelay(attempt, failure); err != nil || d > app.RetryMaxBackoff {
			t.Errorf("attempt %d: backoff %s %v, want at most %s", attempt, d, err, app.RetryMaxBackoff)
		}
	}
}
