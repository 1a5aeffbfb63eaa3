package samtemplate

import (
	"fmt"
	"slices"
	"strings"
)

// tableWrites are the DynamoDB actions that write an item.
var tableWrites = []string{"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem"}

// Statement is one statement of a role's inline policies, as far as the table's keys go: its
// effect, actions, and the leading keys its condition names (ForAllValues: every key must match
// one; ForAnyValue: any key matching one), none for a statement without such a condition.
type Statement struct {
	Effect  string
	Actions []string
	// Table reports whether it names the run-log table (RunLogTable) as its resource.
	Table bool
	// AllKeys and AnyKeys are the dynamodb:LeadingKeys patterns of a ForAllValues:StringLike
	// and a ForAnyValue:StringLike condition.
	AllKeys, AnyKeys []string
}

// WritesKey reports whether a role of statements may write an item of the table whose
// partition key is pk, as IAM decides it: an Allow of a write on the table whose leading keys,
// if it names any, admit pk, and no Deny of that write whose leading keys match pk. A pattern
// matches as StringLike does ('*' any run of characters).
func WritesKey(statements []Statement, pk string) bool {
	like := func(patterns []string) bool {
		return slices.ContainsFunc(patterns, func(p string) bool { return starMatch(p, pk) })
	}
	for _, action := range tableWrites {
		allowed, denied := false, false
		for _, st := range statements {
			if !st.Table || !slices.Contains(st.Actions, action) {
				continue
			}
			keysMatch := (st.AllKeys == nil || like(st.AllKeys)) && (st.AnyKeys == nil || like(st.AnyKeys))
			switch {
			case st.Effect == "Allow" && keysMatch:
				allowed = true
			case st.Effect == "Deny" && keysMatch:
				denied = true
			}
		}
		if allowed && !denied {
			return true
		}
	}
	return false
}

// starMatch reports whether s matches the StringLike pattern p, where '*' is any run of
// characters ('#' and '/' included) and every other character itself.
func starMatch(p, s string) bool {
	parts := strings.Split(p, "*")
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for i, part := range parts[1:] {
		if i == len(parts)-2 {
			return strings.HasSuffix(s, part)
		}
		j := strings.Index(s, part)
		if j < 0 {
			return false
		}
		s = s[j+len(part):]
	}
	return s == ""
}

// statements are an IAM role's inline policies' statements as Statement reads them.
func (t *Template) statements(roleID string) ([]Statement, error) {
	r, ok := t.Resources[roleID]
	if !ok || r.Type != "AWS::IAM::Role" {
		return nil, fmt.Errorf("no AWS::IAM::Role %s", roleID)
	}
	var role struct {
		Policies []struct {
			PolicyDocument struct {
				Statement []struct {
					Effect    string
					Action    any
					Resource  any
					Condition map[string]map[string]any
				}
			}
		}
	}
	if err := remarshal(r.Properties, &role); err != nil {
		return nil, err
	}
	strs := func(v any) []string {
		switch a := v.(type) {
		case string:
			return []string{a}
		case []any:
			var out []string
			for _, x := range a {
				if s, ok := x.(string); ok {
					out = append(out, s)
				}
			}
			return out
		}
		return nil
	}
	var out []Statement
	for _, p := range role.Policies {
		for _, st := range p.PolicyDocument.Statement {
			s := Statement{Effect: st.Effect, Actions: strs(st.Action)}
			if table, err := getAtt(st.Resource, "Arn"); err == nil && table == "RunLogTable" {
				s.Table = true
			}
			if c, ok := st.Condition["ForAllValues:StringLike"]; ok {
				s.AllKeys = strs(c["dynamodb:LeadingKeys"])
			}
			if c, ok := st.Condition["ForAnyValue:StringLike"]; ok {
				s.AnyKeys = strs(c["dynamodb:LeadingKeys"])
			}
			out = append(out, s)
		}
	}
	return out, nil
}
