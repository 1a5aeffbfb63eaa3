package gateway

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/interrupthost/interrupthost/infra/local/ddbstream"
	"github.com/interrupthost/interrupthost/internal/devjwt"
	"github.com/interrupthost/interrupthost/internal/samtemplate"
)

// Options say how to run a template locally.
type Options struct {
	// Root is the repository root (where template.yaml and functions/ are).
	Root string
	// URL is where the gateway is served (http://127.0.0.1:3000): its identity provider's
	// issuer is devjwt.IssuerAt(URL), and its one redirect URI URL/signin/callback.
	URL string
	// Resolver gives template values their local meaning (parameters, table names).
	Resolver samtemplate.Resolver
	// Env is added to every function's environment: AWS endpoints, region, credentials.
	Env []string
	// EnvOverrides replace the template's values of these variables: what the local stack is to
	// the functions where the template names an AWS resource (PUBLIC_BASE_URL: the gateway).
	EnvOverrides map[string]string
	// Queues are the template's SQS queues: the streams' on-failure destinations and the SQS
	// events' sources. Nil, for a gateway that serves only routes: a stream drops what it gives
	// up on, logged, and no queue is polled.
	Queues Queues
	// MaxInstances caps each function's pool.
	MaxInstances int
	// RIE is the path of the aws-lambda-rie binary.
	RIE string
	// Logs receives the functions' output.
	Logs io.Writer
	Log  *slog.Logger
}

// BuildFlags are go build's flags for what the local stack runs: the tag Lambda's provided
// runtimes use, trimmed and stripped as sam build makes the functions (the Makefile's
// LAMBDA_GOFLAGS). The stack builds its emulator with them too, and the Makefile (GO_BUILD) the
// stack itself: a package compiled with other flags is another package to go build, so with the
// same ones `make run`'s one go build compiles what they share (the standard library, the AWS
// SDK) once.
var BuildFlags = []string{"-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w"}

// BuildFunctions compiles every function's main for this machine into dir (dir/<name>) with
// BuildFlags: the same code as deployed, the same size but for the architecture.
func BuildFunctions(ctx context.Context, root, dir string) error {
	args := append(append([]string{"build"}, BuildFlags...), "-o", dir+string(filepath.Separator), "./functions/...")
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("gateway: build functions: %w", err)
	}
	return nil
}

// FromTemplate builds the gateway that serves t's routes, each function's bootstrap taken from
// bin/<name>.
func FromTemplate(t *samtemplate.Template, bin string, opts Options) (*Gateway, error) {
	functions, err := t.Functions()
	if err != nil {
		return nil, err
	}
	if opts.URL == "" {
		return nil, fmt.Errorf("gateway: Options.URL is required (the identity provider's issuer is under it)")
	}
	key, err := devjwt.LoadKey(opts.Root)
	if err != nil {
		return nil, err
	}
	pools := map[string]*Pool{}
	var routes []*Route
	var schedules []*scheduled
	var streams []*streamed
	var queues []*queued
	rotations := map[string]*rotation{}
	for _, f := range functions {
		env := append(os.Environ(), opts.Env...)
		for name, v := range f.Environment {
			if s, ok := opts.EnvOverrides[name]; ok {
				env = append(env, name+"="+s)
				continue
			}
			s, err := opts.Resolver.String(v)
			if err != nil {
				return nil, fmt.Errorf("gateway: %s: %s: %w", f.LogicalID, name, err)
			}
			env = append(env, name+"="+s)
		}
		env = append(env,
			"AWS_LAMBDA_FUNCTION_NAME="+f.Name,
			"AWS_LAMBDA_FUNCTION_TIMEOUT="+strconv.Itoa(f.TimeoutSec),
			"AWS_LAMBDA_FUNCTION_MEMORY_SIZE="+strconv.Itoa(f.MemoryMB))
		pools[f.Name] = &Pool{
			Name: f.Name, Bootstrap: filepath.Join(bin, f.Name), RIE: opts.RIE, Env: env,
			Max: opts.MaxInstances, Logs: opts.Logs, Log: opts.Log,
		}
		for _, sc := range f.Schedules {
			every, err := sc.Every()
			if err != nil {
				return nil, fmt.Errorf("gateway: %s: %w", f.LogicalID, err)
			}
			schedules = append(schedules, &scheduled{function: f.Name, every: every, input: []byte(sc.Input), pool: pools[f.Name]})
		}
		for _, st := range f.Streams {
			table, ok := opts.Resolver.Resources[st.Table]
			if !ok {
				return nil, fmt.Errorf("gateway: %s: stream of %s, a table the stack does not run", f.LogicalID, st.Table)
			}
			s := &streamed{Stream: st, function: f.Name, table: table, pool: pools[f.Name], queues: opts.Queues}
			for _, p := range st.Filters {
				filter, err := ddbstream.ParseFilter(p)
				if err != nil {
					return nil, fmt.Errorf("gateway: %s: %w", f.LogicalID, err)
				}
				s.filters = append(s.filters, filter)
			}
			streams = append(streams, s)
		}
		for _, secret := range f.Rotates {
			name, ok := opts.Resolver.Resources[secret]
			if !ok {
				return nil, fmt.Errorf("gateway: %s: rotation of %s, a secret the stack does not hold", f.LogicalID, secret)
			}
			rotations[secret] = &rotation{function: f.Name, secret: name, pool: pools[f.Name]}
		}
		for _, qe := range f.Queues {
			if opts.Queues != nil {
				queues = append(queues, &queued{QueueEvent: qe, function: f.Name, pool: pools[f.Name], queues: opts.Queues})
			}
		}
		for _, r := range f.Routes {
			route := &Route{Route: r, Function: f.Name}
			if route.Required, err = opts.Resolver.Strings(r.Scopes); err != nil {
				return nil, fmt.Errorf("gateway: %s %s: %w", f.LogicalID, r.Key(), err)
			}
			if r.Authorizer != samtemplate.NoAuthorizer {
				if err := resolveAuthorizer(t, opts.Resolver, route); err != nil {
					return nil, fmt.Errorf("gateway: %s %s: %w", f.LogicalID, r.Key(), err)
				}
			}
			routes = append(routes, route)
		}
	}
	// As API Gateway's JWT authorizer: keys are read from each issuer's JWKS, here the local
	// issuer this gateway serves itself.
	g, err := New(routes, pools, devjwt.NewIssuerKeys(&http.Client{Timeout: 5 * time.Second}), opts.Log)
	if err != nil {
		return nil, err
	}
	g.schedules, g.streams, g.queues, g.rotations = schedules, streams, queues, rotations
	g.issuer = devjwt.NewProvider(key, opts.URL, nil)
	return g, nil
}

// resolveAuthorizer gives a route the issuer and audiences its JWT authorizer checks.
func resolveAuthorizer(t *samtemplate.Template, res samtemplate.Resolver, r *Route) error {
	auth, err := t.Authorizer(r.ApiID, r.Authorizer)
	if err != nil {
		return err
	}
	if r.Issuer, err = res.String(auth.Issuer); err != nil {
		return err
	}
	// A list, as API Gateway's: a token for any one of them is admitted (the approvers' app
	// client and every engine's).
	r.Audience, err = res.List(auth.Audience)
	return err
}
