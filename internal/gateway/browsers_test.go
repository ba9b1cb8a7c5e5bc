package gateway_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/torii-browser/torii/internal/browserlink/browserlinktest"
	"github.com/torii-browser/torii/internal/daemon"
)

// SECURITY I-59: an agent spawned from one browser's side panel acts in that
// browser, though another paired browser connected later (and would be the
// default for any other session).
func TestPanelAgentActsInItsOwnBrowser(t *testing.T) {
	t.Parallel()
	d, _ := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	hit := make(chan string, 4)
	provider := func(tag string) *browserlinktest.Provider {
		return browserlinktest.New("ext-"+tag, []map[string]any{
			{"name": "snapshot", "inputSchema": browserlinktest.Schema(nil), "annotations": map[string]any{"readOnlyHint": true}},
		}, func(context.Context, string, json.RawMessage) (any, error) {
			hit <- tag
			return browserlinktest.TextResult("snapshot in " + tag), nil
		})
	}
	extA := d.ExtensionNamed(t, ctx, "Browser A", provider("A"), map[string]any{"type": "acp", "name": "torii", "id": "ext-A"})
	d.ExtensionNamed(t, ctx, "Browser B", provider("B"), map[string]any{"type": "acp", "name": "torii", "id": "ext-B"})
	waitState(t, "two browsers serving", func() bool {
		var st daemon.StatusResult
		d.Call(t, "status", nil, &st)
		n := 0
		for _, b := range st.Browsers {
			if b.Serving {
				n++
			}
		}
		return n == 2
	})

	var res struct {
		SessionID string `json:"sessionId"`
	}
	if err := extA.Call(ctx, "session/new", map[string]any{"cwd": "/", "mcpServers": []any{},
		"_meta": map[string]any{"torii": map[string]any{"agent": "scripted"}}}, &res); err != nil || res.SessionID == "" {
		t.Fatalf("panel session/new in A: %v", err)
	}
	var pr struct {
		StopReason string `json:"stopReason"`
	}
	if err := extA.Call(ctx, "session/prompt", map[string]any{"sessionId": res.SessionID,
		"prompt": []any{map[string]any{"type": "text", "text": "/tool snapshot {}"}}}, &pr); err != nil || pr.StopReason != "end_turn" {
		t.Fatalf("prompt: %v %q", err, pr.StopReason)
	}
	select {
	case tag := <-hit:
		if tag != "A" {
			t.Fatalf("the panel agent of browser A acted in browser %s", tag)
		}
	case <-ctx.Done():
		t.Fatal("the agent's call reached no browser")
	}
	var st daemon.StatusResult
	d.Call(t, "status", nil, &st)
	for _, b := range st.Browsers {
		for _, s := range b.Sessions {
			if s.Kind == "agent" && (b.Name != "Browser A" || s.Binding != "own") {
				t.Fatalf("status: agent session under %q bound %q", b.Name, s.Binding)
			}
		}
	}
}
