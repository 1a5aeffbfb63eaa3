package secretsmanager

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdk "github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"

	"github.com/interrupthost/interrupthost/pkg/keyring"
)

// Rotator is the Secrets Manager rotation of the keyring: each rotation adds a fresh 32-byte key
// and makes it active, and retires the kids that stopped being active more than Retain ago (the
// longest lifetime of a token), so no outstanding token is orphaned. A secret whose current value
// is not a keyring yet (as CloudFormation creates it) gets its first key. NewRotator makes one.
type Rotator struct {
	// The client's methods Rotator calls (NewClient says why not the client).
	getSecretValue           func(context.Context, *sdk.GetSecretValueInput, ...func(*sdk.Options)) (*sdk.GetSecretValueOutput, error)
	putSecretValue           func(context.Context, *sdk.PutSecretValueInput, ...func(*sdk.Options)) (*sdk.PutSecretValueOutput, error)
	updateSecretVersionStage func(context.Context, *sdk.UpdateSecretVersionStageInput, ...func(*sdk.Options)) (*sdk.UpdateSecretVersionStageOutput, error)
	describeSecret           func(context.Context, *sdk.DescribeSecretInput, ...func(*sdk.Options)) (*sdk.DescribeSecretOutput, error)

	// Retain is how long a superseded kid keeps verifying.
	Retain time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// NewRotator rotates secrets of c, retiring superseded kids retain after they stopped being
// active, on time.Now.
func NewRotator(c *sdk.Client, retain time.Duration) Rotator {
	return Rotator{
		getSecretValue: c.GetSecretValue, putSecretValue: c.PutSecretValue,
		updateSecretVersionStage: c.UpdateSecretVersionStage, describeSecret: c.DescribeSecret,
		Retain: retain,
	}
}

// Rotate runs one step of Secrets Manager's rotation protocol.
func (r Rotator) Rotate(ctx context.Context, step, secretID, token string) error {
	switch step {
	case "createSecret":
		return r.create(ctx, secretID, token)
	case "setSecret":
		return nil // the keyring is used only by this host: nothing outside the secret to update
	case "testSecret":
		raw, err := r.version(ctx, secretID, token, "AWSPENDING")
		if err != nil {
			return err
		}
		_, _, err = keyring.Parse(raw)
		return err
	case "finishSecret":
		return r.finish(ctx, secretID, token)
	default:
		return fmt.Errorf("secretsmanager: unknown rotation step %q", step)
	}
}

func (r Rotator) now() time.Time {
	if r.Now == nil {
		return time.Now().UTC()
	}
	return r.Now().UTC()
}

func (r Rotator) version(ctx context.Context, secretID, versionID, stage string) ([]byte, error) {
	in := &sdk.GetSecretValueInput{SecretId: &secretID, VersionStage: &stage}
	if versionID != "" {
		in.VersionId = &versionID
	}
	out, err := r.getSecretValue(ctx, in)
	if err != nil {
		return nil, err
	}
	return []byte(aws.ToString(out.SecretString)), nil
}

func (r Rotator) create(ctx context.Context, secretID, token string) error {
	if _, err := r.version(ctx, secretID, token, "AWSPENDING"); err == nil {
		return nil // this rotation's value exists already: the step is being retried
	} else if !isNotFound(err) {
		return err
	}
	current, err := r.version(ctx, secretID, "", "AWSCURRENT")
	if err != nil {
		return err
	}
	next, err := keyring.Next(current, r.now(), r.Retain)
	if err != nil {
		return err
	}
	_, err = r.putSecretValue(ctx, &sdk.PutSecretValueInput{
		SecretId: &secretID, ClientRequestToken: &token, SecretString: aws.String(string(next)), VersionStages: []string{"AWSPENDING"},
	})
	return err
}

func (r Rotator) finish(ctx context.Context, secretID, token string) error {
	current, err := r.current(ctx, secretID)
	if err != nil || current == token {
		return err
	}
	in := &sdk.UpdateSecretVersionStageInput{SecretId: &secretID, VersionStage: aws.String("AWSCURRENT"), MoveToVersionId: &token}
	if current != "" {
		in.RemoveFromVersionId = &current
	}
	_, err = r.updateSecretVersionStage(ctx, in)
	if err != nil {
		// The SDK retries a call whose answer was lost; the retry then fails on the move its
		// first attempt made. The stage says whether the move happened.
		if now, derr := r.current(ctx, secretID); derr == nil && now == token {
			return nil
		}
	}
	return err
}

// current is the version that holds AWSCURRENT.
func (r Rotator) current(ctx context.Context, secretID string) (string, error) {
	desc, err := r.describeSecret(ctx, &sdk.DescribeSecretInput{SecretId: &secretID})
	if err != nil {
		return "", err
	}
	for _, id := range slices.Sorted(maps.Keys(desc.VersionIdsToStages)) {
		if slices.Contains(desc.VersionIdsToStages[id], "AWSCURRENT") {
			return id, nil
		}
	}
	return "", nil
}

func isNotFound(err error) bool {
	var nf *smtypes.ResourceNotFoundException
	return errors.As(err, &nf)
}
