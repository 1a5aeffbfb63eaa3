package samtemplate_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/interrupthost/interrupthost/pkg/metrics"
	"github.com/interrupthost/interrupthost/pkg/outbound"
)

// published are the metrics the functions write (package metrics).
var published = []metrics.Name{
	metrics.Requested, metrics.Resolved, metrics.Expired, metrics.Conflicts, metrics.WriteRaces,
	metrics.Webhooks, metrics.Delivered, metrics.DeliveryFailures, metrics.SweepLag, metrics.ReadModelLag,
}

// TestTheDashboardShowsWhatTheStackPublishes: the dashboard's body is JSON, graphs every metric the functions publish under the namespace they publish it
// in, and lists every alarm of the template; the alarms on the functions' metrics read that
// namespace too.
func TestTheDashboardShowsWhatTheStackPublishes(t *testing.T) {
	tmpl := load(t)
	namespace, _ := tmpl.Globals.Function["Environment"].(map[string]any)["Variables"].(map[string]any)["METRICS_NAMESPACE"].(map[string]any)["Fn::Sub"].(string)
	if namespace != "InterruptHost/${AWS::StackName}" {
		t.Fatalf("METRICS_NAMESPACE is %q", namespace)
	}
	sub, _ := tmpl.Resources["Dashboard"].Properties["DashboardBody"].(map[string]any)["Fn::Sub"].([]any)
	if len(sub) != 2 {
		t.Fatalf("DashboardBody is not a !Sub of a body and its variables: %v", tmpl.Resources["Dashboard"].Properties["DashboardBody"])
	}
	body, _ := sub[0].(string)
	vars, _ := sub[1].(map[string]any)
	if ns, _ := vars["Ns"].(map[string]any)["Fn::Sub"].(string); ns != namespace {
		t.Errorf("the dashboard's namespace is %q, the functions' %q", ns, namespace)
	}

	var widgets struct {
		Widgets []struct {
			Type       string
			Properties struct {
				Metrics json.RawMessage
				Alarms  []string
			}
		}
	}
	// Every ${...} stands inside a JSON string, so the body parses before substitution.
	if err := json.Unmarshal([]byte(body), &widgets); err != nil {
		t.Fatalf("the dashboard's body is not JSON: %v", err)
	}
	var graphed, listed strings.Builder
	for _, w := range widgets.Widgets {
		graphed.Write(w.Properties.Metrics)
		for _, a := range w.Properties.Alarms {
			listed.WriteString(a + " ")
		}
	}
	for _, name := range published {
		// Either a metric's own line in the namespace or a SEARCH of it there.
		own := regexp.MustCompile(`"\$\{Ns\}", "` + string(name) + `"`)
		search := regexp.MustCompile(`SEARCH\('\{\\"\$\{Ns\}\\",[A-Za-z]+\} MetricName=\\"` + string(name) + `\\"'`)
		if !own.MatchString(graphed.String()) && !search.MatchString(graphed.String()) {
			t.Errorf("the dashboard graphs no %s in the stack's namespace", name)
		}
	}
	var alarms []string
	for id, r := range tmpl.Resources {
		if r.Type != "AWS::CloudWatch::Alarm" {
			continue
		}
		alarms = append(alarms, id)
		if !strings.Contains(listed.String(), "${"+id+".Arn}") {
			t.Errorf("the dashboard does not list alarm %s", id)
		}
		sub, _ := r.Properties["Namespace"].(map[string]any)
		ns, _ := sub["Fn::Sub"].(string)
		name, _ := r.Properties["MetricName"].(string)
		if !slices.Contains(published, metrics.Name(name)) {
			continue
		}
		if ns != namespace {
			t.Errorf("alarm %s reads %s in %v, not in the functions' namespace", id, name, r.Properties["Namespace"])
		}
		// The dimensions it reads are ones the functions write.
		dims, _ := r.Properties["Dimensions"].([]any)
		for _, d := range dims {
			d, _ := d.(map[string]any)
			if key := [2]any{d["Name"], d["Value"]}; !slices.Contains(written, key) {
				t.Errorf("alarm %s reads %s with dimension %v=%v, which no function writes", id, name, key[0], key[1])
			}
		}
	}
	if len(alarms) == 0 {
		t.Error("the template has no alarms")
	}
}

// written are the dimensions' values the alarms may read: the outcomes of a failed delivery.
var written = [][2]any{
	{metrics.DimOutcome, outbound.StatusRetrying},
	{metrics.DimOutcome, outbound.StatusFailed},
}

// TestEveryFunctionIsWatched: each function of the template is in the errors and the throttles
// alarms' metric math and on the dashboard's errors and throttles graph, so that a function
// added later is not left unwatched.
func TestEveryFunctionIsWatched(t *testing.T) {
	tmpl := load(t)
	watched := func(alarm, metric string) map[string]bool {
		out := map[string]bool{}
		queries, _ := tmpl.Resources[alarm].Properties["Metrics"].([]any)
		for _, q := range queries {
			stat, _ := q.(map[string]any)["MetricStat"].(map[string]any)
			m, _ := stat["Metric"].(map[string]any)
			if m["MetricName"] != metric {
				continue
			}
			dims, _ := m["Dimensions"].([]any)
			for _, d := range dims {
				if ref, ok := d.(map[string]any)["Value"].(map[string]any)["Ref"].(string); ok {
					out[ref] = true
				}
			}
		}
		return out
	}
	errs, throttles := watched("FunctionErrorsAlarm", "Errors"), watched("FunctionThrottlesAlarm", "Throttles")
	body, _ := tmpl.Resources["Dashboard"].Properties["DashboardBody"].(map[string]any)["Fn::Sub"].([]any)[0].(string)
	n := 0
	for id, r := range tmpl.Resources {
		if r.Type != "AWS::Serverless::Function" {
			continue
		}
		n++
		if !errs[id] || !throttles[id] {
			t.Errorf("%s: in the errors alarm %v, in the throttles alarm %v", id, errs[id], throttles[id])
		}
		for _, metric := range []string{"Errors", "Throttles"} {
			if !regexp.MustCompile(`\[(?:"AWS/Lambda"|"\.")\, "` + metric + `", (?:"FunctionName"|"\."), "\$\{` + id + `\}"`).MatchString(body) {
				t.Errorf("the dashboard does not graph %s of %s", metric, id)
			}
		}
	}
	if n == 0 || len(errs) != n || len(throttles) != n {
		t.Errorf("%d functions; the alarms watch %d and %d", n, len(errs), len(throttles))
	}
}
