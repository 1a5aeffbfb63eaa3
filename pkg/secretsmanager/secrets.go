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
// roles may touch only secrets under Prefix.
type Secrets struct {
	Client *sdk.Client
	Prefix string
	// Stack, when set, tags every secret created with StackTag: the secrets are made at run
	// time, outside CloudFormation, and the tag finds the ones a deleted stack left
	// (docs/operations.md, "Removing a stack").
	Stack string
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
	_, err = s.Client.CreateSecret(ctx, in)
	if exists := (*smtypes.ResourceExistsException)(nil); errors.As(err, &exists) {
		_, err = s.Client.PutSecretValue(ctx, &sdk.PutSecretValueInput{SecretId: s.name(id), SecretString: aws.String(string(v))})
	}
	if err != nil {
		return fmt.Errorf("secretsmanager: store the secrets of %s: %w: %w", id, interrupt.ErrUnavailable, err)
	}
	return nil
}

// Get reads the endpoint's secrets; a secret not there is an error wrapping
// interrupt.ErrUnavailable, as webhook.SecretStore says.
func (s Secrets) Get(ctx context.Context, id string) ([]string, error) {
	out, err := s.Client.GetSecretValue(ctx, &sdk.GetSecretValueInput{SecretId: s.name(id), VersionStage: aws.String("AWSCURRENT")})
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
	_, err := s.Client.DeleteSecret(ctx, &sdk.DeleteSecretInput{SecretId: s.name(id), ForceDeleteWithoutRecovery: aws.Bool(true)})
	if notFound := (*smtypes.ResourceNotFoundException)(nil); err != nil && !errors.As(err, &notFound) {
		return fmt.Errorf("secretsmanager: delete the secrets of %s: %w: %w", id, interrupt.ErrUnavailable, err)
	}
	return nil
}
