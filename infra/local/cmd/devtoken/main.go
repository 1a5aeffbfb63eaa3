// Command devtoken prints a JWT that the local gateway accepts, signed with the local stack's
// development key and issued by the gateway's issuer (-gateway, by default GATEWAY_URL's, which
// `stack exec` sets, else make run's):
//
//	go run ./infra/local/cmd/devtoken -sub alice -scopes "approvals:respond runs:read" \
//	    -tenant acme -groups finance,ops -roles manager
package main

import (
	"cmp"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/interrupthost/interrupthost/internal/devjwt"
	"github.com/interrupthost/interrupthost/internal/samtemplate"
)

func main() {
	var t devjwt.Token
	var gateway, scopes, groups, roles string
	flag.StringVar(&gateway, "gateway", cmp.Or(os.Getenv("GATEWAY_URL"), devjwt.GatewayURL), "URL of the gateway that is to accept the token (its issuer is URL"+devjwt.IssuerPath+")")
	flag.StringVar(&t.Subject, "sub", "", "subject (the principal), required")
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
	tmpl, err := samtemplate.Find(".")
	if err != nil {
		return err
	}
	key, err := devjwt.LoadKey(filepath.Dir(tmpl))
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

func split(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
