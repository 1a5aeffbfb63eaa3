package samtemplate_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"
)

// forLambda are the actions a role allows for Lambda itself rather than for the function's
// code: its pollers of a stream or a queue, its on-failure destinations, its log delivery.
var forLambda = []string{
	"dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:ListStreams",
	"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:SendMessage",
	"logs:CreateLogStream", "logs:PutLogEvents",
}

// sdkService is where the AWS SDK's service clients are: a package under it is one service's
// client, whose IAM prefix is its name but where iamPrefix says otherwise.
const sdkService = "github.com/aws/aws-sdk-go-v2/service/"

// iamPrefix are the service clients whose actions IAM names otherwise: SES's API v2 is ses:.
var iamPrefix = map[string]string{"sesv2": "ses"}

// TestEachFunctionLinksWhatItsRoleAllows: each function links the AWS SDK client of exactly the
// services its role in template.yaml lets its code call, as `go list -deps` of its deployed
// build names them. A client linked without a grant is code (and attack surface) a sandbox
// fetches at every cold start and never runs, or a call AccessDenied will refuse; a grant
// without a client is a permission nothing uses. So discovery, whose role allows only its logs,
// links no AWS client, and no function links STS or SSO, which only the SDK's default
// configuration loader brings in (make lint runs this test).
func TestEachFunctionLinksWhatItsRoleAllows(t *testing.T) {
	fns, err := load(t).Functions()
	if err != nil {
		t.Fatal(err)
	}
	linked := functionDeps(t)
	for _, f := range fns {
		allowed := map[string]bool{}
		for _, a := range f.Actions {
			if !slices.Contains(forLambda, a) {
				allowed[strings.ToLower(strings.SplitN(a, ":", 2)[0])] = true
			}
		}
		deps, ok := linked[f.Name]
		if !ok {
			t.Errorf("%s: go list names no functions/%s", f.Name, f.Name)
			continue
		}
		clients := map[string]bool{}
		for _, d := range deps {
			if svc, ok := strings.CutPrefix(d, sdkService); ok && !strings.HasPrefix(svc, "internal/") {
				name := strings.SplitN(svc, "/", 2)[0]
				if p, ok := iamPrefix[name]; ok {
					name = p
				}
				clients[name] = true
			}
		}
		for svc := range clients {
			if !allowed[svc] {
				t.Errorf("%s links the %s client; its role allows its code no %s action", f.Name, svc, svc)
			}
		}
		for svc := range allowed {
			if !clients[svc] {
				t.Errorf("%s: its role allows %s actions; it links no %s client", f.Name, svc, svc)
			}
		}
	}
}

// functionDeps are the packages each function's deployed build links (linux, arm64, the
// template's build tags), by the function's folder name.
func functionDeps(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}", "./functions/...")
	cmd.Dir = root(t)
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "GOFLAGS=-tags=lambda.norpc")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v: %s", err, stderr.Bytes())
	}
	deps := map[string][]string{}
	lines := bufio.NewScanner(bytes.NewReader(out))
	lines.Buffer(nil, 1<<20)
	for lines.Scan() {
		f := strings.Fields(lines.Text())
		deps[path.Base(f[0])] = f[1:]
	}
	return deps
}
