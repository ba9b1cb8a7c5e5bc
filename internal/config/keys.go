package config

import (
	"reflect"
	"strings"
)

// jsonKeys are every JSON key config.json may hold, at any depth: an
// unknown field's nearest one is the "did you mean" of its error
// (encoding/json does not say at which depth the field was).
func jsonKeys() []string {
	var out []string
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" && !f.Anonymous {
				name = f.Name
			}
			if name != "" {
				out = append(out, name)
			}
			walk(f.Type)
		}
	}
	walk(reflect.TypeOf(Config{}))
	return out
}
