package gateway

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
)

// rotation is a secret whose rotation Secrets Manager runs function for (the template's
// AWS::SecretsManager::RotationSchedule): secret is its name here.
type rotation struct {
	function, secret string
	pool             *Pool
}

// rotationSteps are the steps Secrets Manager invokes a rotation function with, in order.
var rotationSteps = []string{"createSecret", "setSecret", "testSecret", "finishSecret"}

// Rotate stands in for Secrets Manager's rotation of the template's secret (its logical id), as
// RotateSecret or the schedule starts it in AWS: one new version token, then the rotation
// function invoked under the emulator with each step's event in order, each waited for; the
// first step that fails ends it, as Secrets Manager's rotation does. It answers the secret's
// name.
func (g *Gateway) Rotate(ctx context.Context, secret string) (string, error) {
	r := g.rotations[secret]
	if r == nil {
		return "", fmt.Errorf("gateway: no rotation schedule names %s", secret)
	}
	token := newVersionID()
	for _, step := range rotationSteps {
		event, err := json.Marshal(map[string]string{"Step": step, "SecretId": r.secret, "ClientRequestToken": token})
		if err != nil {
			return "", err
		}
		out, err := r.pool.Invoke(ctx, newRequestID(), event)
		if err != nil {
			return "", fmt.Errorf("gateway: %s %s: %w", r.function, step, err)
		}
		var failed struct {
			ErrorType    string `json:"errorType"`
			ErrorMessage string `json:"errorMessage"`
		}
		if json.Unmarshal(out, &failed) == nil && failed.ErrorType != "" {
			return "", fmt.Errorf("gateway: %s %s: %w", r.function, step, errors.New(failed.ErrorType+": "+failed.ErrorMessage))
		}
		g.log.Info("rotation step done", "function", r.function, "secret", r.secret, "step", step)
	}
	return r.secret, nil
}

// newVersionID is a version token as Secrets Manager makes one: a UUID (version 4).
func newVersionID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
