// Package samtemplate reads the project's SAM template for the local stack, so that the tables
// the local DynamoDB serves (and, later, the routes the local gateway serves) come from the same
// definition AWS deploys, not from a second copy.
package samtemplate

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"gopkg.in/yaml.v3"
)

// Template is a parsed template. Short-form intrinsics (!Ref, !GetAtt, !Sub, ...) are read as
// their long form ({"Ref": ...}, {"Fn::GetAtt": ...}), as CloudFormation itself reads them.
type Template struct {
	Parameters map[string]struct {
		Type    string
		Default any
	}
	Globals struct {
		Function map[string]any
	}
	Resources map[string]Resource
}

// Resource is one entry of Resources.
type Resource struct {
	Type       string
	Properties map[string]any
}

// Load reads the template at path.
func Load(path string) (*Template, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var root yaml.Node
	if err := yaml.Unmarshal(raw, &root); err != nil {
		return nil, fmt.Errorf("samtemplate: %s: %w", path, err)
	}
	doc, err := value(&root)
	if err != nil {
		return nil, fmt.Errorf("samtemplate: %s: %w", path, err)
	}
	var t Template
	if err := remarshal(doc, &t); err != nil {
		return nil, fmt.Errorf("samtemplate: %s: %w", path, err)
	}
	return &t, nil
}

// Find walks up from dir to the directory holding template.yaml and returns the template's path.
func Find(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, "template.yaml")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("samtemplate: no template.yaml above %s", dir)
		}
		dir = parent
	}
}

func value(n *yaml.Node) (any, error) {
	var v any
	switch n.Kind {
	case yaml.DocumentNode:
		return value(n.Content[0])
	case yaml.AliasNode:
		return value(n.Alias)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			child, err := value(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			m[n.Content[i].Value] = child
		}
		v = m
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			child, err := value(c)
			if err != nil {
				return nil, err
			}
			s = append(s, child)
		}
		v = s
	case yaml.ScalarNode:
		if strings.HasPrefix(n.Tag, "!!") {
			if err := n.Decode(&v); err != nil {
				return nil, err
			}
		} else {
			v = n.Value
		}
	}
	return intrinsic(n.Tag, v), nil
}

// intrinsic turns a short-form tag into the long form CloudFormation reads.
func intrinsic(tag string, v any) any {
	if !strings.HasPrefix(tag, "!") || strings.HasPrefix(tag, "!!") {
		return v
	}
	name := strings.TrimPrefix(tag, "!")
	switch name {
	case "Ref", "Condition":
		return map[string]any{name: v}
	case "GetAtt":
		if s, ok := v.(string); ok {
			resource, attr, _ := strings.Cut(s, ".")
			v = []any{resource, attr}
		}
	}
	return map[string]any{"Fn::" + name: v}
}

func remarshal(in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// Table is the part of an AWS::DynamoDB::Table the local stack reproduces.
type Table struct {
	AttributeDefinitions []struct {
		AttributeName string
		AttributeType types.ScalarAttributeType
	}
	KeySchema              []KeyElement
	GlobalSecondaryIndexes []struct {
		IndexName  string
		KeySchema  []KeyElement
		Projection struct{ ProjectionType types.ProjectionType }
	}
	BillingMode types.BillingMode
}

// KeyElement is one attribute of a table's or an index's key.
type KeyElement struct {
	AttributeName string
	KeyType       types.KeyType
}

func keySchema(elems []KeyElement) []types.KeySchemaElement {
	var out []types.KeySchemaElement
	for _, k := range elems {
		out = append(out, types.KeySchemaElement{AttributeName: &k.AttributeName, KeyType: k.KeyType})
	}
	return out
}

// CreateTableInput is the CreateTable call that makes, under name, the table that logicalID
// declares.
func (t *Template) CreateTableInput(logicalID, name string) (*dynamodb.CreateTableInput, error) {
	r, ok := t.Resources[logicalID]
	if !ok || r.Type != "AWS::DynamoDB::Table" {
		return nil, fmt.Errorf("samtemplate: no AWS::DynamoDB::Table %s", logicalID)
	}
	var tbl Table
	if err := remarshal(r.Properties, &tbl); err != nil {
		return nil, fmt.Errorf("samtemplate: %s: %w", logicalID, err)
	}
	in := &dynamodb.CreateTableInput{TableName: &name, BillingMode: tbl.BillingMode}
	for _, a := range tbl.AttributeDefinitions {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: &a.AttributeName, AttributeType: a.AttributeType})
	}
	in.KeySchema = keySchema(tbl.KeySchema)
	for _, g := range tbl.GlobalSecondaryIndexes {
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{
			IndexName: &g.IndexName, KeySchema: keySchema(g.KeySchema), Projection: &types.Projection{ProjectionType: g.Projection.ProjectionType},
		})
	}
	return in, nil
}
