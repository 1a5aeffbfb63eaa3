package approvalpage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/interrupthost/interrupthost/pkg/host"
	"github.com/interrupthost/interrupthost/pkg/interrupt"
	"github.com/interrupthost/interrupthost/pkg/runlog"
	"github.com/interrupthost/interrupthost/pkg/webkit"
)

// inputOf picks a question's field from its schema: a checkbox for a boolean, a number field for
// a number, a list for an enum of strings, a JSON field for objects and arrays (or anything
// else a schema allows), text otherwise. The host validates the answer against the schema.
func inputOf(schema json.RawMessage) (input string, options []string) {
	var s struct {
		Type any   `json:"type"`
		Enum []any `json:"enum"`
	}
	if len(schema) == 0 || json.Unmarshal(schema, &s) != nil {
		return "text", nil
	}
	if len(s.Enum) > 0 {
		for _, e := range s.Enum {
			str, ok := e.(string)
			if !ok {
				return "json", nil
			}
			options = append(options, str)
		}
		return "select", options
	}
	switch s.Type {
	case "boolean":
		return "yesno", nil
	case "number", "integer":
		return "number", nil
	case "string", nil:
		return "text", nil
	}
	return "json", nil
}

func questions(o host.Opened, c content, posted url.Values) []Question {
	var out []Question
	for _, q := range o.Payload.Data.Questions {
		input, options := inputOf(q.Schema)
		// The schema's own words, where it has them: its title names the answer, its
		// description says what is wanted.
		var words struct {
			Title       string `json:"title"`
			Description string `json:"description"`
		}
		_ = json.Unmarshal(q.Schema, &words)
		hint := words.Description
		switch input {
		case "json":
			hint = strings.TrimSpace(hint + " (JSON)")
		case "number":
			hint = strings.TrimSpace(hint + " (a number)")
		}
		label := c.question(q.ID)
		if words.Title != "" && !strings.Contains(label, words.Title) {
			label = words.Title + ": " + label
		}
		out = append(out, Question{ID: q.ID, Label: label, Hint: hint, Input: input, Options: options, Value: posted.Get("q." + q.ID)})
	}
	return out
}

// Decision reads a posted form into the resume value of the interrupt o, decided at now, or
// says which fields are wrong (as the paths the host's own validation uses).
func Decision(o host.Opened, form url.Values, now time.Time) (json.RawMessage, []interrupt.FieldError) {
	if o.Payload.Kind == interrupt.KindClarification {
		return answers(o, form)
	}
	var fields []interrupt.FieldError
	bad := func(path, msg string) {
		fields = append(fields, interrupt.FieldError{Path: "/resumeValue/" + path, Message: msg})
	}
	action := interrupt.Action(form.Get("action"))
	if !slices.Contains(o.Payload.Data.Actions, action) {
		bad("action", "choose one of the decisions offered")
		return nil, fields
	}
	v := map[string]any{"action": action, "decidedAt": now.UTC().Format(runlog.TimeFormat)}
	if o.Principal == "" {
		name := strings.TrimSpace(form.Get("decidedBy"))
		if name == "" {
			bad("decidedBy", "say who you are")
		}
		v["decidedBy"] = name
	}
	feedback := strings.TrimSpace(form.Get("feedback"))
	if feedback != "" {
		v["feedback"] = feedback
	}
	switch action {
	case interrupt.ActionAsk:
		if feedback == "" {
			bad("feedback", "write your question")
		}
	case interrupt.ActionRefine:
		v["refineFeedback"] = refineFeedback(form, bad)
	case interrupt.ActionEditAccept:
		if fields := editFields(editable(o, contentOf(o)), nil); fields != nil && !form.Has("editedArtifactData") {
			v["editedArtifactData"] = editedData(fields, form, bad)
			break
		}
		raw := strings.TrimSpace(form.Get("editedArtifactData"))
		if !json.Valid([]byte(raw)) {
			bad("editedArtifactData", "the edited data is not valid JSON")
		} else {
			v["editedArtifactData"] = json.RawMessage(raw)
		}
	}
	if len(fields) > 0 {
		return nil, fields
	}
	b, err := runlog.Marshal(v)
	if err != nil {
		bad("", err.Error())
	}
	return b, fields
}

