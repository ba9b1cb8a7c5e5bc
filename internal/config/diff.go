package config

import (
	"reflect"
	"slices"
	"strings"
)

// RestartKeys are the config.json keys a running daemon cannot apply: they shape its
// listener, the link's origin checks and the audit store, which are set up once at start.
// Every other key applies on reload.
var RestartKeys = []string{"listen", "tlsCert", "tlsKey", "extensionIds", "tokenOrigins", "audit", "filesRoot", "team"}

// NeedsRestart reports whether key is one of RestartKeys.
func NeedsRestart(key string) bool { return slices.Contains(RestartKeys, key) }

// ChangedKeys lists the top-level config.json keys whose values differ between a and b, in
// the order of the Config struct.
func ChangedKeys(a, b Config) []string {
	var out []string
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	t := va.Type()
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			out = append(out, name)
		}
	}
	return out
}
