// Command stack runs the local stack: a DynamoDB API (dynalite) with the run-log table created
// from template.yaml, a Secrets Manager API (moto) seeded with a fresh development keyring, and
// the local gateway serving every route of template.yaml through the functions' real mains
// under the Lambda Runtime Interface Emulator.
//
//	stack run                  serve in the foreground until Ctrl-C (make run)
//	stack exec -- CMD ARGS...  run CMD against the stack, then stop it (make test)
//	stack build                build what `stack run` serves (the functions, the emulator) and
//	                           exit (make run builds them, and the stack, in one go build of
//	                           its own: the same flags and paths, so `stack run` finds them
//	                           up to date)
//
// A store that already answers on its port (say, under `make run`) is reused; `stack exec` then
// keeps to its own table, keyring secret, binaries and logs (under .local/exec-<id>/, removed
// when it ends, the logs kept if its command failed), so a running `make run` is left alone. Its
// gateway always runs the code of the work tree, on 127.0.0.1:3000 when free.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/interrupthost/interrupthost/infra/local/ddbstream"
	"github.com/interrupthost/interrupthost/infra/local/faults"
	"github.com/interrupthost/interrupthost/infra/local/gateway"
	"github.com/interrupthost/interrupthost/infra/local/mailbox"
	"github.com/interrupthost/interrupthost/infra/local/queues"
	"github.com/interrupthost/interrupthost/internal/botframework"
	"github.com/interrupthost/interrupthost/internal/devjwt"
	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/internal/samtemplate"
	"github.com/interrupthost/interrupthost/pkg/keyring"
)

