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
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"

	"github.com/interrupthost/interrupthost/infra/local/gateway"
	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/internal/samtemplate"
	"github.com/interrupthost/interrupthost/pkg/token"
)

const (
	dynamoAddr  = localaws.DynamoDBAddr
	motoAddr    = localaws.SecretsManagerAddr
	gatewayAddr = "127.0.0.1:3000"
	// overridePrincipal may release approvals alone locally (template parameter OverridePrincipals).
	overridePrincipal = "supervisor"
)

// instance is what one stack owns: its table and keyring secret in the shared stores, and a
// folder for its function binaries and logs. `stack run` owns the well-known ones; every `stack
// exec` gets its own, removed when it ends, so tests run while `make run` serves leave that
// stack's data, keys, binaries and logs alone.
type instance struct {
	table, keyring string
	// webhooks, subscriptions, slack and teams are the name prefixes of its webhook endpoints',
	// subscriptions', Slack apps' and Teams bots' secrets.
	webhooks, subscriptions, slack, teams string
	// dir holds functions/ (the binaries) and logs/.
	dir  string
	logs string
	// temporary instances are removed from the stores when the stack stops.
	temporary bool
}

func newInstance(root string, exec bool) instance {
	in := instance{table: "interrupt-host-local", keyring: "interrupt-host-local/keyring",
		webhooks: "interrupt-host-local/webhook-endpoints/", subscriptions: "interrupt-host-local/subscriptions/", slack: "interrupt-host-local/slack/", teams: "interrupt-host-local/teams/", dir: filepath.Join(root, ".local")}
	if exec {
		id := strings.ToLower(rand.Text()[:8])
		in = instance{
			table: "interrupt-host-exec-" + id, keyring: "interrupt-host-exec-" + id + "/keyring",
			webhooks: "interrupt-host-exec-" + id + "/webhook-endpoints/", subscriptions: "interrupt-host-exec-" + id + "/subscriptions/", slack: "interrupt-host-exec-" + id + "/slack/", teams: "interrupt-host-exec-" + id + "/teams/", dir: filepath.Join(root, ".local", "exec-"+id), temporary: true,
		}
	}
	in.logs = filepath.Join(in.dir, "logs")
	return in
}

// functions is the folder of the instance's function binaries (STACK_FUNCTIONS for commands
// under `stack exec`, which run gateways of their own over them).
func (in instance) functions() string { return filepath.Join(in.dir, "functions") }

// remove deletes a temporary instance's table and secret, and its folder unless its logs are
// wanted (the command it served failed).
func (in instance) remove(ctx context.Context, keepLogs bool) error {
	if !in.temporary {
		return nil
	}
	_, err := dynamoClient.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(in.table)})
	_, serr := secretsClient.DeleteSecret(ctx, &secretsmanager.DeleteSecretInput{SecretId: aws.String(in.keyring), ForceDeleteWithoutRecovery: aws.Bool(true)})
	serr = errors.Join(serr, in.removeSecrets(ctx, in.webhooks), in.removeSecrets(ctx, in.subscriptions), in.removeSecrets(ctx, in.slack), in.removeSecrets(ctx, in.teams))
	folder := os.RemoveAll(in.functions())
	if !keepLogs {
		folder = os.RemoveAll(in.dir)
	}
	return errors.Join(err, serr, folder)
}

// removeSecrets deletes the secrets made under the instance's prefix (webhook endpoints',
// subscriptions', Slack apps', Teams bots').
func (in instance) removeSecrets(ctx context.Context, prefix string) error {
	pages := secretsmanager.NewListSecretsPaginator(secretsClient, &secretsmanager.ListSecretsInput{
		Filters: []smtypes.Filter{{Key: smtypes.FilterNameStringTypeName, Values: []string{prefix}}},
	})
	var errs []error
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, sec := range page.SecretList {
			if sec.Name != nil && strings.HasPrefix(*sec.Name, prefix) {
				_, err := secretsClient.DeleteSecret(ctx, &secretsmanager.DeleteSecretInput{SecretId: sec.Name, ForceDeleteWithoutRecovery: aws.Bool(true)})
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// clientEnv is what a function or a test needs to reach the stores and the instance's data.
func (in instance) clientEnv() []string {
	return []string{
		"AWS_ENDPOINT_URL_DYNAMODB=http://" + dynamoAddr,
		"AWS_ENDPOINT_URL_SECRETS_MANAGER=http://" + motoAddr,
		"AWS_ENDPOINT_URL_SESV2=http://" + motoAddr,
		"AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=local",
		"AWS_SECRET_ACCESS_KEY=local",
		"TABLE_NAME=" + in.table,
		"KEYRING_SECRET_ID=" + in.keyring,
		"WEBHOOK_SECRET_PREFIX=" + in.webhooks,
		"SUBSCRIPTION_SECRET_PREFIX=" + in.subscriptions,
		"SLACK_SECRET_PREFIX=" + in.slack,
		"TEAMS_SECRET_PREFIX=" + in.teams,
	}
}

var (
	dynamoClient  = localaws.DynamoDB()
	secretsClient = localaws.SecretsManager()
	sesClient     = localaws.SES()
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

func (inst instance) createTable(ctx context.Context, tmpl *samtemplate.Template) error {
	in, err := tmpl.CreateTableInput("RunLogTable", inst.table)
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

// seedKeyring gives the stack a fresh development keyring in the format of docs/approvers.md ("Signed tokens"),
// and returns its active kid. It holds a legacy kid too, as a deployment that still honours v1
// tokens does, so the v1 form is resolved locally as it would be there.
func (in instance) seedKeyring(ctx context.Context) (string, error) {
	kid := "dev-" + strings.ToLower(rand.Text()[:10])
	keys := map[string]string{}
	for _, k := range []string{kid, token.LegacyKid} {
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return "", err
		}
		keys[k] = base64.StdEncoding.EncodeToString(key)
	}
	value, err := json.Marshal(map[string]any{"active": kid, "keys": keys})
	if err != nil {
		return "", err
	}
	_, err = secretsClient.CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: aws.String(in.keyring), SecretString: aws.String(string(value))})
	var exists *smtypes.ResourceExistsException
	if errors.As(err, &exists) {
		_, err = secretsClient.PutSecretValue(ctx, &secretsmanager.PutSecretValueInput{SecretId: aws.String(in.keyring), SecretString: aws.String(string(value))})
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
