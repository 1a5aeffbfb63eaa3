// Package gentemplate writes the parts of template.yaml that every function repeats (its log
// group, its role, its AWS::Serverless::Function with the API's routes, its queries in the
// errors and throttles alarms and its line on the dashboard) from functions/manifest.yaml and
// routes.Functions(), so that a function is added in one place and no copy of it can drift.
//
// It rewrites only the regions template.yaml marks, as text: the template is never parsed and
// written back, which would lose its comments and short-form intrinsics (!GetAtt, !Sub, ...).
package gentemplate

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"gopkg.in/yaml.v3"

	"github.com/interrupthost/interrupthost/pkg/apigw"
	"github.com/interrupthost/interrupthost/pkg/apigw/routes"
)

// ManifestPath is the manifest's path under the repository's root, which the markers and the
// errors name so that whoever meets them knows where to make the change.
const ManifestPath = "functions/manifest.yaml"

// The markers of template.yaml. A region runs from its BEGIN line to its END line, which name
// the same kind: functions (every function's resources), or Errors or Throttles (the items of
// that alarm's Metrics). The dashboard's body is a JSON string, where a comment cannot stand:
// the comment above the Dashboard resource marks the first line after it that starts with
// dashboardLine.
var (
	beginMarker = regexp.MustCompile(`^( *)# BEGIN generated (\S+) from ` + regexp.QuoteMeta(ManifestPath) + ` `)
	endMarker   = regexp.MustCompile(`^ *# END generated (\S+)$`)
)

const (
	dashboardMarker = "# GENERATED: the body's line of every function's errors and throttles"
	dashboardLine   = `"metrics": [["AWS/Lambda", "Errors", `
)

// function is an entry of the manifest (its header documents the fields).
type function struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	API         bool   `yaml:"api"`
	Routes      events `yaml:"routes"`
	Resources   string `yaml:"resources"`
	Statements  string `yaml:"statements"`
	Properties  string `yaml:"properties"`
}

// event is an HttpApi event: its name in the function's Events, and apigw's route key.
type event struct{ Name, Route string }

// events are a manifest's routes, in the order written (a mapping, which yaml.v3 would
// otherwise read into an unordered map).
type events []event

// UnmarshalYAML reads a mapping of event names to routes, keeping its order.
func (e *events) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: routes is not a mapping of event names to routes", n.Line)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		*e = append(*e, event{Name: n.Content[i].Value, Route: n.Content[i+1].Value})
	}
	return nil
}

// Template is template.yaml under root as it is (have) and as functions/manifest.yaml and
// routes.Functions() generate it (want). It fails when a folder under functions/ has no entry
// or an entry no folder, since either is a function deployed without its code or never
// deployed.
func Template(root string) (have, want []byte, err error) {
	have, err = os.ReadFile(filepath.Join(root, "template.yaml"))
	if err != nil {
		return nil, nil, err
	}
	manifest, err := os.ReadFile(filepath.Join(root, ManifestPath))
	if err != nil {
		return nil, nil, err
	}
	fns, err := parse(manifest)
	if err != nil {
		return nil, nil, err
	}
	entries, err := os.ReadDir(filepath.Join(root, "functions"))
	if err != nil {
		return nil, nil, err
	}
	var folders []string
	for _, e := range entries {
		if e.IsDir() {
			folders = append(folders, e.Name())
			if !slices.ContainsFunc(fns, func(f function) bool { return f.Name == e.Name() }) {
				return nil, nil, fmt.Errorf("%s has no entry for functions/%s/", ManifestPath, e.Name())
			}
		}
	}
	for _, f := range fns {
		if !slices.Contains(folders, f.Name) {
			return nil, nil, fmt.Errorf("%s: %s has no folder functions/%s/", ManifestPath, f.Name, f.Name)
		}
	}
	want, err = generate(have, fns, routes.Functions())
	return have, want, err
}

