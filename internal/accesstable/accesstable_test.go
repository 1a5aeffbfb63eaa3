package accesstable_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/interrupthost/interrupthost/internal/accesstable"
	"github.com/interrupthost/interrupthost/internal/gentemplate"
	"github.com/interrupthost/interrupthost/internal/samtemplate"
	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/apigw/routes"
)

// TestTheTableIsPrinted: docs/operations.md prints the table of who may do what as the code
// declares it, so the guide cannot say an operation takes a credential the code refuses, or
// the other way round.
func TestTheTableIsPrinted(t *testing.T) {
	p, err := samtemplate.Find(".")
	if err != nil {
		t.Fatal(err)
	}
	have, want, err := accesstable.Document(filepath.Dir(p))
	if err != nil {
		t.Fatal(err)
	}
	if diff := gentemplate.FirstDifferenceIn(accesstable.DocPath, "pkg/apigw's and pkg/mcp's tables", have, want); diff != "" {
		t.Errorf("%s does not print the table of who may do what (%s): run go run ./internal/cmd/gentemplate", accesstable.DocPath, diff)
	}
}

// TestEveryOperationNamesItsCredential: an operation takes a JWT's scopes, or names the proof
// its function checks itself; one with neither would be open by omission, and every row of the
// table names at least one credential.
func TestEveryOperationNamesItsCredential(t *testing.T) {
	for _, o := range routes.Operations() {
		if len(o.Scopes) == 0 && o.Proof == apigw.ProofJWT {
			t.Errorf("%s: no scope and no proof", o.Route)
		}
		if len(o.Scopes) > 0 && o.Proof != apigw.ProofJWT && o.Proof != apigw.ProofReceipt {
			t.Errorf("%s: scopes beside proof %q, which its function checks instead", o.Route, o.Proof)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(accesstable.Markdown()), "\n")[2:] {
		cells := strings.Split(strings.Trim(line, "|"), "|")
		granted := 0
		for _, c := range cells[1:] {
			if strings.TrimSpace(c) != "" {
				granted++
			}
		}
		if granted == 0 {
			t.Errorf("%s: no credential may do it", cells[0])
		}
	}
}