func main() {
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: stack [-max-instances N] [-cpuprofile FILE] run | stack exec -- COMMAND [ARGS...] | stack build")
		flag.PrintDefaults()
	}
	maxInstances := flag.Int("max-instances", 8, "emulator instances per function (Lambda's concurrency)")
	cpuprofile := flag.String("cpuprofile", "", "write the stack process's CPU profile (gateway, stream stand-in) to this file")
	flag.Parse()
	// The stack's process moves bytes between clients, emulators and stores and does little else.
	// On one P its goroutines hand work to each other without waking another thread, which in a
	// microVM costs more than the work: make load measured the gateway's CPU per cycle 15% lower.
	runtime.GOMAXPROCS(1)
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var command []string
	switch flag.Arg(0) {
	case "build":
		if err := buildOnly(ctx); err != nil {
			log.Error("stack build failed", "error", err)
			os.Exit(1)
		}
		return
	case "run":
	case "exec":
		command = flag.Args()[1:]
		if len(command) > 0 && command[0] == "--" {
			command = command[1:]
		}
		if len(command) == 0 {
			flag.Usage()
			os.Exit(2)
		}
	default:
		flag.Usage()
		os.Exit(2)
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "stack: -cpuprofile:", err)
			os.Exit(2)
		}
	}
	err := run(ctx, log, *maxInstances, command)
	pprof.StopCPUProfile()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		os.Exit(exit.ExitCode())
	}
	if err != nil {
		log.Error("stack failed", "error", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, log *slog.Logger, maxInstances int, command []string) (err error) {
	start := time.Now()
	// make run passes the time it began, so the figure includes installing and building.
	if ms, err := strconv.ParseInt(os.Getenv("STACK_T0"), 10, 64); err == nil {
		start = time.UnixMilli(ms)
	}
	tmplPath, err := samtemplate.Find(".")
	if err != nil {
		return err
	}
	root := filepath.Dir(tmplPath)
	tmpl, err := samtemplate.Load(tmplPath)
	if err != nil {
		return err
	}
	var started []*service
	defer func() {
		for i := len(started) - 1; i >= 0; i-- {
			started[i].stop(log)
		}
	}()
	for _, s := range stores(root) {
		svc, err := ensure(ctx, log, root, s)
		if err != nil {
			return err
		}
		if svc != nil {
			started = append(started, svc)
		}
	}
	inst := newInstance(root, command != nil)
	if err := os.MkdirAll(inst.logs, 0o755); err != nil {
		return err
	}
	defer func() {
		if rerr := inst.remove(context.WithoutCancel(ctx), err != nil); rerr != nil {
			log.Warn("could not remove the stack's table, keyring or folder", "error", rerr)
		} else if err != nil && inst.temporary {
			log.Info("the stack's logs are kept", "dir", inst.logs)
		}
	}()
	if err := inst.createTable(ctx, tmpl); err != nil {
		return err
	}
	kid, err := inst.seedKeyring(ctx)
	if err != nil {
		return err
	}
	// The template's SenderIdentity: SES (moto's too) sends only from a verified identity.
	if err := localaws.VerifySender(ctx, sesClient, localaws.Sender); err != nil {
		return fmt.Errorf("stack: the mail sender: %w", err)
	}
	qs, err := queues.Create(ctx, queues.NewClient("http://"+motoAddr), tmpl, inst.table)
	if err != nil {
		return err
	}
	if inst.temporary {
		defer func() {
			if err := qs.Remove(context.WithoutCancel(ctx)); err != nil {
				log.Warn("could not remove the stack's queues", "error", err)
			}
		}()
	}
	log.Info("stores ready", "dynamodb", "http://"+dynamoAddr, "table", inst.table, "secretsmanager", "http://"+motoAddr, "keyring", inst.keyring, "activeKid", kid)

	gwLog := log
	if command != nil {
		// Under `stack exec` the command's output is what matters; the access log goes to a file.
		f, err := os.Create(filepath.Join(inst.logs, "gateway.log"))
		if err != nil {
			return err
		}
		defer f.Close()
		gwLog = slog.New(slog.NewJSONHandler(f, nil))
		log.Info("gateway log", "file", f.Name())
	}
	gw, addr, err := serveGateway(ctx, gwLog, root, inst, tmpl, qs, maxInstances)
	if err != nil {
		return err
	}
	defer gw.Close()
	period, err := schedulePeriod()
	if err != nil {
		return err
	}
	gw.RunSchedules(ctx, period)
	url := "http://" + addr
	took, err := firstRequest(ctx, root, inst, url)
	if err != nil {
		return fmt.Errorf("first request through the gateway: %w", err)
	}
	log.Info("stack ready", "gateway", url, "firstRequestAfter", time.Since(start).Round(time.Millisecond), "firstRequestMs", took.Milliseconds())
	if command == nil {
		fmt.Printf(`
Interrupt host serving on %[1]s (first request answered %[2]s after start). Ctrl-C stops it all.
Mail it sends is read at %[1]s/local-mail.

  TOKEN=$(go run ./infra/local/cmd/devtoken -gateway %[1]s -sub engine -tenant acme -scopes "interrupts:write runs:read")
  curl -s -X POST %[1]s/runs/first-$(date +%%s)/interrupts -H "Authorization: Bearer $TOKEN" \
    -H 'Content-Type: application/json' -d "{\"nodeId\":\"approve\",\"payload\":$(cat schemas/examples/approval.json)}"

The walks for each kind of user are README's guides (docs/).

`, url, time.Since(start).Round(time.Millisecond))
		<-ctx.Done()
		return nil
	}
	cmd := exec.CommandContext(ctx, command[0], command[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), append(inst.clientEnv(), "GATEWAY_URL="+url, "STACK_FUNCTIONS="+inst.functions(), "STACK_FUNCTION_LOG="+filepath.Join(inst.logs, "functions.log"))...)
	return cmd.Run()
}

// emulatorPackage is the Lambda Runtime Interface Emulator's main (the Makefile's RIE).
const emulatorPackage = "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie"

// emulator is where the Lambda Runtime Interface Emulator's binary is built.
func emulator(root string) string { return filepath.Join(root, ".local", "bin", "aws-lambda-rie") }

// build builds the functions into bin and the emulator, both with gateway.BuildFlags; go build
// leaves what is up to date (as make run's go build left it).
func build(ctx context.Context, root, bin string) error {
	if err := gateway.BuildFunctions(ctx, root, bin); err != nil {
		return err
	}
	args := append(append([]string{"build"}, gateway.BuildFlags...), "-o", emulator(root), emulatorPackage)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = root, os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build the runtime interface emulator: %w", err)
	}
	return nil
}

// buildOnly is `stack build`: what `stack run` builds first, to the same paths.
func buildOnly(ctx context.Context) error {
	tmplPath, err := samtemplate.Find(".")
	if err != nil {
		return err
	}
	root := filepath.Dir(tmplPath)
	return build(ctx, root, newInstance(root, false).functions())
}

