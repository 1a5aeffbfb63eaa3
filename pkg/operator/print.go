package operator

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// Output formats: a table for people (the default), JSON for jq and scripts.
const (
	FormatTable = "table"
	FormatJSON  = "json"
)

// printer writes answers in the chosen format: an object as indented JSON or as one "field
// value" line each; a list as one JSON line per item or as a table with a column per field,
// its header once per printer (a streamed list's pages are one table).
type printer struct {
	w      io.Writer
	json   bool
	header bool
}

// print writes v: a slice as rows, anything else as one object.
func (p *printer) print(v any) error {
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice && rv.Type() != reflect.TypeFor[json.RawMessage]() {
		return p.rows(rv)
	}
	if p.json {
		return encode(p.w, v, "  ")
	}
	tw := tabwriter.NewWriter(p.w, 0, 4, 2, ' ', 0)
	for _, f := range fieldsOf(reflect.ValueOf(v)) {
		if f.text != "" {
			fmt.Fprintf(tw, "%s\t%s\n", f.name, f.text)
		}
	}
	return tw.Flush()
}

// rows writes the items of list, a slice.
func (p *printer) rows(list reflect.Value) error {
	if p.json {
		for i := range list.Len() {
			if err := encode(p.w, list.Index(i).Interface(), ""); err != nil {
				return err
			}
		}
		return nil
	}
	if list.Len() == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(p.w, 0, 4, 2, ' ', 0)
	for i := range list.Len() {
		fields := fieldsOf(list.Index(i))
		if !p.header {
			names := make([]string, len(fields))
			for j, f := range fields {
				names[j] = strings.ToUpper(f.name)
			}
			fmt.Fprintln(tw, strings.Join(names, "\t"))
			p.header = true
		}
		cells := make([]string, len(fields))
		for j, f := range fields {
			cells[j] = f.text
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// encode writes v as JSON without HTML escaping (a title's "<" stays "<"), indented by indent.
func encode(w io.Writer, v any, indent string) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	return enc.Encode(v)
}

type field struct{ name, text string }

// fieldsOf are a struct's fields by their JSON names, each as text (cell); a value that is not a
// struct is one field, "value".
func fieldsOf(v reflect.Value) []field {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return []field{{"value", cell(v)}}
	}
	var out []field
	for i := range v.NumField() {
		f := v.Type().Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			out = append(out, fieldsOf(v.Field(i))...)
			continue
		}
		out = append(out, field{cmp.Or(name, f.Name), cell(v.Field(i))})
	}
	return out
}

// maxCell bounds a cell of a nested value, which the JSON output holds whole.
const maxCell = 60

// cell is a value as a table's cell: a scalar as itself, a list of scalars joined, anything else
// compact JSON cut to maxCell characters.
func cell(v reflect.Value) string {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return ""
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.String:
		return strings.Join(strings.Fields(v.String()), " ")
	case reflect.Bool, reflect.Int, reflect.Int32, reflect.Int64, reflect.Float64:
		return fmt.Sprint(v.Interface())
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.String {
			return strings.Join(v.Interface().([]string), ", ")
		}
	}
	var b bytes.Buffer
	if err := encode(&b, v.Interface(), ""); err != nil {
		return ""
	}
	s := strings.TrimSpace(b.String())
	if s == "null" || s == "{}" || s == "[]" {
		return ""
	}
	if utf8.RuneCountInString(s) > maxCell {
		s = string([]rune(s)[:maxCell-1]) + "…"
	}
	return s
}
