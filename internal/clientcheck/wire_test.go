package clientcheck_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/interrupthost/interrupthost/client"
	"github.com/interrupthost/interrupthost/pkg/apigw/jsonapi"
	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/outbound"
	"github.com/interrupthost/interrupthost/pkg/runlog"
)

// fill sets every exported field of v, recursively, to a value that is not zero, so that what
// the server would encode of it is every member it can send.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	case reflect.Slice:
		if v.Type() == reflect.TypeFor[json.RawMessage]() {
			v.SetBytes([]byte(`{"a":1}`))
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0))
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(7)
	case reflect.Float64:
		v.SetFloat(0.5)
	}
}

// members lists the members of a JSON document as paths, arrays' elements under "[]".
func members(v any, at string, out *[]string) {
	switch n := v.(type) {
	case map[string]any:
		for k, c := range n {
			*out = append(*out, at+"/"+k)
			members(c, at+"/"+k, out)
		}
	case []any:
		for _, c := range n {
			members(c, at+"[]", out)
		}
	}
}

func memberSet(t *testing.T, b []byte) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	var out []string
	members(v, "", &out)
	slices.Sort(out)
	return slices.Compact(out)
}

// TestWireTypesAreTheServers: each client type reads every member the server sends of its
// counterpart (decoding refuses an unknown one) and writes back exactly those, so the client's
// mirror of the wire cannot drift from the server's types. Opaque members (a payload, a resume
// value) are compared as members, not as their contents.
func TestWireTypesAreTheServers(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name           string
		server, client any
	}{
		{"request-interrupt's answer", &host.InterruptView{}, &client.Interrupt{}},
		{"a resolve's answer", &host.Resolution{}, &client.Resolution{}},
		{"a request's token", &host.TokenView{}, &client.Token{}},
		{"a snapshot", &runlog.Snapshot{}, &client.Snapshot{}},
		{"a page of events", &host.EventPage{}, &client.Page{}},
		{"a delivery", &outbound.Message{}, &client.Delivery{}},
		{"a created subscription", &outbound.Created{}, &client.Subscription{}},
		{"a delivery attempt", &outbound.Attempt{}, &client.Attempt{}},
		{"a token request, the other way", &client.TokenRequest{}, &host.TokenRequest{}},
		{"a webhook endpoint", &jsonapi.EndpointView{}, &client.Endpoint{}},
		{"a page of pending interrupts", &host.PendingPage{}, &client.PendingPage{}},
		{"a minted token", &jsonapi.MintedToken{}, &client.Token{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fill(reflect.ValueOf(tt.server).Elem())
			sent, err := json.Marshal(tt.server)
			if err != nil {
				t.Fatal(err)
			}
			dec := json.NewDecoder(strings.NewReader(string(sent)))
			dec.DisallowUnknownFields()
			if err := dec.Decode(tt.client); err != nil {
				t.Fatalf("%T does not read %T: %v\n%s", tt.client, tt.server, err, sent)
			}
			back, err := json.Marshal(tt.client)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := memberSet(t, back), memberSet(t, sent); !slices.Equal(got, want) {
				t.Errorf("%T writes %v,\nthe server sends %v", tt.client, got, want)
			}
		})
	}
}
