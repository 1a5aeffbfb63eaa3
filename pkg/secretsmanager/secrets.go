package secretsmanager

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdk "github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// Secrets keeps each webhook endpoint's (or subscription's) signing secrets in one secret,
// named Prefix + id, whose value is {"secrets": [...]} (webhook.SecretStore). The functions'
// roles may touch only secrets under Prefix. NewSecrets makes one.
type Secrets struct {
	// The client's methods Secrets calls (NewClient says why not the client).
	createSecret   func(context.Context, *sdk.CreateSecretInput, ...func(*sdk.Options)) (*sdk.CreateSecretOutput, error)
	putSecretValue func(context.Context, *sdk.PutSecretValueInput, ...func(*sdk.Options)) (*sdk.PutSecretValueOutput, error)
	getSecretValue func(context.Context, *sdk.GetSecretValueInput, ...func(*sdk.Options)) (*sdk.GetSecretValueOutput, error)
	deleteSecret   func(context.Context, *sdk.DeleteSecretInput, ...func(*sdk.Options)) (*sdk.DeleteSecretOutput, error)

	Prefix string
	// Stack, when set, tags every secret created with StackTag: the secrets are made at run
	// time, outside CloudFormation, and the tag finds the ones a deleted stack left
	// (docs/operations.md, "Removing a stack").
	Stack string
}

// NewSecrets are the secrets named prefix + id in c, tagged with stack when it is not "". It
// takes all four methods, so a function that only reads (Get) links the other three too: about
// 50 KB, against the whole API a stored client kept.
func NewSecrets(c *sdk.Client, prefix, stack string) Secrets {
	return Secrets{
		createSecret: c.CreateSecret, putSecretValue: c.PutSecretValue, getSecretValue: c.GetSecretValue, deleteSecret: c.DeleteSecret,
		Prefix: prefix, Stack: stack,
	}
}

// StackTag is the tag key naming the stack whose functions created a secret.
const StackTag = "interrupt-host:stack"

type secretValue struct {
	Secrets []string `json:"secrets"`
}

func (s Secrets) name(id string) *string { return aws.String(s.Prefix + id) }

// Put creates or replaces the endpoint's secrets.
func (s Secrets) Put(ctx context.Context, id string, secrets []string) error {
	v, err := json.Marshal(secretValue{Secrets: secrets})
	if err != nil {
		return err
	}
	in := &sdk.CreateSecretInput{Name: s.name(id), SecretString: aws.String(string(v))}
	if s.Stack != "" {
		in.Tags = []smtypes.Tag{{Key: aws.String(StackTag), Value: aws.String(s.Stack)}}
	}
	_, err = s.createSecret(ctx, in)
	if exists := (*smtypes.ResourceExistsException)(nil); errors.As(err, &exists) {
		_, err = s.putSecretValue(ctx, &sdk.PutSecretValueInput{SecretId: s.name(id), SecretString: aws.String(string(v))})
	}
	if err != nil {
		return fmt.Errorf("secretsmanager: store the secrets of %s: %w: %w", id, interrupt.ErrUnavailable, err)
	}
	return nil
}

// Get reads the endpoint's secrets; a secret not there is an error wrapping
// interrupt.ErrUnavailable, as webhook.SecretStore says.
func (s Secrets) Get(ctx context.Context, id string) ([]string, error) {
	out, err := s.getSecretValue(ctx, &sdk.GetSecretValueInput{SecretId: s.name(id), VersionStage: aws.String("AWSCURRENT")})
	if err != nil {
		return nil, fmt.Errorf("secretsmanager: read the secrets of %s: %w: %w", id, interrupt.ErrUnavailable, err)
	}
	var v secretValue
	if out.SecretString == nil || json.Unmarshal([]byte(*out.SecretString), &v) != nil {
		return nil, fmt.Errorf("secretsmanager: the secret of %s is not {\"secrets\": [...]}", id)
	}
	return v.Secrets, nil
}

// Delete removes the endpoint's secrets at once (no recovery window: the endpoint is gone).
func (s Secrets) Delete(ctx context.Context, id string) error {
	_, err := s.deleteSecret(ctx, &sdk.DeleteSecretInput{SecretId: s.name(id), ForceDeleteWithoutRecovery: aws.Bool(true)})
	if notFound := (*smtypes.ResourceNotFoundException)(nil); err != nil && !errors.As(err, &notFound) {
		return fmt.Errorf("secretsmanager: delete the secrets of %s: %w: %w", id, interrupt.ErrUnavailable, err)
	}
	return nil
}