// answers reads a clarification's fields into { answers: { <questionId>: value } }, each value
// of the JSON type its field stands for.
func answers(o host.Opened, form url.Values) (json.RawMessage, []interrupt.FieldError) {
	out := map[string]json.RawMessage{}
	var fields []interrupt.FieldError
	for _, q := range o.Payload.Data.Questions {
		raw := form.Get("q." + q.ID)
		input, _ := inputOf(q.Schema)
		var v json.RawMessage
		switch input {
		case "yesno":
			if raw != "true" && raw != "false" {
				fields = append(fields, interrupt.FieldError{Path: "/resumeValue/answers/" + q.ID, Message: "must be yes or no"})
				continue
			}
			v = json.RawMessage(raw)
		case "number":
			f, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
			if err != nil {
				fields = append(fields, interrupt.FieldError{Path: "/resumeValue/answers/" + q.ID, Message: "must be a number"})
				continue
			}
			v = json.RawMessage(strconv.FormatFloat(f, 'g', -1, 64))
		case "json":
			var buf bytes.Buffer
			if json.Compact(&buf, []byte(raw)) != nil {
				fields = append(fields, interrupt.FieldError{Path: "/resumeValue/answers/" + q.ID, Message: "must be JSON"})
				continue
			}
			v = buf.Bytes()
		default:
			v, _ = runlog.Marshal(raw)
		}
		out[q.ID] = v
	}
	if len(fields) > 0 {
		return nil, fields
	}
	b, err := runlog.Marshal(map[string]any{"answers": out})
	if err != nil {
		return nil, []interrupt.FieldError{{Path: "/resumeValue", Message: err.Error()}}
	}
	return b, nil
}

// Mistakes is the notice of a refused decision of o: each field's message in plain words, under
// the name the page gives the field (a question's text, for an answer); detail when no field
// says what was wrong.
func Mistakes(o host.Opened, fields []interrupt.FieldError, detail string) *Notice {
	n := &Notice{Kind: "error", Text: "Please check what you entered."}
	if len(fields) == 0 && detail != "" {
		n.Text = detail
	}
	c := contentOf(o)
	for _, f := range fields {
		where := strings.TrimPrefix(strings.TrimPrefix(f.Path, "/resumeValue"), "/")
		msg := plainly(f.Message)
		switch {
		case where == "":
			n.Items = append(n.Items, msg)
		case strings.HasPrefix(where, "editedArtifactData/"):
			n.Items = append(n.Items, fmt.Sprintf("%s %s", webkit.Label(strings.TrimPrefix(where, "editedArtifactData/")), msg))
		case where == "refineFeedback/text":
			n.Items = append(n.Items, "What should change: "+msg)
		case strings.HasPrefix(where, "answers/"):
			id := strings.SplitN(strings.TrimPrefix(where, "answers/"), "/", 2)[0]
			n.Items = append(n.Items, fmt.Sprintf("%s %s", c.question(id), msg))
		default:
			n.Items = append(n.Items, fmt.Sprintf("%s: %s", webkit.Label(strings.ReplaceAll(where, "/", " ")), msg))
		}
	}
	return n
}

// The schema validator's messages, said plainly.
var plainWords = []struct {
	re   *regexp.Regexp
	says string
}{
	{regexp.MustCompile(`^String length must be greater than or equal to (\d+)$`), "must be at least $1 characters"},
	{regexp.MustCompile(`^String length must be less than or equal to (\d+)$`), "must be at most $1 characters"},
	{regexp.MustCompile(`^Must be greater than or equal to (\S+)$`), "must be $1 or more"},
	{regexp.MustCompile(`^Must be less than or equal to (\S+)$`), "must be $1 or less"},
	{regexp.MustCompile(`^Does not match pattern '.*'$`), "is not in the expected form"},
	{regexp.MustCompile(`^Must be one of the following: (.*)$`), "must be one of $1"},
	{regexp.MustCompile(`^(\S+) is required$`), "$1 is needed"},
}

// expectedType finds the type named by the validator's "Invalid type" message.
var expectedType = regexp.MustCompile(`^Invalid type\. Expected: (\w+), given: \w+$`)

// typeWords names a JSON Schema type as a person would.
var typeWords = map[string]string{
	"string": "text", "integer": "a whole number", "number": "a number", "boolean": "yes or no",
	"array": "a list", "object": "a group of fields", "null": "empty",
}

// plainly is a validation message in plain words, where it has a plainer form.
func plainly(msg string) string {
	if m := expectedType.FindStringSubmatch(msg); m != nil && typeWords[m[1]] != "" {
		return "must be " + typeWords[m[1]]
	}
	for _, p := range plainWords {
		if p.re.MatchString(msg) {
			return p.re.ReplaceAllString(msg, p.says)
		}
	}
	return msg
}
