package devjwt_test

import (
	"crypto/rand"
	"crypto/rsa"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/interrupthost/interrupthost/internal/devjwt"
)

// TestIssuerKeys: keys are found through the issuer's discovery document and JWKS, as API
// Gateway finds them; a known kid reads nothing, and unknown kids read nothing more within the
// refresh interval; an issuer that serves no discovery document has no keys.
func TestIssuerKeys(t *testing.T) {
	t.Parallel()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	var reads atomic.Int64
	var provider http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reads.Add(1)
		provider.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	provider = devjwt.NewProvider(key, srv.URL, nil)
	keys := devjwt.NewIssuerKeys(srv.Client())
	issuer := devjwt.IssuerAt(srv.URL)

	got, err := keys.Key(issuer, devjwt.KeyID)
	if err != nil || !got.Equal(&key.PublicKey) {
		t.Fatalf("key %v, %v", got, err)
	}
	if n := reads.Load(); n != 2 {
		t.Errorf("%d reads, want the discovery document and the JWKS", n)
	}
	if _, err := keys.Key(issuer, devjwt.KeyID); err != nil || reads.Load() != 2 {
		t.Errorf("a known kid read again: %v, %d reads", err, reads.Load())
	}
	for range 3 {
		if _, err := keys.Key(issuer, "made-up"); err == nil {
			t.Error("a made-up kid has a key")
		}
	}
	if n := reads.Load(); n != 2 {
		t.Errorf("%d reads after three unknown kids within the refresh interval, want none more", n)
	}
	if _, err := devjwt.NewIssuerKeys(srv.Client()).Key(srv.URL+"/elsewhere", devjwt.KeyID); err == nil {
		t.Error("keys found for an issuer that serves no discovery document")
	}
}
