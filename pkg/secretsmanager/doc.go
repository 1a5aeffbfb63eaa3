// Package secretsmanager is the host's one adapter to AWS Secrets Manager: the token keyring's
// secret (read by keyring.Keyring, rotated by Rotator, Secrets Manager's rotation protocol) and
// the signing secrets of webhook endpoints and subscriptions (Secrets, a webhook.SecretStore).
// No other package imports the Secrets Manager SDK, so the domain, the host and the HTTP layer
// build without it.
package secretsmanager

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	sdk "github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// NewClient is the Secrets Manager client of cfg, built once at a function's init.
func NewClient(cfg aws.Config) *sdk.Client { return sdk.NewFromConfig(cfg) }
