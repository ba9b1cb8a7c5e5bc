package config

import (
	"slices"
	"testing"
)

func TestChangedKeys(t *testing.T) {
	a := Default()
	b := a
	if got := ChangedKeys(a, b); len(got) != 0 {
		t.Fatalf("equal configs: %v", got)
	}
	b.Listen = "127.0.0.1:1"
	b.Agents = []Agent{{Name: "x", Command: "x"}}
	b.Broker.TabCap = 3
	got := ChangedKeys(a, b)
	if !slices.Equal(got, []string{"listen", "agents", "broker"}) {
		t.Fatalf("ChangedKeys = %v", got)
	}
	for _, k := range got {
		if NeedsRestart(k) != (k == "listen") {
			t.Errorf("NeedsRestart(%q) = %v", k, NeedsRestart(k))
		}
	}
}
