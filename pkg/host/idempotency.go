package host

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// Idempotency is a request's Idempotency-Key and the fingerprint of the request (its route and
// canonical body). The host scopes the key to the run (it lives in the run's log) and to the
// caller, whom it adds to the fingerprint.
type Idempotency struct {
	Key         string
	Fingerprint string
}

// scoped is the key as the log records it, and the fingerprint with the caller in it.
func (i *Idempotency) scoped(caller string) *runlog.Idem {
	sum := sha256.Sum256([]byte(i.Fingerprint + "\n" + caller))
	return &runlog.Idem{Key: caller + "\n" + i.Key, Fingerprint: hex.EncodeToString(sum[:])}
}

// replay answers a request whose key the log has seen: the original answer for the same
// request, byte for byte, and 422 for another.
func replay(st *runlog.State, want *runlog.Idem) (decision[Resolution], bool, error) {
	rec := st.Idempotent(want.Key)
	if rec == nil {
		return decision[Resolution]{}, false, nil
	}
	if rec.Fingerprint != want.Fingerprint {
		return decision[Resolution]{}, true, interrupt.Errorf(interrupt.CodeIdempotencyReuse, "this Idempotency-Key was used for another request")
	}
	var res Resolution
	if err := json.Unmarshal(rec.Response, &res); err != nil {
		return decision[Resolution]{}, true, err
	}
	res.Replay = rec.Response
	if res.ResumeValue == nil { // recorded without the value its commit holds
		res.ResumeValue = rec.Value
		res.Replay = appendMember(rec.Response, "resumeValue", rec.Value)
	}
	return decision[Resolution]{answer: res}, true, nil
}

// idemResponse is an answer as its idempotency record keeps it: without the resume value, which
// the commit holds already, so that a large value is stored once.
func idemResponse(answer any) (json.RawMessage, error) {
	if res, ok := answer.(Resolution); ok {
		res.ResumeValue = nil
		answer = res
	}
	return runlog.Marshal(answer)
}
