package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/interrupthost/interrupthost/infra/local/gateway"
	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/internal/samtemplate"
)

// BenchmarkColdStart measures each function's init under the emulator, as Lambda's Init
// Duration does: process start to ready for the first event, the keyring fetched where the
// function takes one. The emulator starts a function at its first event and reports no init of
// its own, so an instance is started idle (the emulator listening), sent one event, then sent it
// again warm; init-ms is the first event's duration less the warm one's. The events are cheap
// and change no run: an unauthenticated request (the function re-checks its auth), the
// schedule's own input (a sweep finds nothing due), an empty stream batch or queue batch, the
// rotation's setSecret step. Each function is started once unmeasured first, so the binary is in the page
// cache (as Lambda's cached code is) and a sweep has caught up on the minutes before. make bench
// prints the figures; nothing fails on a time.
func BenchmarkColdStart(b *testing.B) {
	localaws.NeedsStack(b)
	tmpl, err := samtemplate.Load(filepath.Join(root(b), "template.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	functions, err := tmpl.Functions()
	if err != nil {
		b.Fatal(err)
	}
	resources := map[string]string{"RunLogTable": os.Getenv("TABLE_NAME"), "KeyringSecret": os.Getenv("KEYRING_SECRET_ID")}
	for _, f := range functions {
		event := coldEvent(b, f)
		b.Run(f.Name, func(b *testing.B) {
			coldStart(b, gatewayWith(b, resources, nil).Pool(f.Name), event)
			var cold, warm time.Duration
			for b.Loop() {
				c, w := coldStart(b, gatewayWith(b, resources, nil).Pool(f.Name), event)
				cold, warm = cold+c, warm+w
			}
			b.ReportMetric(float64(cold-warm)/float64(b.N)/1e6, "init-ms")
			b.ReportMetric(float64(warm)/float64(b.N)/1e6, "warm-ms")
			// The binary's size, as this machine's stripped and trimmed build of it: what a cold
			// start fetches and pages in (the deployed arm64 one is within a few percent).
			if fi, err := os.Stat(filepath.Join(functionsDir(b), f.Name)); err == nil {
				b.ReportMetric(float64(fi.Size())/1e6, "MB")
			}
		})
	}
}

// coldStart starts an instance of pool idle, sends it event cold, then warm (the fastest of three),
// and stops it.
func coldStart(b *testing.B, pool *gateway.Pool, event []byte) (cold, warm time.Duration) {
	b.Helper()
	defer pool.Close()
	ctx := context.Background()
	if err := pool.Start(ctx); err != nil {
		b.Fatal(err)
	}
	invoke := func() time.Duration {
		start := time.Now()
		if _, err := pool.Invoke(ctx, "cold-start", event); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	cold = invoke()
	warm = invoke()
	for range 2 {
		warm = min(warm, invoke())
	}
	return cold, warm
}

var pathParam = regexp.MustCompile(`\{[^}]+\}`)

// coldEvent is an event f answers without changing anything.
func coldEvent(b *testing.B, f samtemplate.Function) []byte {
	b.Helper()
	var event any
	switch {
	case len(f.Routes) > 0:
		r := f.Routes[0]
		path := pathParam.ReplaceAllString(r.Path, "cold")
		req := events.APIGatewayV2HTTPRequest{Version: "2.0", RouteKey: r.Key(), RawPath: path, Headers: map[string]string{}}
		req.RequestContext.HTTP.Method, req.RequestContext.HTTP.Path = r.Method, path
		req.RequestContext.RequestID, req.RequestContext.Stage = "cold-start", "$default"
		event = req
	case len(f.Schedules) > 0:
		event = json.RawMessage(f.Schedules[0].Input)
	case len(f.Streams) > 0:
		event = events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{}}
	case len(f.Queues) > 0:
		event = events.SQSEvent{Records: []events.SQSMessage{}}
	case f.Name == "rotate-keys":
		// Secrets Manager's rotation invokes it; setSecret is the step that changes nothing.
		event = map[string]string{"Step": "setSecret", "SecretId": os.Getenv("KEYRING_SECRET_ID"), "ClientRequestToken": "cold-start"}
	default:
		b.Fatalf("%s has no event the benchmark knows", f.Name)
	}
	raw, err := json.Marshal(event)
	if err != nil {
		b.Fatal(err)
	}
	return raw
}
