package approvalpage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/interrupthost/interrupthost/pkg/webkit"
)

// An approver edits and points at the artifact's data as a person would: flat data is edited
// field by field, not as JSON, and a request for changes names a part of the data by picking
// it, offered only where the data has parts (sections, items) to pick.

// EditField is one member of flat artifact data, edited in place ("Edit, then accept").
type EditField struct {
	// ID is the field's element id; Key the member it edits (posted as "edit.<key>").
	ID, Key, Label string
	// Input is "text", "number" or "yesno", from the member's value; Null is set for a member
	// that is null, which stays null when left empty.
	Input string
	Value string
	Null  bool
}

// editFields are data's members as fields to edit, in order, when data is a flat object (every
// member a string, number, boolean or null); nil otherwise, and the page offers the JSON. posted
// are the values a refused form sent, shown again.
func editFields(data json.RawMessage, posted url.Values) []EditField {
	members, order := webkit.Members(data)
	if len(members) == 0 {
		return nil
	}
	var out []EditField
	for i, k := range order {
		v := members[k]
		f := EditField{ID: "edit-" + strconv.Itoa(i), Key: k, Label: webkit.Label(k), Input: "text"}
		var s string
		switch {
		case string(v) == "null": // first: JSON's null reads into a string as ""
			f.Null = true
		case json.Unmarshal(v, &s) == nil:
			f.Value = s
		case string(v) == "true" || string(v) == "false":
			f.Input, f.Value = "yesno", string(v)
		case webkit.IsNumber(string(v)):
			f.Input, f.Value = "number", string(v)
		default:
			return nil // an object or a list: not flat
		}
		if p, ok := posted["edit."+k]; ok && len(p) > 0 {
			f.Value = p[0]
		}
		out = append(out, f)
	}
	return out
}

// editedData reads the fields of flat data back into the edited object, each value of its
// member's type, its members in the data's order; bad names each field that is not.
func editedData(fields []EditField, form url.Values, bad func(path, msg string)) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fields {
		raw := strings.TrimSpace(form.Get("edit." + f.Key))
		path := "editedArtifactData/" + pointerToken(f.Key)
		var v json.RawMessage
		switch {
		case f.Input == "number" && webkit.IsNumber(raw):
			v = json.RawMessage(raw)
		case f.Input == "number":
			bad(path, "must be a number")
		case f.Input == "yesno" && (raw == "true" || raw == "false"):
			v = json.RawMessage(raw)
		case f.Input == "yesno":
			bad(path, "must be yes or no")
		case f.Null && raw == "":
			v = json.RawMessage("null")
		default:
			v, _ = json.Marshal(form.Get("edit." + f.Key))
		}
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.Key)
		b.Write(k)
		b.WriteByte(':')
		if v == nil { // refused (bad names it): the form is answered again, never recorded
			v = json.RawMessage("null")
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// pointerToken escapes a member name as a JSON Pointer token.
func pointerToken(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// RefinePart is a part of the artifact a request for changes can name: a section (a nested
// object or a list of records, by its JSON Pointer) or an item of a list (by its id).
type RefinePart struct{ Value, Label string }

// itemIDs are the members that identify a record of a list, in the order they are looked for.
var itemIDs = []string{"id", "itemId", "sku", "code", "key", "ref"}

// itemNames are the members that name a record, shown beside its id.
var itemNames = []string{"name", "title", "description", "label"}

// refineParts are data's sections (each member that is an object or a list of records) and
// the items of its lists whose every record has an id (the first of itemIDs they all have).
func refineParts(data json.RawMessage) (sections, items []RefinePart) {
	members, order := webkit.Members(data)
	for _, k := range order {
		v := members[k]
		switch {
		case webkit.IsObject(v):
			sections = append(sections, RefinePart{Value: "/" + pointerToken(k), Label: webkit.Label(k)})
		case webkit.IsListOfObjects(v):
			sections = append(sections, RefinePart{Value: "/" + pointerToken(k), Label: webkit.Label(k)})
			items = append(items, listItems(webkit.Label(k), v)...)
		}
	}
	return sections, items
}

// listItems are the records of a list as items to pick, if every record has the same id member.
func listItems(list string, v json.RawMessage) []RefinePart {
	var records []map[string]json.RawMessage
	if json.Unmarshal(v, &records) != nil {
		return nil
	}
	for _, idKey := range itemIDs {
		var out []RefinePart
		for _, r := range records {
			id := scalar(r[idKey])
			if id == "" {
				out = nil
				break
			}
			text := fmt.Sprintf("%s: %s", list, id)
			for _, n := range itemNames {
				if name := scalar(r[n]); name != "" {
					text += " (" + name + ")"
					break
				}
			}
			out = append(out, RefinePart{Value: id, Label: text})
		}
		if out != nil {
			return out
		}
	}
	return nil
}

// scalar is a string or number member as text; "" for anything else.
func scalar(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	if webkit.IsNumber(string(v)) {
		return string(v)
	}
	return ""
}

// refineFeedback reads a request for changes: what should change (required: a person sent back
// for changes is told what), and the part it names, if any; the scope follows from the part
// (an item picked, a section, else the whole artifact) unless the form says it.
func refineFeedback(form url.Values, bad func(path, msg string)) map[string]any {
	var ids []string
	for _, v := range form["itemIds"] { // one picked item each, as its checkbox holds it
		if v = strings.TrimSpace(v); v != "" {
			ids = append(ids, v)
		}
	}
	section := strings.TrimSpace(form.Get("sectionPath"))
	scope := form.Get("refineScope")
	if scope == "" {
		switch {
		case len(ids) > 0:
			scope = "items"
		case section != "":
			scope = "section"
		default:
			scope = "whole"
		}
	}
	r := map[string]any{"scope": scope}
	if section != "" {
		r["sectionPath"] = section
	}
	if len(ids) > 0 {
		r["itemIds"] = ids
	}
	if t := strings.TrimSpace(form.Get("refineText")); t != "" {
		r["text"] = t
	} else {
		bad("refineFeedback/text", "say what should change")
	}
	return r
}
