package samtemplate

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Function is an AWS::Serverless::Function as the local gateway runs it.
type Function struct {
	LogicalID string
	// Name is the folder under functions/ that CodeUri names.
	Name string
	// Environment maps each variable to its template value (a string or an intrinsic), Globals
	// merged under the function's own.
	Environment map[string]any
	TimeoutSec  int
	MemoryMB    int
	Routes      []Route
	Schedules   []Schedule
	Streams     []Stream
	Queues      []QueueEvent
	// Rotates are the logical ids of the secrets whose rotation (an
	// AWS::SecretsManager::RotationSchedule naming its ARN) Secrets Manager runs it for.
	Rotates []string
	// Actions are what its execution role allows, from the role's inline policies.
	Actions []string
	// Statements are its execution role's statements (WritesKey reads them).
	Statements []Statement
}

// QueueEvent is an SQS event of a function: Lambda polls the queue and invokes the function with
// batches of its messages, deleting those the function handled.
type QueueEvent struct {
	Name string
	// Queue is the logical id of the queue.
	Queue     string
	BatchSize int
	// PartialBatch: the function reports the messages it did not handle (ReportBatchItemFailures).
	PartialBatch bool
}

// Stream is a DynamoDB event of a function: Lambda reads the table's stream and invokes the
// function with batches of its records that pass the filters.
type Stream struct {
	Name string
	// Table is the logical id of the table whose stream it reads.
	Table          string
	BatchSize      int
	BatchingWindow time.Duration
	// MaxRetries is how often a failed batch is retried (-1: until the record expires).
	MaxRetries int
	// Bisect splits a failed batch in two before retrying it.
	Bisect bool
	// PartialBatch: the function reports the records it did not handle (ReportBatchItemFailures).
	PartialBatch bool
	// Filters are event filter patterns (JSON); a record passes if any matches, or if none is set.
	Filters []string
	// MaxRecordAge is how old a record may be when its batch is invoked (0: as old as the stream
	// keeps it); older ones go to OnFailure.
	MaxRecordAge time.Duration
	// OnFailure is the logical id of the SQS queue a batch given up on is recorded in ("": it is
	// dropped).
	OnFailure string
}

// Schedule is a ScheduleV2 event of a function: EventBridge Scheduler invokes it with Input on
// the schedule.
type Schedule struct {
	Name       string
	Expression string
	Input      string
}

// Every is the period of a rate() schedule; the local stack runs no cron() ones.
func (s Schedule) Every() (time.Duration, error) {
	inner, ok := strings.CutPrefix(s.Expression, "rate(")
	inner, ok2 := strings.CutSuffix(inner, ")")
	count, unit, ok3 := strings.Cut(inner, " ")
	n, err := strconv.Atoi(count)
	if !ok || !ok2 || !ok3 || err != nil || n < 1 {
		return 0, fmt.Errorf("samtemplate: schedule %s: %q is not rate(<n> <unit>)", s.Name, s.Expression)
	}
	units := map[string]time.Duration{"minute": time.Minute, "minutes": time.Minute, "hour": time.Hour, "hours": time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour}
	d, ok := units[unit]
	if !ok {
		return 0, fmt.Errorf("samtemplate: schedule %s: unit %q", s.Name, unit)
	}
	return time.Duration(n) * d, nil
}

// NoAuthorizer is the authorizer of a route open to anyone (its function authenticates).
const NoAuthorizer = "NONE"

// Route is an HttpApi event of a function.
type Route struct {
	Method string
	// Path is the route's path template, e.g. /runs/{runId}/interrupts.
	Path  string
	ApiID string
	// Authorizer names the API's authorizer, or is NoAuthorizer.
	Authorizer string
	// Scopes are the route's AuthorizationScopes as the template writes them: strings, or
	// intrinsics (a !Sub of a scope prefix) that Resolver.Strings gives their local value.
	Scopes []any
}

// Key is the route key API Gateway puts in events: "POST /runs/{runId}".
func (r Route) Key() string { return r.Method + " " + r.Path }

// Functions lists the template's functions, ordered by logical id.
func (t *Template) Functions() ([]Function, error) {
	var out []Function
	for _, id := range slices.Sorted(maps.Keys(t.Resources)) {
		r := t.Resources[id]
		if r.Type != "AWS::Serverless::Function" {
			continue
		}
		f, err := t.function(id, r.Properties)
		if err != nil {
			return nil, fmt.Errorf("samtemplate: %s: %w", id, err)
		}
		if f.Rotates, err = t.rotates(id); err != nil {
			return nil, fmt.Errorf("samtemplate: %s: %w", id, err)
		}
		out = append(out, f)
	}
	return out, nil
}

