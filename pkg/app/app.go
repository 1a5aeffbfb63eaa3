// Package app is the composition root of the functions over the table: over the configuration
// package environ reads, it builds once at init what a function's main asks for (Env), and the
// handlers of the functions that serve no API. What lives in Secrets Manager is package
// app/secrets', so that a function that asks for none of it links no Secrets Manager client
// (TestEachFunctionLinksWhatItsRoleAllows).
package app

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/awsconfig"
	"github.com/interrupthost/interrupthost/pkg/contacts"
	"github.com/interrupthost/interrupthost/pkg/delegation"
	"github.com/interrupthost/interrupthost/pkg/dynamo"
	"github.com/interrupthost/interrupthost/pkg/dynamostream"
	"github.com/interrupthost/interrupthost/pkg/environ"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/policy"
	"github.com/interrupthost/interrupthost/pkg/schema"
	"github.com/interrupthost/interrupthost/pkg/token"
)

// DefaultRedriveSegments is a redrive's Scan parallelism unless REDRIVE_SCAN_SEGMENTS says.
const DefaultRedriveSegments = 8

// Env is a function's wiring: its configuration from the environment (package environ), and
// what was built from it, each once. A function's main asks it for the services its routes need
// and hands them to its constructor (jsonapi.API.GetRun, ...), which takes them by type: a main
// that lacks one does not compile, and only what a main asks for is linked into its binary and
// built at its init.
type Env struct {
	// Config is the host's policy.
	Config host.Config
	// Options are the API's.
	Options apigw.Options
	// Keys are the token keyring once package app/secrets has loaded it (secrets.Keys): exported
	// for that package, which keeps the Secrets Manager client out of this one; a main does not
	// set it.
	Keys  token.Keys
	cfg   *aws.Config
	host  *host.Host
	table *dynamo.Table
}

// Load reads a function's configuration from its environment; it builds nothing yet.
func Load() (*Env, error) {
	hc, err := environ.Host()
	if err != nil {
		return nil, err
	}
	opts, err := environ.APIOptions(hc)
	if err != nil {
		return nil, err
	}
	return &Env{Config: hc, Options: opts}, nil
}

// Must is v, or the end of a function whose init failed: a function that cannot be configured
// must not start.
func Must[T any](v T, err error) T {
	environ.ExitOn(err)
	return v
}

// Gateway is the gateway over the function's options, for its controller's package (jsonapi,
// web, mcphttp, slackhttp), whose constructor takes it.
func (e *Env) Gateway() *apigw.Gateway { return apigw.New(environ.Logger(), e.Options) }

// AWS is the SDK's configuration (awsconfig.Load), loaded the first time it is asked for.
func (e *Env) AWS(ctx context.Context) (aws.Config, error) {
	if e.cfg == nil {
		cfg, err := awsconfig.Load(ctx)
		if err != nil {
			return cfg, err
		}
		e.cfg = &cfg
	}
	return *e.cfg, nil
}

// Host is the host over the table TABLE_NAME names, built the first time it is asked for.
func (e *Env) Host(ctx context.Context) (*host.Host, error) {
	if e.host != nil {
		return e.host, nil
	}
	table, err := e.Table(ctx)
	if err != nil {
		return nil, err
	}
	he := environ.HostEnv()
	// Compiled at the first validation: a function that never validates links no compiler.
	he.Stores, he.Schemas = host.StoresOf(table), schema.Lazy()
	e.host = host.New(he, e.Config)
	return e.host, nil
}

// Contacts are the tenants' contacts, in the table.
func (e *Env) Contacts(ctx context.Context) (*contacts.Directory, error) {
	table, err := e.Table(ctx)
	if err != nil {
		return nil, err
	}
	return &contacts.Directory{Store: table}, nil
}

// Policies are the tenants' tool policies, in the table, each rule checked by the host as a
// request's approval would be.
func (e *Env) Policies(ctx context.Context) (*policy.Book, error) {
	table, err := e.Table(ctx)
	if err != nil {
		return nil, err
	}
	h, err := e.Host(ctx)
	if err != nil {
		return nil, err
	}
	return &policy.Book{Store: table, Checker: h, Schemas: schema.Lazy()}, nil
}

// Delegations are the approvers' delegations, in the table.
func (e *Env) Delegations(ctx context.Context) (*delegation.Book, error) {
	table, err := e.Table(ctx)
	if err != nil {
		return nil, err
	}
	return &delegation.Book{Store: table}, nil
}

// Table is the table TABLE_NAME names, its client built the first time it is asked for.
func (e *Env) Table(ctx context.Context) (*dynamo.Table, error) {
	if e.table != nil {
		return e.table, nil
	}
	name := os.Getenv(environ.EnvTable)
	if name == "" {
		return nil, errors.New("app: " + environ.EnvTable + " is not set")
	}
	cfg, err := e.AWS(ctx)
	if err != nil {
		return nil, err
	}
	e.table = dynamo.NewTable(dynamo.NewClient(cfg), name)
	return e.table, nil
}

// MustReadModels is read-models' handler: the table's stream and its own dead-letter queue,
// each run they name reindexed from its log (dynamostream.ReadModels, host.Host.Reindex). It
// reads the run log and writes the read models' items, nothing else.
func MustReadModels(ctx context.Context) func(context.Context, json.RawMessage) (dynamostream.BatchResponse, error) {
	e := Must(Load())
	h := Must(e.Host(ctx))
	return dynamostream.ReadModels(h, Must(e.Table(ctx)), Must(RedriveSegments()), environ.Logger(), environ.Meter(), nil)
}

// RedriveSegments is REDRIVE_SCAN_SEGMENTS, checked: how many segments a redrive's Scan reads at
// once.
func RedriveSegments() (int, error) {
	segments, err := strconv.Atoi(cmp.Or(os.Getenv(environ.EnvRedriveSegments), strconv.Itoa(DefaultRedriveSegments)))
	if err == nil && (segments < 1 || segments > 1_000_000) {
		err = errors.New("out of range")
	}
	if err != nil {
		return 0, fmt.Errorf("app: %s=%q is not a number of segments from 1 to 1000000: %w", environ.EnvRedriveSegments, os.Getenv(environ.EnvRedriveSegments), err)
	}
	return segments, nil
}

// MustSweep is the expiry-sweep function's handler: one sweep per scheduled invocation (the
// schedule's input is not read), bounded by the invocation's deadline, and one log line saying
// what it did.
func MustSweep(ctx context.Context) func(context.Context, json.RawMessage) (host.SweepReport, error) {
	h := Must(Must(Load()).Host(ctx))
	log := environ.Logger()
	return func(ctx context.Context, _ json.RawMessage) (host.SweepReport, error) {
		r, err := h.Sweep(ctx)
		attrs := []any{"from", r.From, "to", r.To, "entries", r.Entries, "expired", r.Expired, "deferred", r.Deferred, "kept", r.Kept, "tenants", r.Tenants, "caughtUp", r.CaughtUp, "lagSeconds", r.LagSeconds}
		if err != nil {
			log.Error("sweep", append(attrs, "error", err.Error())...)
		} else {
			log.Info("sweep", attrs...)
		}
		return r, err
	}
}
