package keyring

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// SecretsManager reads the keyring secret from AWS Secrets Manager.
type SecretsManager struct {
	Client   *secretsmanager.Client
	SecretID string
}

// Fetch reads the secret's AWSCURRENT value. The stage is named, not left to the default: a
// rotation moves it, and the local moto server's default does not follow the move.
func (s SecretsManager) Fetch(ctx context.Context) ([]byte, error) {
	out, err := s.Client.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: &s.SecretID, VersionStage: aws.String("AWSCURRENT")})
	if err != nil {
		return nil, fmt.Errorf("keyring: read %s: %w: %w", s.SecretID, interrupt.ErrUnavailable, err)
	}
	if out.SecretString == nil {
		return nil, errors.New("keyring: the secret has no string value")
	}
	return []byte(*out.SecretString), nil
}