// FirstDifference names the first line where have differs from want, for a message that
// says what to look at; "" when they are the same.
func FirstDifference(have, want []byte) string {
	return FirstDifferenceIn("template.yaml", ManifestPath, have, want)
}

// FirstDifferenceIn is FirstDifference for the generated file named file, generated from source.
func FirstDifferenceIn(file, source string, have, want []byte) string {
	if bytes.Equal(have, want) {
		return ""
	}
	h, w := strings.Split(string(have), "\n"), strings.Split(string(want), "\n")
	line := func(lines []string, i int) string {
		if i < len(lines) {
			return strconv.Quote(lines[i])
		}
		return "the end of the file"
	}
	i := 0
	for i < len(h) && i < len(w) && h[i] == w[i] {
		i++
	}
	return fmt.Sprintf("%s:%d has %s where %s generates %s", file, i+1, line(h, i), source, line(w, i))
}

var (
	functionName = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
	eventName    = regexp.MustCompile(`^[A-Za-z0-9]+$`)
)

// parse reads the manifest strictly (an unknown field is a typo, not an option) and refuses
// entries that could not be a function's folder or would write two functions' resources
// under one name.
func parse(manifest []byte) ([]function, error) {
	dec := yaml.NewDecoder(bytes.NewReader(manifest))
	dec.KnownFields(true)
	var fns []function
	if err := dec.Decode(&fns); err != nil {
		return nil, fmt.Errorf("%s: %w", ManifestPath, err)
	}
	for i, f := range fns {
		if !functionName.MatchString(f.Name) {
			return nil, fmt.Errorf("%s: entry %d: name %q is not a folder name in kebab case", ManifestPath, i+1, f.Name)
		}
		if slices.ContainsFunc(fns[:i], func(g function) bool { return g.Name == f.Name }) {
			return nil, fmt.Errorf("%s: %s is listed twice", ManifestPath, f.Name)
		}
		if strings.TrimSpace(f.Description) == "" {
			return nil, fmt.Errorf("%s: %s has no description", ManifestPath, f.Name)
		}
	}
	return fns, nil
}

// generate rewrites each marked region of tmpl, and fails when a region is missing, so that a
// marker deleted by hand does not leave that part quietly ungenerated.
func generate(tmpl []byte, fns []function, api []apigw.Routes) ([]byte, error) {
	for _, r := range api {
		if !slices.ContainsFunc(fns, func(f function) bool { return f.Name == r.Function }) {
			return nil, fmt.Errorf("routes.Functions() has %s, which %s does not list", r.Function, ManifestPath)
		}
	}
	regions := map[string]func() (string, error){
		"functions": func() (string, error) { return resources(fns, api) },
		"Errors":    func() (string, error) { return metrics("Errors", fns), nil },
		"Throttles": func() (string, error) { return metrics("Throttles", fns), nil },
	}
	var out strings.Builder
	written := map[string]bool{}
	lines := strings.SplitAfter(string(tmpl), "\n")
	dashboard := false
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		body := strings.TrimLeft(line, " ")
		if dashboard && strings.HasPrefix(body, dashboardLine) {
			// The line's end (what closes the widget) stays as it is.
			out.WriteString(line[:len(line)-len(body)] + dashboardMetrics(fns) + body[strings.LastIndex(body, "]")+1:])
			dashboard, written["dashboard"] = false, true
			continue
		}
		out.WriteString(line)
		dashboard = dashboard || strings.Contains(line, dashboardMarker)
		m := beginMarker.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		indent, kind := m[1], m[2]
		region, ok := regions[kind]
		if !ok || written[kind] {
			return nil, fmt.Errorf("template.yaml:%d: a second region %s, or one of no known kind (functions, Errors, Throttles)", i+1, kind)
		}
		end := i + 1
		for end < len(lines) && !endMarker.MatchString(strings.TrimSuffix(lines[end], "\n")) {
			end++
		}
		if end == len(lines) || endMarker.FindStringSubmatch(strings.TrimSuffix(lines[end], "\n"))[1] != kind {
			return nil, fmt.Errorf("template.yaml:%d: region %s has no END generated %s after it", i+1, kind, kind)
		}
		text, err := region()
		if err != nil {
			return nil, err
		}
		out.WriteString(indentLines(len(indent), text))
		out.WriteString(lines[end])
		written[kind], i = true, end
	}
	for _, kind := range []string{"functions", "Errors", "Throttles", "dashboard"} {
		if !written[kind] {
			return nil, fmt.Errorf("template.yaml has no region %s to generate (markers: %q, %q)", kind, "# BEGIN generated <kind> from "+ManifestPath+" ...", dashboardMarker)
		}
	}
	return []byte(out.String()), nil
}

