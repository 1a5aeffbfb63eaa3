package operator_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/interrupthost/interrupthost/pkg/operator"
)

// TestUsageErrors: a command line ihctl cannot run is refused as ErrUsage before any call (the
// URL points nowhere that answers).
func TestUsageErrors(t *testing.T) {
	t.Parallel()
	withURL := func(k string) string {
		return map[string]string{operator.EnvURL: "http://127.0.0.1:1", operator.EnvToken: "jwt"}[k]
	}
	for _, tc := range []struct {
		name   string
		args   []string
		getenv func(string) string
	}{
		{"no URL", []string{"run", "r1"}, func(k string) string { return map[string]string{operator.EnvToken: "jwt"}[k] }},
		{"no token", []string{"run", "r1"}, func(k string) string { return map[string]string{operator.EnvURL: "http://127.0.0.1:1"}[k] }},
		{"an empty token", []string{"run", "r1"}, func(k string) string {
			return map[string]string{operator.EnvURL: "http://127.0.0.1:1", operator.EnvToken: " "}[k]
		}},
		{"an unknown output", []string{"-o", "yaml", "run", "r1"}, withURL},
		{"cancel without its run", []string{"cancel"}, withURL},
		{"complete with an unknown flag", []string{"complete", "r1", "--why", "x"}, withURL},
		{"contact alone", []string{"contact"}, withURL},
		{"contact put without its ref", []string{"contact", "put", "principal"}, withURL},
		{"contacts with an argument", []string{"contacts", "x"}, withURL},
		{"no command", nil, withURL},
		{"an unknown command", []string{"frobnicate"}, withURL},
		{"an unknown flag", []string{"--verbose", "run", "r1"}, withURL},
		{"run without its run", []string{"run"}, withURL},
		{"run with two", []string{"run", "r1", "r2"}, withURL},
		{"events with a bad --every", []string{"events", "r1", "--every", "0s"}, withURL},
		{"events with an unknown flag", []string{"events", "r1", "--tail"}, withURL},
		{"link without its node", []string{"link", "r1"}, withURL},
		{"pending with an argument", []string{"pending", "r1"}, withURL},
		{"pending with a negative page", []string{"pending", "--page", "-1"}, withURL},
		{"pending of a run with a page", []string{"pending", "--run", "r1", "--page", "2"}, withURL},
		{"resend without its event", []string{"resend", "sub_1"}, withURL},
		{"notify without its node", []string{"notify", "sub_1", "r1"}, withURL},
		{"endpoint alone", []string{"endpoint"}, withURL},
		{"endpoints with an argument", []string{"endpoints", "we_1"}, withURL},
		{"an unknown endpoint command", []string{"endpoint", "list", "x"}, withURL},
		{"endpoint create without a secret", []string{"endpoint", "create", "stripe"}, withURL},
		{"slack alone", []string{"slack"}, withURL},
		{"slack put without its workspace", []string{"slack", "put", "A0001"}, withURL},
		{"slack put without a secret", []string{"slack", "put", "A0001", "T0001"}, withURL},
		{"an unknown slack command", []string{"slack", "rotate"}, withURL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := operator.Run(context.Background(), tc.args, tc.getenv, operator.IO{In: strings.NewReader("\n"), Out: &bytes.Buffer{}})
			if !errors.Is(err, operator.ErrUsage) {
				t.Errorf("%v: %v, want ErrUsage", tc.args, err)
			}
		})
	}
}