// serveGateway builds the functions and the emulator and serves the template's routes, the
// functions' DynamoDB calls going through the stream stand-in, whose records it feeds to the
// functions that read the table's stream.
func serveGateway(ctx context.Context, log *slog.Logger, root string, inst instance, tmpl *samtemplate.Template, qs *queues.Queues, maxInstances int) (*gateway.Gateway, string, error) {
	bin, rie := inst.functions(), emulator(root)
	if err := build(ctx, root, bin); err != nil {
		return nil, "", err
	}
	logs, err := os.Create(filepath.Join(inst.logs, "functions.log"))
	if err != nil {
		return nil, "", err
	}
	var out io.Writer = logs
	if os.Getenv("STACK_FUNCTION_LOGS") == "stdout" {
		out = io.MultiWriter(logs, os.Stdout)
	}
	injector := faults.New()
	streams, streamsURL, err := serveStreams(ctx, log, inst, injector)
	if err != nil {
		return nil, "", err
	}
	secretsURL, err := serveSecrets(ctx, log, injector)
	if err != nil {
		return nil, "", err
	}
	ln, err := net.Listen("tcp", gatewayAddr)
	if err != nil {
		log.Warn("gateway port busy; serving on a free port", "wanted", gatewayAddr, "error", err)
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return nil, "", err
		}
	}
	url := "http://" + ln.Addr().String()
	// The Bot Framework's stand-in signs what Teams would send the tenants' bots; its key is the
	// stack's own, made at each start.
	bf, err := botframework.New("local-botframework")
	if err != nil {
		ln.Close()
		return nil, "", err
	}
	gw, err := gateway.FromTemplate(tmpl, bin, gateway.Options{
		Root: root, URL: url,
		Resolver: samtemplate.Resolver{
			Template: tmpl,
			Overrides: map[string]string{
				"JwtIssuer": devjwt.IssuerAt(url), "JwtAudience": devjwt.Audiences, "AgentsClientId": devjwt.MCPClientID, "OverridePrincipals": overridePrincipal,
				// MCP clients signing in by a metadata URL served on this machine, on any port.
				"McpClientMetadataUrls": devjwt.LoopbackClientURLs,
				// The stack's own names start with its table's.
				"AWS::StackName": inst.table,
				// Local receivers listen on 127.0.0.1, over http.
				"AllowPrivateDeliveryTargets": "true",
				// The local MCP endpoint takes requests from loopback origins (a local tool's, on
				// any port), no other.
				"McpAllowedOrigins": "http://127.0.0.1:*,http://localhost:*,http://[::1]:*",
				// A rotation (POST /local-rotation) is seen within seconds, as the black-box
				// test of rotation needs; the template's default is five minutes.
				"KeyringCacheSeconds": "2",
				// Teams' activities are verified by the stand-in's keys (/local-botframework).
				"BotFrameworkOpenIdMetadata": botframework.MetadataURL(url),
				// Bots have their tokens from the stand-in to post cards to its conversations.
				"BotFrameworkTokenUrl": botframework.StandInTokenURL(url),
			},
			Resources: resources(inst, qs),
		},
		Env: append(inst.clientEnv(), "AWS_ENDPOINT_URL_DYNAMODB="+streamsURL, "AWS_ENDPOINT_URL_SECRETS_MANAGER="+secretsURL),
		// What the template derives from the deployment (the API's URL, prefixes under the stack's
		// name) is the instance's own here.
		EnvOverrides: map[string]string{"PUBLIC_BASE_URL": url, "WEBHOOK_SECRET_PREFIX": inst.webhooks, "SUBSCRIPTION_SECRET_PREFIX": inst.subscriptions, "SLACK_SECRET_PREFIX": inst.slack, "TEAMS_SECRET_PREFIX": inst.teams, "MAIL_SENDER": localaws.Sender},
		Queues:       qs, MaxInstances: maxInstances, RIE: rie, Logs: out, Log: log,
	})
	if err != nil {
		ln.Close()
		return nil, "", err
	}
	// The faults injected between the functions and the stores are set at /local-faults, beside
	// the routes: the chaos suite turns them on and off while the stack runs.
	mux := http.NewServeMux()
	mux.Handle("/local-faults", injector)
	mux.Handle("/local-rotation", rotation(gw, log))
	// The mail the SES stand-in accepted, decoded, for people to read (docs/approvers.md, "Mail").
	box := &mailbox.Mailbox{Moto: "http://" + motoAddr, Client: &http.Client{Timeout: 10 * time.Second}}
	mux.Handle(mailbox.Path, box)
	mux.Handle(mailbox.Path+"/", box)
	// The Bot Framework's stand-in: its keys, and tokens for local clicks (docs/operations.md, "Teams").
	mux.Handle(botframework.Path+"/", botframework.StandIn(url, bf))
	mux.Handle("/", gw)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	context.AfterFunc(ctx, func() { _ = srv.Close() })
	gw.RunStreams(ctx, streams)
	gw.RunQueues(ctx)
	log.Info("gateway serving", "addr", ln.Addr().String(), "routes", len(gw.Routes()), "maxInstancesPerFunction", maxInstances)
	return gw, ln.Addr().String(), nil
}

