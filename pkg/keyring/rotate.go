package keyring

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/interrupthost/interrupthost/pkg/token"
)

// kidLayout names each kid after the moment it was made.
const kidLayout = "k20060102t150405"

// Next is the keyring that follows current: a new active kid, every kid that stopped being
// active within retain (and the legacy kid, which an operator retires by hand), and nothing
// else. When each kid stopped being active is recorded on the keyring itself ("retired", RFC
// 3339), whatever the kid is called: a kid found without a record (the previous active one, or
// any kid an operator added by hand) is recorded as retired now, so it verifies for retain more
// and no outstanding token signed under it is orphaned. A current value that is not a keyring
// starts an empty one.
func Next(current []byte, now time.Time, retain time.Duration) ([]byte, error) {
	var v struct {
		Keys    map[string]string `json:"keys"`
		Retired map[string]string `json:"retired"`
	}
	if json.Unmarshal(current, &v) != nil || v.Keys == nil {
		v.Keys = map[string]string{}
	}
	now = now.UTC()
	kid := now.Format(kidLayout)
	if _, taken := v.Keys[kid]; taken {
		return nil, fmt.Errorf("keyring: kid %s exists; rotate again in a second", kid)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	keys := map[string]string{kid: base64.StdEncoding.EncodeToString(key)}
	retired := map[string]string{}
	for k, val := range v.Keys {
		if k == token.LegacyKid {
			keys[k] = val
			continue
		}
		at, err := time.Parse(time.RFC3339, v.Retired[k])
		if err != nil {
			at = now
		}
		if now.Sub(at) <= retain {
			keys[k], retired[k] = val, at.UTC().Format(time.RFC3339)
		}
	}
	return json.Marshal(map[string]any{"active": kid, "keys": keys, "retired": retired})
}
