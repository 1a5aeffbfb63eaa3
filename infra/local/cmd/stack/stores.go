package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"

	"github.com/interrupthost/interrupthost/infra/local/gateway"
	"github.com/interrupthost/interrupthost/infra/local/samtemplate"
	"github.com/interrupthost/interrupthost/pkg/dynamo"
)

const (
	dynamoAddr    = "127.0.0.1:8000"
	motoAddr      = "127.0.0.1:5001"
	gatewayAddr   = "127.0.0.1:3000"
	localTable    = "interrupt-host-local"
	keyringSecret = "interrupt-host-local/keyring"
	// overridePrincipal may release approvals alone locally (template parameter OverridePrincipals).
	overridePrincipal = "supervisor"
)

// clientEnv is what a function or a test needs to reach the stores.
func clientEnv() []string {
	return []string{
		"AWS_ENDPOINT_URL_DYNAMODB=http://" + dynamoAddr,
		"AWS_ENDPOINT_URL_SECRETS_MANAGER=http://" + motoAddr,
		"AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=local",
		"AWS_SECRET_ACCESS_KEY=local",
		"TABLE_NAME=" + localTable,
		"KEYRING_SECRET_ID=" + keyringSecret,
	}
}

func awsConfig(endpoint string) aws.Config {
	return aws.Config{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("local", "local", ""),
		BaseEndpoint: aws.String("http://" + endpoint),
	}
}

var (
	dynamoClient  = dynamo.NewClient(awsConfig(dynamoAddr))
	secretsClient = secretsmanager.NewFromConfig(awsConfig(motoAddr))
)

// store is a server of the stack: how to start it and how to tell it serves.
type store struct {
	name  string
	argv  []string
	ready func(context.Context) error
}

func stores(root string) []store {
	return []store{
		{
			name: "dynalite",
			argv: []string{"node", filepath.Join(root, "infra/local/node_modules/dynalite/cli.js"),
				"--host", "127.0.0.1", "--port", port(dynamoAddr), "--createTableMs", "0", "--deleteTableMs", "0", "--updateTableMs", "0"},
			ready: func(ctx context.Context) error {
				_, err := dynamoClient.ListTables(ctx, &dynamodb.ListTablesInput{})
				return err
			},
		},
		{
			name: "moto",
			argv: []string{filepath.Join(root, ".venv/bin/moto_server"), "-H", "127.0.0.1", "-p", port(motoAddr)},
			ready: func(ctx context.Context) error {
				_, err := secretsClient.ListSecrets(ctx, &secretsmanager.ListSecretsInput{})
				return err
			},
		},
	}
}

func port(addr string) string { return addr[strings.LastIndex(addr, ":")+1:] }

func createTable(ctx context.Context, tmpl *samtemplate.Template) error {
	in, err := tmpl.CreateTableInput("RunLogTable", localTable)
	if err != nil {
		return err
	}
	_, err = dynamoClient.CreateTable(ctx, in)
	var exists *types.ResourceInUseException
	if errors.As(err, &exists) {
		return nil
	}
	return err
}

// seedKeyring gives the stack a fresh development keyring in the format of DESIGN.md, and
// returns its active kid.
func seedKeyring(ctx context.Context) (string, error) {
	kid := "dev-" + strings.ToLower(rand.Text()[:10])
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return "", err
	}
	value, err := json.Marshal(map[string]any{"active": kid, "keys": map[string]string{kid: base64.StdEncoding.EncodeToString(key)}})
	if err != nil {
		return "", err
	}
	_, err = secretsClient.CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: aws.String(keyringSecret), SecretString: aws.String(string(value))})
	var exists *smtypes.ResourceExistsException
	if errors.As(err, &exists) {
		_, err = secretsClient.PutSecretValue(ctx, &secretsmanager.PutSecretValueInput{SecretId: aws.String(keyringSecret), SecretString: aws.String(string(value))})
	}
	return kid, err
}

// service is a process the stack started and must stop.
type service struct {
	name   string
	cmd    *exec.Cmd
	exited chan struct{}
	err    error
}

// ensure starts a store unless it already answers (another stack serves it), then waits until
// it does. It returns nil when it started nothing.
func ensure(ctx context.Context, log *slog.Logger, root string, s store) (*service, error) {
	if probe(ctx, s.ready) == nil {
		log.Info("reusing running store", "store", s.name)
		return nil, nil
	}
	logDir := filepath.Join(root, ".local", "logs")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, err
	}
	out, err := os.Create(filepath.Join(logDir, s.name+".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(s.argv[0], s.argv[1:]...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w (did `make` install the local tools?)", s.name, err)
	}
	svc := &service{name: s.name, cmd: cmd, exited: make(chan struct{})}
	go func() { svc.err = cmd.Wait(); out.Close(); close(svc.exited) }()
	begin := time.Now()
	for {
		err := probe(ctx, s.ready)
		if err == nil {
			log.Info("store started", "store", s.name, "pid", cmd.Process.Pid, "took", time.Since(begin).Round(time.Millisecond), "log", out.Name())
			return svc, nil
		}
		select {
		case <-svc.exited:
			return nil, fmt.Errorf("%s exited before it was ready (%v); see %s", s.name, svc.err, out.Name())
		case <-ctx.Done():
			svc.stop(log)
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Since(begin) > 60*time.Second {
			svc.stop(log)
			return nil, fmt.Errorf("%s not ready after 60s: %v; see %s", s.name, err, out.Name())
		}
	}
}

func probe(ctx context.Context, ready func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	return ready(ctx)
}

func (s *service) stop(log *slog.Logger) {
	gateway.StopGroup(s.cmd.Process.Pid, s.exited, 5*time.Second)
	log.Info("store stopped", "store", s.name)
}