// indentLines indents each line of text by n spaces, leaving blank lines empty, and ends each
// with a newline, so that a template action at the start of a line adds whole lines, or
// nothing for an empty text.
func indentLines(n int, text string) string {
	text = strings.TrimRight(text, "\n")
	if text == "" {
		return ""
	}
	var b strings.Builder
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) != "" {
			b.WriteString(strings.Repeat(" ", n) + l)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// resource is what a function's resources are written from.
type resource struct {
	function
	ID, Comment           string
	Head, AfterRole, Rest string
	Events                []httpEvent
}

// httpEvent is an HttpApi event as written: no scopes means no authorizer.
type httpEvent struct {
	Name, Method, Path string
	Scopes             []string
}

// resourceTemplate is a function's resources, at the margin. The optional parts (indentLines)
// are whole lines or nothing.
var resourceTemplate = template.Must(template.New("function").Funcs(template.FuncMap{
	"indent": indentLines,
	"scopes": func(scopes []string) string {
		subs := make([]string, len(scopes))
		for i, s := range scopes {
			subs[i] = "!Sub " + strconv.Quote("${ScopePrefix}"+s)
		}
		return strings.Join(subs, ", ")
	},
}).Parse(`{{.Comment}}{{.ID}}Logs:
  Type: AWS::Logs::LogGroup
  DeletionPolicy: Delete
  UpdateReplacePolicy: Delete
  Properties:
    RetentionInDays: !Ref LogRetentionDays
{{with .Resources}}
{{indent 0 .}}{{end}}
{{.ID}}Role:
  Type: AWS::IAM::Role
  Properties:
    ManagedPolicyArns: !If [Traces, [!Ref TracingPolicy], !Ref AWS::NoValue]
    AssumeRolePolicyDocument:
      Version: "2012-10-17"
      Statement:
        - Effect: Allow
          Principal:
            Service: lambda.amazonaws.com
          Action: sts:AssumeRole
    Policies:
      - PolicyName: {{.Name}}
        PolicyDocument:
          Version: "2012-10-17"
          Statement:
            - Effect: Allow
              Action: [logs:CreateLogStream, logs:PutLogEvents]
              Resource: !GetAtt {{.ID}}Logs.Arn
{{indent 12 .Statements}}
{{.ID}}Function:
  Type: AWS::Serverless::Function
  Metadata:
    BuildMethod: go1.x
    BuildProperties:
      TrimGoPath: true
  Properties:
{{indent 4 .Head}}    CodeUri: functions/{{.Name}}/
    Role: !GetAtt {{.ID}}Role.Arn
{{indent 4 .AfterRole}}    LoggingConfig:
      LogGroup: !Ref {{.ID}}Logs
{{indent 4 .Rest}}{{with .Events}}    Events:
{{range .}}      {{.Name}}:
        Type: HttpApi
        Properties:
          ApiId: !Ref HttpApi
          Method: {{.Method}}
          Path: {{.Path}}
          Auth:
{{if .Scopes}}            Authorizer: JwtAuthorizer
            AuthorizationScopes: [{{scopes .Scopes}}]
{{else}}            Authorizer: NONE
{{end}}{{end}}{{end}}`))

// resources are every function's resources, a blank line between functions.
func resources(fns []function, api []apigw.Routes) (string, error) {
	blocks := make([]string, len(fns))
	for i, f := range fns {
		r := resource{function: f, ID: logicalID(f.Name)}
		// The description is the comment above the resources, its first line after the name.
		for j, l := range strings.Split(strings.TrimRight(f.Description, "\n"), "\n") {
			if j == 0 {
				l = f.Name + ": " + l
			}
			r.Comment += strings.TrimRight("# "+l, " ") + "\n"
		}
		var err error
		if r.Events, err = httpEvents(f, api); err != nil {
			return "", err
		}
		if r.Head, r.AfterRole, r.Rest, err = place(f); err != nil {
			return "", err
		}
		var b strings.Builder
		if err := resourceTemplate.Execute(&b, r); err != nil {
			return "", err
		}
		blocks[i] = b.String()
	}
	return strings.Join(blocks, "\n"), nil
}

// logicalID is the prefix of a function's logical ids: get-run's are GetRunLogs, GetRunRole and
// GetRunFunction.
func logicalID(name string) string {
	var b strings.Builder
	for _, part := range strings.Split(name, "-") {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// The properties a manifest's properties are written among: before CodeUri, after Role, and the
// rest after LoggingConfig; the generated ones it may not set.
var (
	beforeCodeUri = []string{"ReservedConcurrentExecutions"}
	afterRole     = []string{"Timeout", "MemorySize"}
	generated     = []string{"CodeUri", "Role", "LoggingConfig"}
	propertyKey   = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9]*):(\s|$)`)
)

// place splits a function's properties (each a key at the margin, the comment lines above it
// and the lines indented under it) into those written before CodeUri, after Role and after
// LoggingConfig, each in the manifest's order.
func place(f function) (head, role, rest string, err error) {
	var pending string // comment and blank lines at the margin, for the next property
	var last *string   // where the property being read goes
	for _, l := range strings.SplitAfter(strings.TrimRight(f.Properties, "\n"), "\n") {
		if strings.HasPrefix(l, "#") || strings.TrimSpace(l) == "" {
			pending += l
			continue
		}
		if strings.HasPrefix(l, " ") && last != nil {
			*last += pending + l
			pending = ""
			continue
		}
		m := propertyKey.FindStringSubmatch(l)
		switch {
		case m == nil:
			return "", "", "", fmt.Errorf("%s: %s: properties: %q is not a property at the margin", ManifestPath, f.Name, strings.TrimSpace(l))
		case slices.Contains(generated, m[1]):
			return "", "", "", fmt.Errorf("%s: %s: properties: %s is generated", ManifestPath, f.Name, m[1])
		case m[1] == "Events" && f.API:
			return "", "", "", fmt.Errorf("%s: %s: properties: Events beside the API's routes, which the generator does not merge", ManifestPath, f.Name)
		case slices.Contains(beforeCodeUri, m[1]):
			last = &head
		case slices.Contains(afterRole, m[1]):
			last = &role
		default:
			last = &rest
		}
		*last += pending + l
		pending = ""
	}
	if last == nil {
		last = &rest
	}
	*last += pending
	return head, role, rest, nil
}

// httpEvents are the HttpApi events of f: routes.Functions()'s routes of it, those its manifest
// entry's routes name first, named and ordered as there, then the rest in the route table's
// order, each named after its route (routeEvent); the one route of a function that names none is
// Api. So a route is declared once, in the route table: a name in the manifest only keeps the
// logical id a deployed stack already has.
func httpEvents(f function, api []apigw.Routes) ([]httpEvent, error) {
	i := slices.IndexFunc(api, func(r apigw.Routes) bool { return r.Function == f.Name })
	if f.API != (i >= 0) {
		return nil, fmt.Errorf("%s: %s: api is %v, and routes.Functions() has it: %v", ManifestPath, f.Name, f.API, i >= 0)
	}
	if i < 0 {
		if len(f.Routes) > 0 {
			return nil, fmt.Errorf("%s: %s: routes, and the API does not invoke it", ManifestPath, f.Name)
		}
		return nil, nil
	}
	ops := api[i].Operations
	named := slices.Clone(f.Routes)
	if len(named) == 0 && len(ops) == 1 {
		named = events{{Name: "Api", Route: ops[0].Route}}
	}
	for _, o := range ops {
		if !slices.ContainsFunc(named, func(e event) bool { return e.Route == o.Route }) {
			named = append(named, event{Name: routeEvent(o.Route), Route: o.Route})
		}
	}
	var out []httpEvent
	for _, e := range named {
		j := slices.IndexFunc(ops, func(o apigw.Operation) bool { return o.Route == e.Route })
		if j < 0 {
			return nil, fmt.Errorf("%s: %s: routes: routes.Functions() has no route %q of it", ManifestPath, f.Name, e.Route)
		}
		if !eventName.MatchString(e.Name) || slices.ContainsFunc(out, func(h httpEvent) bool { return h.Name == e.Name }) {
			return nil, fmt.Errorf("%s: %s: routes: event name %q is not alphanumeric, or is taken", ManifestPath, f.Name, e.Name)
		}
		method, path, _ := strings.Cut(e.Route, " ")
		if slices.ContainsFunc(out, func(h httpEvent) bool { return h.Method+" "+h.Path == e.Route }) {
			return nil, fmt.Errorf("%s: %s: routes: %q is named twice", ManifestPath, f.Name, e.Route)
		}
		out = append(out, httpEvent{Name: e.Name, Method: method, Path: path, Scopes: ops[j].Scopes})
	}
	return out, nil
}

// routeEvent is the event name of a route the manifest does not name: its method and its path's
// words, each capitalised ("GET /console/runs/{runId}" is GetConsoleRunsRunId).
func routeEvent(route string) string {
	var b strings.Builder
	for _, w := range strings.FieldsFunc(route, func(r rune) bool { return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') }) {
		if w == strings.ToUpper(w) {
			w = strings.ToLower(w) // a method
		}
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	return b.String()
}

// metrics are the items of an alarm's Metrics summing metric (Errors or Throttles) over every
// function: the expression, then one query per function.
func metrics(metric string, fns []function) string {
	ids := make([]string, len(fns))
	for i := range fns {
		ids[i] = "m" + strconv.Itoa(i)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "- Id: %s\n  Expression: %s\n  Label: %s of every function\n  ReturnData: true\n", strings.ToLower(metric), strings.Join(ids, "+"), metric)
	for i, f := range fns {
		fmt.Fprintf(&b, `- Id: %s
  ReturnData: false
  MetricStat:
    Metric:
      Namespace: AWS/Lambda
      MetricName: %s
      Dimensions: [{Name: FunctionName, Value: !Ref %sFunction}]
    Period: 300
    Stat: Sum
`, ids[i], metric, logicalID(f.Name))
	}
	return b.String()
}

// dashboardMetrics is the dashboard's "metrics" of every function's errors (left axis) and
// throttles (right).
func dashboardMetrics(fns []function) string {
	var items []string
	for _, metric := range []string{"Errors", "Throttles"} {
		for _, f := range fns {
			item := fmt.Sprintf(`".", %q, ".", "${%sFunction}"`, metric, logicalID(f.Name))
			if len(items) == 0 {
				item = fmt.Sprintf(`"AWS/Lambda", %q, "FunctionName", "${%sFunction}"`, metric, logicalID(f.Name))
			}
			if metric == "Throttles" {
				item += `, {"yAxis": "right"}`
			}
			items = append(items, "["+item+"]")
		}
	}
	return `"metrics": [` + strings.Join(items, ", ") + "]"
}
