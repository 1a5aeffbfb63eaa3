package secretsmanager

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdk "github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
	"github.com/aws/smithy-go"

	"github.com/interrupthost/interrupthost/pkg/interrupt"
)

// Keyring reads the token keyring's secret (keyring.Source). NewKeyring makes one.
type Keyring struct {
	// getSecretValue is the client's method Keyring calls (NewClient says why not the client).
	getSecretValue func(context.Context, *sdk.GetSecretValueInput, ...func(*sdk.Options)) (*sdk.GetSecretValueOutput, error)
	SecretID       string
}

// NewKeyring reads the secret secretID of c.
func NewKeyring(c *sdk.Client, secretID string) Keyring {
	return Keyring{getSecretValue: c.GetSecretValue, SecretID: secretID}
}

// permanent reports whether Secrets Manager refused the read for good: the secret does not exist,
// or this function may not read or decrypt it. Throttling, a 5xx, a network error or the retries
// running out are not: the store may answer later.
func permanent(err error) bool {
	var notFound *types.ResourceNotFoundException
	var decrypt *types.DecryptionFailure
	var apiErr smithy.APIError
	return errors.As(err, &notFound) || errors.As(err, &decrypt) ||
		errors.As(err, &apiErr) && (apiErr.ErrorCode() == "AccessDeniedException" || apiErr.ErrorCode() == "UnrecognizedClientException")
}

// Fetch reads the secret's AWSCURRENT value. The stage is named, not left to the default: a
// rotation moves it, and the local moto server's default does not follow the move.
func (s Keyring) Fetch(ctx context.Context) ([]byte, error) {
	out, err := s.getSecretValue(ctx, &sdk.GetSecretValueInput{SecretId: &s.SecretID, VersionStage: aws.String("AWSCURRENT")})
	if permanent(err) {
		return nil, fmt.Errorf("keyring: read %s: %w", s.SecretID, err)
	}
	if err != nil {
		return nil, fmt.Errorf("keyring: read %s: %w: %w", s.SecretID, interrupt.ErrUnavailable, err)
	}
	if out.SecretString == nil {
		return nil, errors.New("keyring: the secret has no string value")
	}
	return []byte(*out.SecretString), nil
}
