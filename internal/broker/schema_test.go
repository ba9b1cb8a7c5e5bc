package broker

import (
	"encoding/json"
	"fmt"
	"testing"
)

// The daemon's own tools reach the same clients' schema converters as the
// extension's (extension/test/tools/schema-compat.test.ts checks those):
// an object without properties, an enum without its type, an array
// without items or a type list is refused by some of them.
func TestDaemonToolSchemasConvert(t *testing.T) {
	t.Parallel()
	for _, tool := range DaemonTools() {
		b, err := json.Marshal(tool.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var s map[string]any
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		if s["type"] != "object" {
			t.Errorf("%s: inputSchema type %v, want object", tool.Name, s["type"])
		}
		for _, p := range convertProblems(s, "inputSchema") {
			t.Errorf("%s: %s", tool.Name, p)
		}
	}
}

func convertProblems(s map[string]any, at string) []string {
	var out []string
	typ, isString := s["type"].(string)
	if !isString {
		out = append(out, fmt.Sprintf("%s: type %v is not one type name", at, s["type"]))
	}
	if _, ok := s["enum"]; ok && typ == "" {
		out = append(out, at+": enum without type")
	}
	switch typ {
	case "object":
		props, ok := s["properties"].(map[string]any)
		if !ok {
			out = append(out, at+": object without properties")
		}
		for k, p := range props {
			ps, ok := p.(map[string]any)
			if !ok {
				out = append(out, fmt.Sprintf("%s.%s: not a schema", at, k))
				continue
			}
			out = append(out, convertProblems(ps, at+"."+k)...)
		}
	case "array":
		items, ok := s["items"].(map[string]any)
		if !ok {
			out = append(out, at+": array without items")
		} else {
			out = append(out, convertProblems(items, at+"[]")...)
		}
	}
	return out
}
