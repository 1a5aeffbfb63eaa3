// Command stack runs the local stack: a DynamoDB API (dynalite) with the run-log table created
// from template.yaml. `stack run` serves in the foreground until Ctrl-C; `stack exec -- CMD...`
// runs CMD against the stack (this is how `make test` gets its services) and stops what it
// started. A service that already answers on its port (say, under `make run`) is reused.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interrupthost/interrupthost/infra/local/samtemplate"
	"github.com/interrupthost/interrupthost/pkg/dynamo"
)

const (
	dynamoAddr = "127.0.0.1:8000"
	localTable = "interrupt-host-local"
)

func main() {
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: stack run | stack exec -- COMMAND [ARGS...]")
	}
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch flag.Arg(0) {
	case "run":
		err = run(ctx, log, nil)
	case "exec":
		command := flag.Args()[1:]
		if len(command) > 0 && command[0] == "--" {
			command = command[1:]
		}
		if len(command) == 0 {
			flag.Usage()
			os.Exit(2)
		}
		err = run(ctx, log, command)
	default:
		flag.Usage()
		os.Exit(2)
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		os.Exit(exit.ExitCode())
	}
	if err != nil {
		log.Error("stack failed", "error", err)
		os.Exit(1)
	}
}

// env is what a function or test needs to reach the stack.
func env() []string {
	return []string{
		"AWS_ENDPOINT_URL_DYNAMODB=http://" + dynamoAddr,
		"AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=local",
		"AWS_SECRET_ACCESS_KEY=local",
		"TABLE_NAME=" + localTable,
	}
}

func run(ctx context.Context, log *slog.Logger, command []string) error {
	start := time.Now()
	root, err := repoRoot()
	if err != nil {
		return err
	}
	var started []*service
	defer func() {
		for i := len(started) - 1; i >= 0; i-- {
			started[i].stop(log)
		}
	}()
	db := dynamo.NewClient(aws.Config{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("local", "local", ""),
		BaseEndpoint: aws.String("http://" + dynamoAddr),
	})
	svc, err := ensure(ctx, log, root, "dynalite", func(ctx context.Context) error {
		_, err := db.ListTables(ctx, &dynamodb.ListTablesInput{})
		return err
	}, "node", filepath.Join(root, "infra/local/node_modules/dynalite/cli.js"),
		"--host", "127.0.0.1", "--port", "8000", "--createTableMs", "0", "--deleteTableMs", "0", "--updateTableMs", "0")
	if err != nil {
		return err
	}
	if svc != nil {
		started = append(started, svc)
	}
	if err := createTable(ctx, db, root); err != nil {
		return err
	}
	log.Info("stack ready", "dynamodb", "http://"+dynamoAddr, "table", localTable, "took", time.Since(start).Round(time.Millisecond))
	if command == nil {
		fmt.Printf("\nDynamoDB API on http://%s, table %s. Ctrl-C stops the stack.\n", dynamoAddr, localTable)
		<-ctx.Done()
		return nil
	}
	cmd := exec.CommandContext(ctx, command[0], command[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), env()...)
	return cmd.Run()
}

func repoRoot() (string, error) {
	path, err := samtemplate.Find(".")
	if err != nil {
		return "", err
	}
	return filepath.Dir(path), nil
}

func createTable(ctx context.Context, db *dynamodb.Client, root string) error {
	tmpl, err := samtemplate.Load(filepath.Join(root, "template.yaml"))
	if err != nil {
		return err
	}
	in, err := tmpl.CreateTableInput("RunLogTable", localTable)
	if err != nil {
		return err
	}
	_, err = db.CreateTable(ctx, in)
	var exists *types.ResourceInUseException
	if errors.As(err, &exists) {
		return nil
	}
	return err
}

// service is a process the stack started and must stop.
type service struct {
	name string
	cmd  *exec.Cmd
	done chan error
}

// ensure starts a service unless ready already succeeds (another stack serves it), then waits
// until ready succeeds. It returns nil when it started nothing.
func ensure(ctx context.Context, log *slog.Logger, root, name string, ready func(context.Context) error, argv ...string) (*service, error) {
	if probe(ctx, ready) == nil {
		log.Info("reusing running service", "service", name)
		return nil, nil
	}
	logDir := filepath.Join(root, ".local", "logs")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, err
	}
	out, err := os.Create(filepath.Join(logDir, name+".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	s := &service{name: name, cmd: cmd, done: make(chan error, 1)}
	go func() { s.done <- cmd.Wait(); out.Close() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := probe(ctx, ready)
		if err == nil {
			log.Info("service started", "service", name, "pid", cmd.Process.Pid, "log", out.Name())
			return s, nil
		}
		select {
		case werr := <-s.done:
			return nil, fmt.Errorf("%s exited before it was ready (%v); see %s", name, werr, out.Name())
		case <-ctx.Done():
			s.stop(log)
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop(log)
			return nil, fmt.Errorf("%s not ready after 30s: %v; see %s", name, err, out.Name())
		}
	}
}

func probe(ctx context.Context, ready func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	return ready(ctx)
}

func (s *service) stop(log *slog.Logger) {
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
	log.Info("service stopped", "service", s.name)
}
