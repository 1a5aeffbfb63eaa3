package secretsmanager_test

import (
	"context"
	"crypto/rand"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdk "github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"

	"github.com/interrupthost/interrupthost/internal/localaws"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/secretsmanager"
)

// TestSecretsAreTaggedWithTheirStack: a secret the functions create carries the stack's tag
// (a replace keeps it), one created without a stack carries none, and a delete removes it at
// once, so nothing of a deleted endpoint or subscription is left behind: a read of it answers
// interrupt.ErrUnavailable (webhook.SecretStore), and deleting it again is no error.
func TestSecretsAreTaggedWithTheirStack(t *testing.T) {
	localaws.NeedsStack(t)
	t.Parallel()
	ctx := context.Background()
	c := localaws.SecretsManager()
	prefix := "test/" + strings.ToLower(rand.Text()) + "/"
	tagged := secretsmanager.NewSecrets(c, prefix, "interrupt-host-prod")
	untagged := secretsmanager.NewSecrets(c, prefix, "")
	t.Cleanup(func() {
		for _, id := range []string{"we_1", "we_2"} {
			_ = untagged.Delete(context.Background(), id)
		}
	})
	tags := func(id string) []string {
		t.Helper()
		out, err := c.DescribeSecret(ctx, &sdk.DescribeSecretInput{SecretId: aws.String(prefix + id)})
		if err != nil {
			t.Fatal(err)
		}
		var kv []string
		for _, tag := range out.Tags {
			kv = append(kv, aws.ToString(tag.Key)+"="+aws.ToString(tag.Value))
		}
		return kv
	}
	if err := tagged.Put(ctx, "we_1", []string{"whsec_a"}); err != nil {
		t.Fatal(err)
	}
	if err := tagged.Put(ctx, "we_1", []string{"whsec_b"}); err != nil {
		t.Fatal(err)
	}
	if got := tags("we_1"); !slices.Equal(got, []string{"interrupt-host:stack=interrupt-host-prod"}) {
		t.Errorf("tags %v", got)
	}
	if got, err := tagged.Get(ctx, "we_1"); err != nil || !slices.Equal(got, []string{"whsec_b"}) {
		t.Errorf("Get = %v, %v", got, err)
	}
	if err := untagged.Put(ctx, "we_2", []string{"whsec_c"}); err != nil {
		t.Fatal(err)
	}
	if got := tags("we_2"); len(got) != 0 {
		t.Errorf("a secret created without a stack has tags %v", got)
	}
	for _, id := range []string{"we_1", "we_2"} {
		if err := tagged.Delete(ctx, id); err != nil {
			t.Fatal(err)
		}
		_, err := c.DescribeSecret(ctx, &sdk.DescribeSecretInput{SecretId: aws.String(prefix + id)})
		if notFound := (*smtypes.ResourceNotFoundException)(nil); !errors.As(err, &notFound) {
			t.Errorf("%s after its delete: %v", id, err)
		}
		if got, err := tagged.Get(ctx, id); !errors.Is(err, interrupt.ErrUnavailable) {
			t.Errorf("%s read after its delete: %v %v, want interrupt.ErrUnavailable", id, got, err)
		}
		if err := tagged.Delete(ctx, id); err != nil {
			t.Errorf("%s deleted again: %v", id, err)
		}
	}
}
