package gentemplate_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/interrupthost/interrupthost/internal/gentemplate"
	"github.com/interrupthost/interrupthost/internal/samtemplate"
)

// root is the repository's root, where template.yaml is.
func root(t *testing.T) string {
	t.Helper()
	p, err := samtemplate.Find(".")
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(p)
}

// TestTheTemplateIsGenerated: template.yaml's per-function regions are what
// functions/manifest.yaml and routes.Functions() generate, so a function's resources, its
// routes and its watch cannot drift from the manifest, nor be edited where they are generated.
func TestTheTemplateIsGenerated(t *testing.T) {
	have, want, err := gentemplate.Template(root(t))
	if err != nil {
		t.Fatal(err)
	}
	if diff := gentemplate.FirstDifference(have, want); diff != "" {
		t.Errorf("template.yaml is not what %s and routes.Functions() generate (%s): change the manifest, not the generated text, and run go run ./internal/cmd/gentemplate", gentemplate.ManifestPath, diff)
	}
}

// scratch is a copy of the repository's template.yaml and functions/manifest.yaml, with edit
// applied to the manifest, in a directory with a folder under functions/ for each of the
// repository's functions and of folders.
func scratch(t *testing.T, edit func(manifest string) string, folders ...string) string {
	t.Helper()
	r, dir := root(t), t.TempDir()
	entries, err := os.ReadDir(filepath.Join(r, "functions"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			folders = append(folders, e.Name())
		}
	}
	for _, f := range folders {
		if err := os.MkdirAll(filepath.Join(dir, "functions", f), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tmpl, err := os.ReadFile(filepath.Join(r, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := os.ReadFile(filepath.Join(r, gentemplate.ManifestPath))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "template.yaml"), tmpl, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, gentemplate.ManifestPath), []byte(edit(string(manifest))), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func unchanged(manifest string) string { return manifest }

// purgeThings is a function the API does not invoke, as a new entry of the manifest.
const purgeThings = `
- name: purge-things
  description: a function no one wrote, to show what an entry makes.
  statements: |
    - Effect: Allow
      Action: [dynamodb:Query]
      Resource: !GetAtt RunLogTable.Arn
  properties: |
    Timeout: 30
    Events:
      EveryHour:
        Type: ScheduleV2
        Properties:
          ScheduleExpression: rate(1 hour)
`

// TestANewFunctionIsOneEntry: an entry of the manifest is all a function needs: its log group,
// its role and its function, in the manifest's order, and a watch in both alarms and on the
// dashboard.
func TestANewFunctionIsOneEntry(t *testing.T) {
	var functions int // the manifest's entries, the new one among them
	dir := scratch(t, func(m string) string {
		m += purgeThings
		functions = strings.Count(m, "\n- name: ")
		return m
	}, "purge-things")
	_, want, err := gentemplate.Template(dir)
	if err != nil {
		t.Fatal(err)
	}
	last := fmt.Sprintf("m%d+m%d\n", functions-2, functions-1) // m0 is the first
	for _, s := range []string{
		"  # purge-things: a function no one wrote, to show what an entry makes.\n  PurgeThingsLogs:\n",
		"  PurgeThingsRole:\n",
		"        - PolicyName: purge-things\n",
		"                Resource: !GetAtt PurgeThingsLogs.Arn\n              - Effect: Allow\n                Action: [dynamodb:Query]\n",
		"      Role: !GetAtt PurgeThingsRole.Arn\n      Timeout: 30\n      LoggingConfig:\n        LogGroup: !Ref PurgeThingsLogs\n      Events:\n        EveryHour:\n",
		last + "          Label: Errors of every function",
		last + "          Label: Throttles of every function",
		`[".", "Errors", ".", "${PurgeThingsFunction}"]`,
		`[".", "Throttles", ".", "${PurgeThingsFunction}", {"yAxis": "right"}]]}},`,
	} {
		if !strings.Contains(string(want), s) {
			t.Errorf("the generated template has no %q", s)
		}
	}
	if n := strings.Count(string(want), "MetricName: Errors\n              Dimensions: [{Name: FunctionName, Value: !Ref PurgeThingsFunction}]"); n != 1 {
		t.Errorf("the errors alarm reads PurgeThingsFunction %d times", n)
	}

	// What the stack reads of it.
	if err := os.WriteFile(filepath.Join(dir, "template.yaml"), want, 0o644); err != nil {
		t.Fatal(err)
	}
	tmpl, err := samtemplate.Load(filepath.Join(dir, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	fns, err := tmpl.Functions()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(fns, func(f samtemplate.Function) bool { return f.Name == "purge-things" })
	if i < 0 {
		t.Fatal("the stack reads no purge-things")
	}
	if f := fns[i]; f.LogicalID != "PurgeThingsFunction" || f.TimeoutSec != 30 || len(f.Schedules) != 1 || f.Schedules[0].Expression != "rate(1 hour)" ||
		!slices.Equal(f.Actions, []string{"dynamodb:Query", "logs:CreateLogStream", "logs:PutLogEvents"}) {
		t.Errorf("the stack reads %+v", f)
	}
}

// TestTheManifestIsChecked: an entry that disagrees with the folders under functions/ or with
// routes.Functions(), or sets what is generated, fails the generation with what to fix.
func TestTheManifestIsChecked(t *testing.T) {
	for _, c := range []struct {
		name    string
		edit    func(string) string
		folders []string
		want    string
	}{
		{"a folder without an entry", unchanged, []string{"purge-things"}, "no entry for functions/purge-things/"},
		{"an entry without a folder", func(m string) string { return m + purgeThings }, nil, "purge-things has no folder"},
		{"an API function the API does not invoke", func(m string) string {
			return m + strings.Replace(purgeThings, "  statements:", "  api: true\n  statements:", 1)
		}, []string{"purge-things"}, "purge-things: api is true"},
		{"an event name taken by a route's own", func(m string) string {
			return strings.Replace(m, "ApiComplete: POST /runs/{runId}/complete", "PostRunsRunIdComplete: POST /runs/{runId}/cancel", 1)
		}, nil, `end-run: routes: "POST /runs/{runId}/cancel" is named twice`},
		{"a route apigw does not have", func(m string) string {
			return strings.Replace(m, "ApiComplete: POST /runs/{runId}/complete", "ApiComplete: POST /runs/{runId}/finish", 1)
		}, nil, `end-run: routes: routes.Functions() has no route "POST /runs/{runId}/finish"`},
		{"a generated property", func(m string) string {
			return m + strings.Replace(purgeThings, "    Timeout: 30\n", "    CodeUri: elsewhere/\n", 1)
		}, []string{"purge-things"}, "purge-things: properties: CodeUri is generated"},
		{"an unknown field", func(m string) string {
			return m + strings.Replace(purgeThings, "  statements:", "  memory: 512\n  statements:", 1)
		}, []string{"purge-things"}, "field memory not found"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := gentemplate.Template(scratch(t, c.edit, c.folders...))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one saying %q", err, c.want)
			}
		})
	}
}

// TestFirstDifference names the line to look at.
func TestFirstDifference(t *testing.T) {
	for _, c := range []struct{ have, want, diff string }{
		{"a\nb\n", "a\nb\n", ""},
		{"a\nb\n", "a\nc\n", `template.yaml:2 has "b" where functions/manifest.yaml generates "c"`},
		{"a\n", "a\nb\n", `template.yaml:2 has "" where functions/manifest.yaml generates "b"`},
		{"a\nb", "a", `template.yaml:2 has "b" where functions/manifest.yaml generates the end of the file`},
	} {
		if got := gentemplate.FirstDifference([]byte(c.have), []byte(c.want)); got != c.diff {
			t.Errorf("FirstDifference(%q, %q) = %q, want %q", c.have, c.want, got, c.diff)
		}
	}
}
