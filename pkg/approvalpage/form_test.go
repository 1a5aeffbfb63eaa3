package approvalpage

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

func TestPlainly(t *testing.T) {
	t.Parallel()
	for msg, want := range map[string]string{
		"String length must be greater than or equal to 5": "must be at least 5 characters",
		"String length must be less than or equal to 80":   "must be at most 80 characters",
		"Must be greater than or equal to 1":               "must be 1 or more",
		"Must be less than or equal to 2.5":                "must be 2.5 or less",
		"Invalid type. Expected: integer, given: string":   "must be a whole number",
		"Invalid type. Expected: boolean, given: string":   "must be yes or no",
		"Does not match pattern '^[A-Z]{2}$'":              "is not in the expected form",
		"Must be one of the following: \"EUR\", \"USD\"":   "must be one of \"EUR\", \"USD\"",
		"reason is required":                               "reason is needed",
		"Invalid type. Expected: tuple, given: string":     "Invalid type. Expected: tuple, given: string",
		"something the validator says that we do not know": "something the validator says that we do not know",
	} {
		if got := plainly(msg); got != want {
			t.Errorf("plainly(%q) = %q, want %q", msg, got, want)
		}
	}
}

// TestEditedData: flat data comes back from its fields with each member of its type: a number
// that is one, yes or no, text as typed, a null left empty still null; a number that is none
// is refused at its member.
func TestEditedData(t *testing.T) {
	t.Parallel()
	fields := editFields(json.RawMessage(`{"amount":12.5,"urgent":false,"note":"x","ref":null}`), nil)
	if len(fields) != 4 || fields[0].Input != "number" || fields[1].Input != "yesno" || fields[2].Input != "text" || !fields[3].Null {
		t.Fatalf("fields %+v", fields)
	}
	var bad []string
	got := editedData(fields, url.Values{"edit.amount": {"13"}, "edit.urgent": {"true"}, "edit.note": {"a, b"}, "edit.ref": {""}}, func(path, _ string) { bad = append(bad, path) })
	if string(got) != `{"amount":13,"urgent":true,"note":"a, b","ref":null}` || bad != nil {
		t.Errorf("edited %s, refused %v", got, bad)
	}
	editedData(fields, url.Values{"edit.amount": {"12,5"}, "edit.urgent": {"maybe"}}, func(path, _ string) { bad = append(bad, path) })
	if strings.Join(bad, " ") != "editedArtifactData/amount editedArtifactData/urgent" {
		t.Errorf("refused %v", bad)
	}
	if editFields(json.RawMessage(`{"lines":[{"sku":"A"}]}`), nil) != nil {
		t.Error("data with a list is offered field by field")
	}
	parts := refineFeedback(url.Values{"itemIds": {"A,1", " B "}, "refineText": {"x"}}, func(string, string) {})
	if ids, _ := parts["itemIds"].([]string); len(ids) != 2 || ids[0] != "A,1" || ids[1] != "B" || parts["scope"] != "items" {
		t.Errorf("picked items %+v", parts)
	}
}
