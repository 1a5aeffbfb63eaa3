package samtemplate_test

import (
	"io"
	"log/slog"
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
	overrides := map[string]string{"JwtIssuer": devjwt.IssuerAt(devjwt.GatewayURL), "JwtAudience": devjwt.Audiences, "AWS::StackName": "t"}
	gw, err := gateway.FromTemplate(tmpl, filepath.Join(t.TempDir(), "functions"), gateway.Options{
		Root:         r,
		URL:          devjwt.GatewayURL,
		Resolver:     samtemplate.Resolver{Template: tmpl, Overrides: overrides, Resources: map[string]string{"RunLogTable": "t", "KeyringSecret": "k"}},
		EnvOverrides: map[string]string{"PUBLIC_BASE_URL": "http://127.0.0.1:3000", "WEBHOOK_SECRET_PREFIX": "t/hooks/", "SUBSCRIPTION_SECRET_PREFIX": "t/subs/"},
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

// TestStreamEvents: the local stack reads deliver-events' stream event as Lambda's event source
// mapping would: the run-log table, the batch, the retry behaviour and a filter it can evaluate.
func TestStreamEvents(t *testing.T) {
	tmpl := load(t)
	functions, err := tmpl.Functions()
	if err != nil {
		t.Fatal(err)
	}
	var streams []samtemplate.Stream
	for _, f := range functions {
		for _, s := range f.Streams {
			if f.Name != "deliver-events" {
				t.Errorf("%s reads a stream", f.Name)
			}
			streams = append(streams, s)
		}
	}
	if len(streams) != 1 {
		t.Fatalf("streams %+v", streams)
	}
	s := streams[0]
	if s.Table != "RunLogTable" || s.BatchSize != 100 || s.BatchingWindow != time.Second || !s.Bisect || !s.PartialBatch || s.MaxRetries != 10000 || len(s.Filters) != 1 ||
		s.MaxRecordAge != 24*time.Hour || s.OnFailure != "DeliverEventsFailures" {
		t.Errorf("stream %+v", s)
	}
	if _, err := ddbstream.ParseFilter(s.Filters[0]); err != nil {
		t.Error(err)
	}
}

// TestTheDeadLettersAreRedriven: the stream's dead-letter queue is redrive-stream's event
// source, one message at a time with partial batch responses, its visibility timeout at least
// six times the function's (Lambda's advice for an SQS event source), and a message it keeps
// failing moves to a queue of its own, created first.
func TestTheDeadLettersAreRedriven(t *testing.T) {
	tmpl := load(t)
	functions, err := tmpl.Functions()
	if err != nil {
		t.Fatal(err)
	}
	var consumer samtemplate.Function
	for _, f := range functions {
		for _, q := range f.Queues {
			if q.Queue != "DeliverEventsFailures" || f.Name != "redrive-stream" || q.BatchSize != 1 || !q.PartialBatch {
				t.Errorf("%s reads queue %+v", f.Name, q)
			}
			consumer = f
		}
	}
	queues, err := tmpl.Queues()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, q := range queues {
		ids = append(ids, q.LogicalID)
		if q.LogicalID == "DeliverEventsFailures" && (q.DeadLetter != "RedriveFailures" || q.MaxReceiveCount < 1 || q.VisibilityTimeout < 6*time.Duration(consumer.TimeoutSec)*time.Second) {
			t.Errorf("the stream's dead-letter queue %+v, its consumer's timeout %d s", q, consumer.TimeoutSec)
		}
	}
	if strings.Join(ids, " ") != "RedriveFailures DeliverEventsFailures" {
		t.Errorf("queues in creation order: %v", ids)
	}
}