// resources are what !Ref of the template's resources is locally: the instance's table, keyring
// and queues (their URLs).
func resources(inst instance, qs *queues.Queues) map[string]string {
	r := qs.URLs()
	r["RunLogTable"], r["KeyringSecret"] = inst.table, inst.keyring
	return r
}

// serveStreams starts the DynamoDB API proxy that stands in for the table's stream: the
// functions talk to it, it forwards to dynalite and records the instance's table's writes.
func serveStreams(ctx context.Context, log *slog.Logger, inst instance, injector *faults.Injector) (*ddbstream.Proxy, string, error) {
	proxy := ddbstream.NewProxy(&url.URL{Scheme: "http", Host: dynamoAddr}, log)
	proxy.Stream(inst.table)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	srv := &http.Server{Handler: injector.Wrap("dynamodb", proxy), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	context.AfterFunc(ctx, func() { _ = srv.Close() })
	log.Info("stream stand-in serving", "dynamodb", "http://"+ln.Addr().String(), "table", inst.table)
	return proxy, "http://" + ln.Addr().String(), nil
}

// serveSecrets is the functions' Secrets Manager endpoint: a proxy to moto, with the faults the
// injector sets for "secretsmanager" (tests and tools reach moto directly).
func serveSecrets(ctx context.Context, log *slog.Logger, injector *faults.Injector) (string, error) {
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: motoAddr})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: injector.Wrap("secretsmanager", proxy), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	context.AfterFunc(ctx, func() { _ = srv.Close() })
	log.Info("secrets manager proxy serving", "secretsmanager", "http://"+ln.Addr().String())
	return "http://" + ln.Addr().String(), nil
}

// firstRequest reads a run that does not exist through the gateway: a 404 problem document is
// the function's own answer, so the whole chain (JWT, gateway, emulator, function, DynamoDB)
// works.
func firstRequest(ctx context.Context, root string, inst instance, url string) (time.Duration, error) {
	key, err := devjwt.LoadKey(root)
	if err != nil {
		return 0, err
	}
	token, err := devjwt.Sign(key, devjwt.Token{Issuer: devjwt.IssuerAt(url), Subject: "stack", Tenant: "local", Scopes: []string{"runs:read"}, TTL: time.Minute}.Claims(time.Now()))
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/runs/stack-self-check", nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	begin := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || resp.Header.Get("Content-Type") != "application/problem+json" {
		return 0, fmt.Errorf("answered %d %s, want the function's 404; see %s", resp.StatusCode, resp.Header.Get("Content-Type"), filepath.Join(inst.logs, "functions.log"))
	}
	return time.Since(begin), nil
}

// schedulePeriod reads STACK_SCHEDULE_PERIOD (a Go duration, "2s"): when set, every scheduled
// function runs that often instead of on its template schedule.
func schedulePeriod() (time.Duration, error) {
	v := os.Getenv("STACK_SCHEDULE_PERIOD")
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("STACK_SCHEDULE_PERIOD=%q is not a positive duration", v)
	}
	return d, nil
}

// rotation serves POST /local-rotation: the stand-in for Secrets Manager's rotation of the
// keyring (the template's KeyringRotation schedule, or RotateSecret), which nothing else runs
// locally. It runs rotate-keys through its four steps on the stack's keyring (Gateway.Rotate)
// and answers {"activeKid": ...}, the kid new tokens are signed with once the functions' keyring
// caches have read it (KeyringCacheSeconds).
func rotation(gw *gateway.Gateway, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "POST rotates the keyring", http.StatusMethodNotAllowed)
			return
		}
		secret, err := gw.Rotate(r.Context(), "KeyringSecret")
		if err != nil {
			log.Error("local rotation failed", "error", err)
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		// The stage named, as the functions' keyring reads it: moto's default does not follow
		// the rotation's move of AWSCURRENT.
		out, err := secretsClient.GetSecretValue(r.Context(), &secretsmanager.GetSecretValueInput{SecretId: aws.String(secret), VersionStage: aws.String("AWSCURRENT")})
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		active, _, err := keyring.Parse([]byte(aws.ToString(out.SecretString)))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"activeKid": active})
	})
}
