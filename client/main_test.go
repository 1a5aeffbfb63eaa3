package client_test

import (
	"flag"
	"os"
	"testing"
)

// TestMain leaves the examples out under -short: they run against the local stack, as the host's
// own end-to-end tests do (make test runs them under its stack; make run serves one for
// `go test ./client/...`).
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() && flag.Lookup("test.run").Value.String() == "" {
		_ = flag.Set("test.run", "^(Test|Fuzz)")
	}
	os.Exit(m.Run())
}
