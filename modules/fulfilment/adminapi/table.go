package adminapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// printTable prints a JSON answer of the admin API as a table for people
// (--output table): a list (or an object whose only field is a list, such
// as {"feeds":[...]}) as one row per item under a header of its fields; an
// object as one "field value" row per field. Nested lists show their
// length, nested objects their fields inline; long values are cut.
func printTable(w io.Writer, b []byte) error {
	v, err := decodeOrdered(json.NewDecoder(bytes.NewReader(b)))
	if err != nil {
		return fmt.Errorf("the admin API answered something other than JSON: %w", err)
	}
	if obj, ok := v.(jsonObject); ok && len(obj) == 1 {
		if list, ok := obj[0].v.([]any); ok {
			v = list
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	switch v := v.(type) {
	case []any:
		if len(v) == 0 {
			fmt.Fprintln(tw, "(none)")
			break
		}
		var cols []string
		seen := map[string]bool{}
		for _, it := range v {
			if obj, ok := it.(jsonObject); ok {
				for _, f := range obj {
					if !seen[f.k] {
						seen[f.k] = true
						cols = append(cols, f.k)
					}
				}
			}
		}
		if len(cols) == 0 { // a list of plain values
			for _, it := range v {
				fmt.Fprintln(tw, cell(it))
			}
			break
		}
		fmt.Fprintln(tw, strings.ToUpper(strings.Join(cols, "\t")))
		for _, it := range v {
			obj, _ := it.(jsonObject)
			row := make([]string, len(cols))
			for i, c := range cols {
				row[i] = "-"
				if x, ok := obj.get(c); ok {
					row[i] = cell(x)
				}
			}
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
	case jsonObject:
		for _, f := range v {
			fmt.Fprintf(tw, "%s\t%s\n", f.k, cell(f.v))
		}
	default:
		fmt.Fprintln(tw, cell(v))
	}
	return tw.Flush()
}

// maxCell is the longest value shown in a table cell.
const maxCell = 60

// cell renders one value on one line.
func cell(v any) string {
	var s string
	switch v := v.(type) {
	case nil:
		return "-"
	case string:
		s = v
	case json.Number:
		s = v.String()
	case bool:
		s = fmt.Sprint(v)
	case []any:
		return fmt.Sprintf("[%d]", len(v))
	case jsonObject:
		parts := make([]string, len(v))
		for i, f := range v {
			parts[i] = f.k + "=" + cell(f.v)
		}
		s = strings.Join(parts, " ")
	}
	s = strings.Join(strings.Fields(s), " ") // one line, no tabs
	if r := []rune(s); len(r) > maxCell {
		s = string(r[:maxCell-1]) + "…"
	}
	if s == "" {
		return `""`
	}
	return s
}

// jsonObject is a JSON object with its fields in the order received.
type jsonObject []jsonField

type jsonField struct {
	k string
	v any
}

func (o jsonObject) get(k string) (any, bool) {
	for _, f := range o {
		if f.k == k {
			return f.v, true
		}
	}
	return nil, false
}

// decodeOrdered decodes one JSON value, keeping the order of object
// fields (jsonObject) and numbers as written (json.Number).
func decodeOrdered(dec *json.Decoder) (any, error) {
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		var obj jsonObject
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, ok := kt.(string)
			if !ok {
				return nil, errors.New("object key is not a string")
			}
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			obj = append(obj, jsonField{k, v})
		}
		_, err := dec.Token() // }
		return obj, err
	case json.Delim('['):
		list := []any{}
		for dec.More() {
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		_, err := dec.Token() // ]
		return list, err
	}
	return tok, nil
}
