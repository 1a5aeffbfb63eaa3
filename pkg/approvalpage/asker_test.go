package approvalpage

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// TestWhoAsked: the page says who asked by the name the request gave (display.requesterName),
// beside the principal only when that reads as a person's; an app client's id or an opaque
// subject is never shown as a name, but as an automated caller.
func TestWhoAsked(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ by, name, want string }{
		{"interrupt-host-local-engine", "Accounts payable", "Accounts payable, "},
		{"interrupt-host-local-engine", "", "an automated caller, "},
		{"4f1c2b7e9a0d3c5e6f7a8b9c0d", "", "an automated caller, "},
		{"0b5e8c4a-1d2f-4e6a-9b7c-3d2e1f0a9b8c", "", "an automated caller, "},
		{"alice", "Accounts payable", "Accounts payable (alice), "},
		{"alice", "", "alice, "},
		{"alice.martin@example.com", "", "alice.martin@example.com, "},
		{"", "", "the run r1, "},
		{"", "Accounts payable", "Accounts payable, "},
	} {
		o := host.Opened{
			RunID: "r1", NodeID: "n", InterruptID: "int_1", Status: interrupt.StatusPending,
			Raw:         json.RawMessage(`{"kind":"approval","key":"k","data":{"artifactId":"a","artifactType":"refund","title":"Refund","actions":["accept"]}}`),
			RequestedBy: tt.by, RequestedAt: time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC),
		}
		if tt.name != "" {
			o.Display = &interrupt.Display{RequesterName: tt.name}
		}
		if err := json.Unmarshal(o.Raw, &o.Payload); err != nil {
			t.Fatal(err)
		}
		fs, _ := facts(o, contentOf(o))
		if len(fs) == 0 || fs[0].Label != "Asked by" || !strings.HasPrefix(fs[0].Value, tt.want) {
			t.Errorf("asked by %q named %q: %+v, want Asked by %q…", tt.by, tt.name, fs, tt.want)
		}
	}
}
