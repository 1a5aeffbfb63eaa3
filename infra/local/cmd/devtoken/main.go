// Command devtoken prints a JWT that the local gateway accepts, signed with the local stack's
// development key and issued by the gateway's issuer (-gateway, by default GATEWAY_URL's, which
// `stack exec` sets, else make run's):
//
//	go run ./infra/local/cmd/devtoken -sub alice -scopes "approvals:respond runs:read" \
//	    -tenant acme -groups finance,ops -roles manager
//
// or one shaped as a Cognito access token, for a stack deployed with a PrincipalClaim other than
// sub: its app client in client_id instead of aud (the local engine client, which the local
// stack's JwtAudience lists), and the readable name beside the sub:
//
//	go run ./infra/local/cmd/devtoken -sub 3f7c1e0a -username billing-agent \
//	    -client-id interrupt-host-local-engine -tenant acme -scopes "interrupts:write runs:read"
package main

import (
	"cmp"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/interrupthost/interrupthost/internal/devjwt"
	"github.com/interrupthost/interrupthost/internal/samtemplate"
)

func main() {
	var t devjwt.Token
	var gateway, scopes, groups, roles string
	flag.StringVar(&gateway, "gateway", cmp.Or(os.Getenv("GATEWAY_URL"), devjwt.GatewayURL), "URL of the gateway that is to accept the token (its issuer is URL"+devjwt.IssuerPath+")")
	flag.StringVar(&t.Subject, "sub", "", "subject (the principal unless the stack's PrincipalClaim names another claim), required")
	flag.StringVar(&t.Username, "username", "", "username claim (the principal with PrincipalClaim=username)")
	flag.StringVar(&t.Email, "email", "", "email claim (the principal with PrincipalClaim=email)")
	flag.StringVar(&t.ClientID, "client-id", "", "app client id: a Cognito-shaped access token, client_id instead of aud (e.g. "+devjwt.EngineClientID+")")
	flag.StringVar(&t.Tenant, "tenant", "", "tenant claim")
	flag.StringVar(&scopes, "scopes", "", "space-separated scopes, e.g. \"interrupts:write runs:read\"")
	flag.StringVar(&groups, "groups", "", "comma-separated groups claim")
	flag.StringVar(&roles, "roles", "", "comma-separated roles claim")
	flag.DurationVar(&t.TTL, "ttl", time.Hour, "lifetime (a negative one mints an expired token)")
	flag.Parse()
	if t.Subject == "" {
		fmt.Fprintln(os.Stderr, "devtoken: -sub is required")
		flag.Usage()
		os.Exit(2)
	}
	t.Issuer = devjwt.IssuerAt(gateway)
	t.Scopes = strings.Fields(scopes)
	t.Groups = split(groups)
	t.Roles = split(roles)
	if err := run(t); err != nil {
		fmt.Fprintln(os.Stderr, "devtoken:", err)
		os.Exit(1)
	}
}

func run(t devjwt.Token) error {
	root, err := checkout()
	if err != nil {
		return err
	}
	key, err := devjwt.LoadKey(root)
	if err != nil {
		return err
	}
	token, err := devjwt.Sign(key, t.Claims(time.Now()))
	if err != nil {
		return err
	}
	fmt.Println(token)
	return nil
}

// checkout is the checkout whose development key signs: the one the working directory is in,
// else the one this command's source is in (go run from anywhere, naming its package by path).
func checkout() (string, error) {
	tmpl, err := samtemplate.Find(".")
	if err == nil {
		return filepath.Dir(tmpl), nil
	}
	if _, src, _, ok := runtime.Caller(0); ok && filepath.IsAbs(src) {
		if tmpl, serr := samtemplate.Find(filepath.Dir(src)); serr == nil {
			return filepath.Dir(tmpl), nil
		}
	}
	return "", fmt.Errorf("%w: run it inside the checkout, or as go run <checkout>/infra/local/cmd/devtoken", err)
}

func split(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
