// Package rotation is rotate-keys' wiring: Secrets Manager's rotation of the token keyring. It
// links the Secrets Manager client and nothing of the table.
package rotation

import (
	"context"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/interrupthost/interrupthost/pkg/awsconfig"
	"github.com/interrupthost/interrupthost/pkg/environ"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/secretsmanager"
)

// Handler is the rotate-keys function: Secrets Manager's rotation of the keyring, which
// keeps superseded kids for the longest token lifetime (plus the keyring cache's TTL) so that no
// outstanding token is orphaned.
func Handler(ctx context.Context) (func(context.Context, events.SecretsManagerSecretRotationEvent) error, error) {
	cfg, err := awsconfig.Load(ctx)
	if err != nil {
		return nil, err
	}
	r := secretsmanager.NewRotator(secretsmanager.NewClient(cfg), host.MaxTokenTTL+time.Hour)
	log := environ.Logger()
	return func(ctx context.Context, ev events.SecretsManagerSecretRotationEvent) error {
		err := r.Rotate(ctx, ev.Step, ev.SecretID, ev.ClientRequestToken)
		if err != nil {
			log.Error("rotation step failed", "step", ev.Step, "error", err)
		} else {
			log.Info("rotation step done", "step", ev.Step)
		}
		return err
	}, nil
}
