// Package app is the composition root of the functions over the table: over the configuration
// package environ reads, it builds once at init what a function's main names (Serve's Deps) and
// the handler over it, which the main hands to lambda.Start. The dependencies that need Secrets
// Manager are package app/secrets', so that a function that names none of them links no Secrets
// Manager client (TestEachFunctionLinksWhatItsRoleAllows).
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
	"github.com/interrupthost/interrupthost/pkg/dynamo"
	"github.com/interrupthost/interrupthost/pkg/dynamostream"
	"github.com/interrupthost/interrupthost/pkg/environ"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/schema"
)

// DefaultRedriveSegments is a redrive's Scan parallelism unless REDRIVE_SCAN_SEGMENTS says.
const DefaultRedriveSegments = 8

// Dep is one dependency of an HTTP function beside its routes, built at init. A function's main
// names its dependencies (Serve), and only those are linked into its binary and built: a
// function that names no client loads no AWS configuration, and its role needs no permission
// for one. The order they are named in does not matter. This package's Host and package
// app/secrets' are the Deps there are.
type Dep func(context.Context, *Wiring) error

// Wiring is what a function's Deps build: the host's configuration and the API's options, the
// SDK's configuration once one of them needs a client, and whether the function needs the
// host.
type Wiring struct {
	Host host.Config
	API  apigw.Options
	cfg  *aws.Config
	// newHost builds the host once every Dep has added to Host: set by the Deps that need it
	// (a function value, so that a function with none links no table).
	newHost func(context.Context, *Wiring) (*host.Host, error)
}

// AWS is the SDK's configuration (awsconfig.Load), loaded at the first Dep that asks for it.
func (w *Wiring) AWS(ctx context.Context) (aws.Config, error) {
	if w.cfg == nil {
		cfg, err := awsconfig.Load(ctx)
		if err != nil {
			return cfg, err
		}
		w.cfg = &cfg
	}
	return *w.cfg, nil
}

// Host is the host over the table TABLE_NAME names, built once every Dep has added to its
// configuration. The Deps that need the host name it themselves.
func Host(_ context.Context, w *Wiring) error {
	w.newHost = func(ctx context.Context, w *Wiring) (*host.Host, error) {
		cfg, err := w.AWS(ctx)
		if err != nil {
			return nil, err
		}
		h, _, err := HostOn(cfg, w.Host)
		return h, err
	}
	return nil
}

// Serve builds the handler of the HTTP function whose routes are routes, with the dependencies
// with names, from the environment. The SDK finds its region, credentials and endpoints
// (AWS_ENDPOINT_URL_DYNAMODB locally) as on Lambda (awsconfig); nothing here is local-only.
func Serve(ctx context.Context, routes apigw.Routes, with ...Dep) (apigw.Handler, error) {
	var w Wiring
	var err error
	if w.Host, err = environ.Host(); err != nil {
		return nil, err
	}
	if w.API, err = environ.API(w.Host); err != nil {
		return nil, err
	}
	for _, dep := range with {
		if err := dep(ctx, &w); err != nil {
			return nil, err
		}
	}
	var h *host.Host
	if w.newHost != nil {
		if h, err = w.newHost(ctx, &w); err != nil {
			return nil, err
		}
	}
	return apigw.New(h, environ.Logger(), w.API).Serve(routes), nil
}

// MustServe is Serve for a function's init: a function that cannot be configured must not start.
func MustServe(ctx context.Context, routes apigw.Routes, with ...Dep) apigw.Handler {
	h, err := Serve(ctx, routes, with...)
	environ.ExitOn(err)
	return h
}

// HostOn is the host over the table TABLE_NAME names, configured by hc, and the table.
func HostOn(cfg aws.Config, hc host.Config) (*host.Host, *dynamo.Table, error) {
	table := os.Getenv(environ.EnvTable)
	if table == "" {
		return nil, nil, errors.New("app: " + environ.EnvTable + " is not set")
	}
	schemas, err := schema.Load()
	if err != nil {
		return nil, nil, err
	}
	runs := dynamo.NewTable(dynamo.NewClient(cfg), table)
	return host.New(host.StoresOf(runs), schemas, hc), runs, nil
}

// newHost is HostOn with the SDK's configuration loaded, for the functions that serve no API.
func newHost(ctx context.Context, hc host.Config) (*host.Host, *dynamo.Table, error) {
	cfg, err := awsconfig.Load(ctx)
	if err != nil {
		return nil, nil, err
	}
	return HostOn(cfg, hc)
}

// MustReadModels is read-models' handler: the table's stream and its own dead-letter queue,
// each run they name reindexed from its log (dynamostream.ReadModels, host.Host.Reindex). It
// reads the run log and writes the read models' items, nothing else.
func MustReadModels(ctx context.Context) func(context.Context, json.RawMessage) (dynamostream.BatchResponse, error) {
	hc, err := environ.Host()
	environ.ExitOn(err)
	h, runs, err := newHost(ctx, hc)
	environ.ExitOn(err)
	segments, err := RedriveSegments()
	environ.ExitOn(err)
	return dynamostream.ReadModels(h, runs, segments, environ.Logger(), hc.Metrics, nil)
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
	hc, err := environ.Host()
	environ.ExitOn(err)
	h, _, err := newHost(ctx, hc)
	environ.ExitOn(err)
	log := environ.Logger()
	return func(ctx context.Context, _ json.RawMessage) (host.SweepReport, error) {
		r, err := h.Sweep(ctx)
		attrs := []any{"from", r.From, "to", r.To, "entries", r.Entries, "expired", r.Expired, "deferred", r.Deferred, "tenants", r.Tenants, "caughtUp", r.CaughtUp, "lagSeconds", r.LagSeconds}
		if err != nil {
			log.Error("sweep", append(attrs, "error", err.Error())...)
		} else {
			log.Info("sweep", attrs...)
		}
		return r, err
	}
}