// rotates are the secrets whose rotation schedules name function id's ARN.
func (t *Template) rotates(id string) ([]string, error) {
	var out []string
	for _, rid := range slices.Sorted(maps.Keys(t.Resources)) {
		r := t.Resources[rid]
		if r.Type != "AWS::SecretsManager::RotationSchedule" {
			continue
		}
		fn, err := getAtt(r.Properties["RotationLambdaARN"], "Arn")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rid, err)
		}
		ref, _ := r.Properties["SecretId"].(map[string]any)
		secret, ok := ref["Ref"].(string)
		if !ok {
			return nil, fmt.Errorf("%s: SecretId is not a !Ref of the template's secret", rid)
		}
		if fn == id {
			out = append(out, secret)
		}
	}
	return out, nil
}

func (t *Template) function(id string, props map[string]any) (Function, error) {
	var spec struct {
		CodeUri     string
		Role        any
		Timeout     int
		MemorySize  int
		Environment struct{ Variables map[string]any }
		Events      map[string]struct {
			Type       string
			Properties struct {
				ApiId              any
				Method             string
				Path               string
				ScheduleExpression string
				Input              string

				Stream                         any
				BatchSize                      int
				MaximumBatchingWindowInSeconds int
				MaximumRetryAttempts           *int
				MaximumRecordAgeInSeconds      int
				DestinationConfig              struct{ OnFailure struct{ Destination any } }
				Queue                          any
				BisectBatchOnFunctionError     bool
				FunctionResponseTypes          []string
				FilterCriteria                 struct{ Filters []struct{ Pattern string } }
				Auth                           struct {
					Authorizer          string
					AuthorizationScopes []any
				}
			}
		}
	}
	var global struct {
		Timeout     int
		MemorySize  int
		Environment struct{ Variables map[string]any }
	}
	if err := remarshal(t.Globals.Function, &global); err != nil {
		return Function{}, err
	}
	if err := remarshal(props, &spec); err != nil {
		return Function{}, err
	}
	f := Function{
		LogicalID:   id,
		Name:        strings.TrimSuffix(strings.TrimPrefix(spec.CodeUri, "functions/"), "/"),
		Environment: map[string]any{},
		TimeoutSec:  firstNonZero(spec.Timeout, global.Timeout, 3),
		MemoryMB:    firstNonZero(spec.MemorySize, global.MemorySize, 128),
	}
	if strings.Contains(f.Name, "/") || f.Name == "" {
		return Function{}, fmt.Errorf("CodeUri %q is not functions/<name>/", spec.CodeUri)
	}
	maps.Copy(f.Environment, global.Environment.Variables)
	maps.Copy(f.Environment, spec.Environment.Variables)
	if spec.Role != nil {
		role, err := getAtt(spec.Role, "Arn")
		if err != nil {
			return Function{}, fmt.Errorf("its role: %w", err)
		}
		if f.Actions, err = t.actions(role); err != nil {
			return Function{}, fmt.Errorf("role %s: %w", role, err)
		}
		if f.Statements, err = t.statements(role); err != nil {
			return Function{}, fmt.Errorf("role %s: %w", role, err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(spec.Events)) {
		ev := spec.Events[name]
		if ev.Type == "ScheduleV2" {
			f.Schedules = append(f.Schedules, Schedule{Name: name, Expression: ev.Properties.ScheduleExpression, Input: ev.Properties.Input})
			continue
		}
		if ev.Type == "DynamoDB" {
			st, err := stream(name, ev.Properties.Stream)
			if err != nil {
				return Function{}, err
			}
			p := ev.Properties
			st.BatchSize, st.BatchingWindow, st.Bisect = firstNonZero(p.BatchSize, 100), time.Duration(p.MaximumBatchingWindowInSeconds)*time.Second, p.BisectBatchOnFunctionError
			st.MaxRetries = -1
			if p.MaximumRetryAttempts != nil {
				st.MaxRetries = *p.MaximumRetryAttempts
			}
			st.PartialBatch = slices.Contains(p.FunctionResponseTypes, "ReportBatchItemFailures")
			for _, f := range p.FilterCriteria.Filters {
				st.Filters = append(st.Filters, f.Pattern)
			}
			if p.MaximumRecordAgeInSeconds > 0 {
				st.MaxRecordAge = time.Duration(p.MaximumRecordAgeInSeconds) * time.Second
			}
			if d := p.DestinationConfig.OnFailure.Destination; d != nil {
				if st.OnFailure, err = getAtt(d, "Arn"); err != nil {
					return Function{}, fmt.Errorf("stream event %s: OnFailure: %w", name, err)
				}
			}
			f.Streams = append(f.Streams, st)
			continue
		}
		if ev.Type == "SQS" {
			queue, err := getAtt(ev.Properties.Queue, "Arn")
			if err != nil {
				return Function{}, fmt.Errorf("SQS event %s: Queue: %w", name, err)
			}
			f.Queues = append(f.Queues, QueueEvent{
				Name: name, Queue: queue, BatchSize: firstNonZero(ev.Properties.BatchSize, 10),
				PartialBatch: slices.Contains(ev.Properties.FunctionResponseTypes, "ReportBatchItemFailures"),
			})
			continue
		}
		if ev.Type != "HttpApi" {
			continue
		}
		api, _ := ev.Properties.ApiId.(map[string]any)["Ref"].(string)
		authorizer := ev.Properties.Auth.Authorizer
		if authorizer == "" {
			authorizer = t.defaultAuthorizer(api)
		}
		f.Routes = append(f.Routes, Route{
			Method: strings.ToUpper(ev.Properties.Method), Path: ev.Properties.Path, ApiID: api,
			Authorizer: authorizer, Scopes: ev.Properties.Auth.AuthorizationScopes,
		})
	}
	return f, nil
}

// actions are the actions an IAM role's inline policies allow, sorted, once each.
func (t *Template) actions(roleID string) ([]string, error) {
	r, ok := t.Resources[roleID]
	if !ok || r.Type != "AWS::IAM::Role" {
		return nil, fmt.Errorf("no AWS::IAM::Role %s", roleID)
	}
	var role struct {
		Policies []struct {
			PolicyDocument struct {
				Statement []struct {
					Effect string
					Action any
				}
			}
		}
	}
	if err := remarshal(r.Properties, &role); err != nil {
		return nil, err
	}
	var out []string
	for _, p := range role.Policies {
		for _, st := range p.PolicyDocument.Statement {
			if st.Effect != "Allow" {
				continue
			}
			switch a := st.Action.(type) {
			case string:
				out = append(out, a)
			case []any:
				for _, v := range a {
					s, ok := v.(string)
					if !ok {
						return nil, fmt.Errorf("an action %v that is no string", v)
					}
					out = append(out, s)
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// stream reads a DynamoDB event's Stream: the GetAtt of a table's StreamArn.
func stream(name string, v any) (Stream, error) {
	table, err := getAtt(v, "StreamArn")
	if err != nil {
		return Stream{}, fmt.Errorf("stream event %s: Stream: %w", name, err)
	}
	return Stream{Name: name, Table: table}, nil
}

// getAtt is the logical id of v, a !GetAtt of the resource's attribute attr.
func getAtt(v any, attr string) (string, error) {
	m, _ := v.(map[string]any)
	var parts []string
	switch a := m["Fn::GetAtt"].(type) {
	case string:
		parts = strings.SplitN(a, ".", 2)
	case []any:
		for _, p := range a {
			s, _ := p.(string)
			parts = append(parts, s)
		}
	}
	if len(parts) != 2 || parts[1] != attr || parts[0] == "" {
		return "", fmt.Errorf("%v is not !GetAtt <Resource>.%s", v, attr)
	}
	return parts[0], nil
}

// defaultAuthorizer is the API's DefaultAuthorizer, or NoAuthorizer when it has none.
func (t *Template) defaultAuthorizer(apiID string) string {
	var spec struct {
		Auth struct{ DefaultAuthorizer string }
	}
	if err := remarshal(t.Resources[apiID].Properties, &spec); err != nil || spec.Auth.DefaultAuthorizer == "" {
		return NoAuthorizer
	}
	return spec.Auth.DefaultAuthorizer
}

func firstNonZero(v ...int) int {
	for _, n := range v {
		if n != 0 {
			return n
		}
	}
	return 0
}

// JWTAuthorizer is an HTTP API's JWT authorizer, its values unresolved.
type JWTAuthorizer struct {
	IdentitySource string
	Issuer         any
	// Audience is a list of values, or one value that is a list (a Ref to a CommaDelimitedList
	// parameter): Resolver.List reads either.
	Audience any
}

// Authorizer returns the JWT authorizer name of the HTTP API apiID.
func (t *Template) Authorizer(apiID, name string) (JWTAuthorizer, error) {
	r, ok := t.Resources[apiID]
	if !ok || r.Type != "AWS::Serverless::HttpApi" {
		return JWTAuthorizer{}, fmt.Errorf("samtemplate: no AWS::Serverless::HttpApi %s", apiID)
	}
	var spec struct {
		Auth struct {
			Authorizers map[string]struct {
				IdentitySource   string
				JwtConfiguration struct {
					Issuer   any `json:"issuer"`
					Audience any `json:"audience"`
				}
			}
		}
	}
	if err := remarshal(r.Properties, &spec); err != nil {
		return JWTAuthorizer{}, err
	}
	a, ok := spec.Auth.Authorizers[name]
	if !ok {
		return JWTAuthorizer{}, fmt.Errorf("samtemplate: %s has no authorizer %s", apiID, name)
	}
	return JWTAuthorizer{IdentitySource: a.IdentitySource, Issuer: a.JwtConfiguration.Issuer, Audience: a.JwtConfiguration.Audience}, nil
}

// Resolver turns template values into strings: Refs to parameters take the override or the
// parameter's default, Refs to resources take the local name the stack gave them, a !Sub of a
// string substitutes the same for each ${Name}, a !Select picks from a list (List), and a !Join
// joins one.
type Resolver struct {
	Template  *Template
	Overrides map[string]string
	Resources map[string]string
}

// String resolves v, refusing intrinsics the local stack cannot evaluate.
func (r Resolver) String(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case bool:
		return strconv.FormatBool(x), nil
	case map[string]any:
		if ref, ok := x["Ref"].(string); ok && len(x) == 1 {
			if v, ok := r.Overrides[ref]; ok {
				return v, nil
			}
			if v, ok := r.Resources[ref]; ok {
				return v, nil
			}
			if p, ok := r.Template.Parameters[ref]; ok && p.Default != nil {
				return r.String(p.Default)
			}
			return "", fmt.Errorf("samtemplate: Ref %s has no local value", ref)
		}
		if sub, ok := x["Fn::Sub"].(string); ok && len(x) == 1 {
			var err error
			out := subRef.ReplaceAllStringFunc(sub, func(m string) string {
				v, rerr := r.String(map[string]any{"Ref": m[2 : len(m)-1]})
				if rerr != nil && err == nil {
					err = rerr
				}
				return v
			})
			return out, err
		}
		if j, ok := x["Fn::Join"].([]any); ok && len(x) == 1 && len(j) == 2 {
			sep, ok := j[0].(string)
			if !ok {
				return "", fmt.Errorf("samtemplate: !Join's separator %v is not a string", j[0])
			}
			list, err := r.List(j[1])
			return strings.Join(list, sep), err
		}
		if sel, ok := x["Fn::Select"].([]any); ok && len(x) == 1 && len(sel) == 2 {
			i, err := r.String(sel[0])
			if err != nil {
				return "", err
			}
			list, err := r.List(sel[1])
			if err != nil {
				return "", err
			}
			n, err := strconv.Atoi(i)
			if err != nil || n < 0 || n >= len(list) {
				return "", fmt.Errorf("samtemplate: !Select %s of %d values", i, len(list))
			}
			return list[n], nil
		}
	}
	return "", fmt.Errorf("samtemplate: cannot resolve %v locally", v)
}

// List resolves v as a list: a list of values, each resolved by String, or a Ref to a
// CommaDelimitedList parameter, whose value is split at its commas as CloudFormation splits it.
func (r Resolver) List(v any) ([]string, error) {
	if vs, ok := v.([]any); ok {
		return r.Strings(vs)
	}
	if x, ok := v.(map[string]any); ok && len(x) == 1 {
		if ref, ok := x["Ref"].(string); ok && r.Template.Parameters[ref].Type == "CommaDelimitedList" {
			s, err := r.String(v)
			if err != nil {
				return nil, err
			}
			return strings.Split(s, ","), nil
		}
	}
	return nil, fmt.Errorf("samtemplate: %v is not a list the local stack can resolve", v)
}

// subRef is a ${Name} of a !Sub.
var subRef = regexp.MustCompile(`\$\{[A-Za-z0-9:]+\}`)

// Strings resolves each of vs.
func (r Resolver) Strings(vs []any) ([]string, error) {
	out := make([]string, len(vs))
	for i, v := range vs {
		var err error
		if out[i], err = r.String(v); err != nil {
			return nil, err
		}
	}
	return out, nil
}
