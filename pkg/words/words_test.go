package words_test

import (
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/pkg/words"
)

func TestNumber(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"12400": "12,400", "1240.5": "1,240.5", "-1234567": "-1,234,567", "999": "999", "0.25": "0.25",
		"1e9": "1e9", "": "", "12a4": "12a4", "1000000.000": "1,000,000.000",
	} {
		if got := words.Number(in); got != want {
			t.Errorf("Number(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUntil(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	for d, want := range map[time.Duration]string{
		-time.Second: "passed", 30 * time.Second: "now", time.Minute: "in 1 minute", 59 * time.Minute: "in 59 minutes",
		time.Hour: "in 1 hour", 23 * time.Hour: "in 23 hours", 47 * time.Hour: "in 47 hours", 72 * time.Hour: "in 3 days",
	} {
		if got := words.Until(now.Add(d), now); got != want {
			t.Errorf("Until(+%v) = %q, want %q", d, got, want)
		}
	}
}

func TestLabel(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"invoiceTotal": "Invoice total", "invoice_total": "Invoice total", "due-date": "Due date",
		"vatNumber": "Vat number", "émission": "Émission", "__": "__", "sku": "Sku",
	} {
		if got := words.Label(in); got != want {
			t.Errorf("Label(%q) = %q, want %q", in, got, want)
		}
	}
}
