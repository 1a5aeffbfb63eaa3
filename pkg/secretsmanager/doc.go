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
//
// Secrets, Keyring and Rotator hold the client's methods they call (NewSecrets, NewKeyring,
// NewRotator), never the client. Secrets and Keyring are kept behind interfaces
// (webhook.SecretStore, keyring.Source), and once text/template's MethodByName is linked
// (gojsonschema, html/template) the linker keeps every exported method of whatever such a
// value holds: a stored *secretsmanager.Client kept all 26 Secrets Manager API operations alive
// (0.25 to 0.31 MiB of each function that links it). Rotator, behind none, holds its methods
// alike, so that none holds the client.
func NewClient(cfg aws.Config) *sdk.Client { return sdk.NewFromConfig(cfg) }
