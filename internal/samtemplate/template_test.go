package samtemplate_test

import (
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/interrupthost/interrupthost/infra/local/ddbstream"
	"github.com/interrupthost/interrupthost/infra/local/gateway"
	"github.com/interrupthost/interrupthost/internal/devjwt"
	"github.com/interrupthost/interrupthost/internal/samtemplate"
)

// root is the repository's root, where template.yaml is.
func root(t *testing.T) string {
	t.Helper()
	p, err := samtemplate.Find(".")
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(p)
}

// load is the repository's template.yaml, as the stack reads it.
func load(t *testing.T) *samtemplate.Template {
	t.Helper()
	tmpl, err := samtemplate.Load(filepath.Join(root(t), "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// templateRoutes reads the route keys of template.yaml with nothing but a YAML parser, apart
// from the code the gateway uses.
func templateRoutes(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root(t), "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Resources map[string]struct {
			Properties struct {
				Events map[string]struct {
					Type       string `yaml:"Type"`
					Properties struct {
						Method string `yaml:"Method"`
						Path   string `yaml:"Path"`
					} `yaml:"Properties"`
				} `yaml:"Events"`
			} `yaml:"Properties"`
		} `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var routes []string
	for _, r := range doc.Resources {
		for _, e := range r.Properties.Events {
			if e.Type == "HttpApi" {
				routes = append(routes, strings.ToUpper(e.Properties.Method)+" "+e.Properties.Path)
			}
		}
	}
	if len(routes) == 0 {
		t.Fatal("template.yaml declares no HttpApi routes")
	}
	slices.Sort(routes)
	return routes
}

// TestRouteTableMatchesTheTemplate compares the gateway's route table, built the way the stack
// builds it, with the template read independently.
func TestRouteTableMatchesTheTemplate(t *testing.T) {
	r, tmpl := root(t), load(t)
	overrides := map[string]string{"JwtIssuer": devjwt.IssuerAt(devjwt.GatewayURL), "JwtAudience": devjwt.Audiences, "AgentsClientId": devjwt.MCPClientID, "AWS::StackName": "t"}
	gw, err := gateway.FromTemplate(tmpl, filepath.Join(t.TempDir(), "functions"), gateway.Options{
		Root:         r,
		URL:          devjwt.GatewayURL,
		Resolver:     samtemplate.Resolver{Template: tmpl, Overrides: overrides, Resources: map[string]string{"RunLogTable": "t", "KeyringSecret": "k"}},
		EnvOverrides: map[string]string{"PUBLIC_BASE_URL": "http://127.0.0.1:3000", "WEBHOOK_SECRET_PREFIX": "t/hooks/", "SUBSCRIPTION_SECRET_PREFIX": "t/subs/", "SLACK_SECRET_PREFIX": "t/slack/"},
		RIE:          filepath.Join(t.TempDir(), "aws-lambda-rie"), MaxInstances: 1,
		Logs: io.Discard, Log: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gw.Close)
	if got, want := gw.Routes(), templateRoutes(t); !slices.Equal(got, want) {
		t.Errorf("gateway routes %v, template routes %v", got, want)
	}
}

// streamConsumers are the functions that read the run-log table's stream, each with the queue
// its batches given up on go to, and the function that consumes that queue.
var streamConsumers = map[string]struct{ onFailure, redriver string }{
	"deliver-events": {"DeliverEventsFailures", "redrive-stream"},
	"read-models":    {"ReadModelsFailures", "read-models"},
}

// TestStreamEvents: the local stack reads each stream event as Lambda's event source mapping
// would: the run-log table, the batch, the retry behaviour and a filter it can evaluate. Its
// consumers, deliver-events and read-models, take the same records (commits) the same way, each
// with its own on-failure queue.
func TestStreamEvents(t *testing.T) {
	tmpl := load(t)
	functions, err := tmpl.Functions()
	if err != nil {
		t.Fatal(err)
	}
	var filters []string
	for _, f := range functions {
		for _, s := range f.Streams {
			want, ok := streamConsumers[f.Name]
			if !ok {
				t.Errorf("%s reads a stream", f.Name)
				continue
			}
			if len(f.Streams) != 1 {
				t.Errorf("%s reads %d streams", f.Name, len(f.Streams))
			}
			filters = append(filters, s.Filters...)
			if s.Table != "RunLogTable" || s.BatchSize != 100 || s.BatchingWindow != time.Second || !s.Bisect || !s.PartialBatch || s.MaxRetries != 10000 || len(s.Filters) != 1 ||
				s.MaxRecordAge != 24*time.Hour || s.OnFailure != want.onFailure {
				t.Errorf("%s: stream %+v", f.Name, s)
			}
			for _, p := range s.Filters {
				if _, err := ddbstream.ParseFilter(p); err != nil {
					t.Errorf("%s: %v", f.Name, err)
				}
			}
		}
	}
	if len(filters) != len(streamConsumers) {
		t.Fatalf("%d stream events, want one per consumer %v", len(filters), streamConsumers)
	}
	if len(slices.Compact(slices.Clone(filters))) != 1 {
		t.Errorf("the consumers filter the stream differently: %q", filters)
	}
}

// TestTheDeadLettersAreRedriven: each stream consumer's dead-letter queue is a function's event
// source (redrive-stream's for deliver-events, read-models' own), one message at a time with
// partial batch responses, its visibility timeout at least six times the function's (Lambda's
// advice for an SQS event source), and a message it keeps failing moves to RedriveFailures,
// created first.
func TestTheDeadLettersAreRedriven(t *testing.T) {
	tmpl := load(t)
	functions, err := tmpl.Functions()
	if err != nil {
		t.Fatal(err)
	}
	consumers := map[string]samtemplate.Function{}
	for _, f := range functions {
		for _, q := range f.Queues {
			consumers[q.Queue] = f
			if q.BatchSize != 1 || !q.PartialBatch {
				t.Errorf("%s reads queue %+v", f.Name, q)
			}
		}
	}
	for consumer, want := range streamConsumers {
		if f, ok := consumers[want.onFailure]; !ok || f.Name != want.redriver {
			t.Errorf("%s's dead letters (%s) are read by %q, want %s", consumer, want.onFailure, f.Name, want.redriver)
		}
	}
	if len(consumers) != len(streamConsumers) {
		t.Errorf("queues read: %v", slices.Collect(maps.Keys(consumers)))
	}
	queues, err := tmpl.Queues()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, q := range queues {
		ids = append(ids, q.LogicalID)
		consumer, ok := consumers[q.LogicalID]
		if !ok {
			continue
		}
		if q.DeadLetter != "RedriveFailures" || q.MaxReceiveCount < 1 || q.VisibilityTimeout < 6*time.Duration(consumer.TimeoutSec)*time.Second {
			t.Errorf("dead-letter queue %+v, its consumer %s's timeout %d s", q, consumer.Name, consumer.TimeoutSec)
		}
	}
	if strings.Join(ids, " ") != "RedriveFailures DeliverEventsFailures ReadModelsFailures" {
		t.Errorf("queues in creation order: %v", ids)
	}
}
