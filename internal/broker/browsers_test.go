package broker

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/logwait"
	"github.com/torii-browser/torii/internal/toolerr"
)

type namedFake struct {
	*fakeServer
	id string
}

func (n namedFake) LinkID() string { return n.id }

func resultText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text + "\n")
		}
	}
	return b.String()
}

// SECURITY I-59: a side-panel agent acts only in its own browser; when that
// one goes it gets a typed error naming the next step, and never a call in
// the other browser, which stays connected.
func TestOwnBrowserNeverFallsOver(t *testing.T) {
	t.Parallel()
	b, logs := loggedBroker(t)
	t.Cleanup(b.Close)
	fa, fb := newFake(), newFake()
	b.AttachBrowser("dev-a", "A", namedFake{fa, "a"})
	b.AttachBrowser("dev-b", "B", namedFake{fb, "b"})
	s := b.NewSession("agent:x", KindAgent)
	s.BindBrowser(BindOwn, "dev-a")
	if r := s.CallTool(context.Background(), "work", nil, 0); r.IsError || fa.startedN() != 1 {
		t.Fatalf("own browser call: %+v", r)
	}
	fa.cancel() // A goes; B stays
	waitDetached(t, logs, "dev-a")
	r := s.CallTool(context.Background(), "work", nil, 0)
	e := toolerr.FromResult(r)
	if e == nil || e.Code != toolerr.ExtensionNotConnected || !strings.Contains(e.Message, `own browser "A"`) ||
		!strings.Contains(e.Hint, "side panel") {
		t.Fatalf("own browser gone: %+v", r)
	}
	if fb.startedN() != 0 {
		t.Fatal("a side-panel agent's call reached another browser")
	}
}

// Tab IDs are each browser's own: a session's tab 7 in one browser does not
// make another browser's tab 7 someone else's, and the per-tab scheduler
// keeps them apart.
func TestTabsArePerBrowser(t *testing.T) {
	t.Parallel()
	b := New(nil)
	t.Cleanup(b.Close)
	fa, fb := newFake(), newFake()
	b.AttachBrowser("dev-a", "A", namedFake{fa, "a"})
	b.AttachBrowser("dev-b", "B", namedFake{fb, "b"})
	sa := b.NewSession("on-a", KindHTTP)
	sa.BindBrowser(BindNamed, "A")
	sb := b.NewSession("on-b", KindHTTP)
	sb.BindBrowser(BindNamed, "B")
	args := json.RawMessage(`{"tabId":7}`)
	if r := sa.CallTool(context.Background(), "work", args, 0); r.IsError {
		t.Fatalf("A tab 7: %s", resultText(r))
	}
	if r := sb.CallTool(context.Background(), "work", args, 0); r.IsError {
		t.Fatalf("B's tab 7 is not A's: %s", resultText(r))
	}
	// Within one browser the daemon still refuses another session's tab.
	sa2 := b.NewSession("on-a-too", KindHTTP)
	sa2.BindBrowser(BindNamed, "A")
	if e := toolerr.FromResult(sa2.CallTool(context.Background(), "work", args, 0)); e == nil || e.Code != toolerr.TabNotOwned {
		t.Fatalf("A's tab 7 for another session in A: %+v", e)
	}
}

// A default session moves to the most recently used live browser when its
// own goes, with the notice in the text and _meta, once.
func TestDefaultSessionFailsOverWithNotice(t *testing.T) {
	t.Parallel()
	b, logs := loggedBroker(t)
	t.Cleanup(b.Close)
	fa, fb := newFake(), newFake()
	b.AttachBrowser("dev-a", "A", namedFake{fa, "a"})
	b.AttachBrowser("dev-b", "B", namedFake{fb, "b"})
	s := b.NewSession("agent", KindStdio)
	s.CallTool(context.Background(), "work", nil, 0)
	if fb.startedN() != 1 || s.Info().Browser != "B" {
		t.Fatalf("default must be the most recently connected: %+v", s.Info())
	}
	fb.cancel()
	waitDetached(t, logs, "dev-b")
	r := s.CallTool(context.Background(), "work", nil, 0)
	if r.IsError || fa.startedN() != 1 || !strings.HasPrefix(resultText(r), `[torii] Now acting in browser "A": "B" disconnected.`) {
		t.Fatalf("failover: %s", resultText(r))
	}
	if n, _ := r.Meta[MetaKey].(map[string]any)["browserChanged"].(*Notice); n == nil || n.From != "B" || n.To != "A" {
		t.Fatalf("notice in _meta: %+v", r.Meta)
	}
	if r := s.CallTool(context.Background(), "work", nil, 0); strings.Contains(resultText(r), "Now acting") {
		t.Fatalf("notice repeated: %s", resultText(r))
	}
	fa.cancel()
	waitDetached(t, logs, "dev-a")
	e := toolerr.FromResult(s.CallTool(context.Background(), "work", nil, 0))
	if e == nil || e.Code != toolerr.ExtensionNotConnected || !strings.Contains(e.Message, `browser "A" disconnected and no other browser is connected`) {
		t.Fatalf("last browser gone: %+v", e)
	}
}

// A managed browser (`torii launch`) that is gone gets "run torii launch";
// the person's own browser keeps "open Chrome".
func TestManagedBrowserGoneHint(t *testing.T) {
	t.Parallel()
	b, logs := loggedBroker(t)
	t.Cleanup(b.Close)
	b.SetManaged(func(id string) bool { return id == "" || id == "dev-m" })
	fm := newFake()
	b.AttachBrowser("dev-m", "torii-managed", namedFake{fm, "m"})
	s := b.NewSession("agent", KindStdio)
	if r := s.CallTool(context.Background(), "work", nil, 0); r.IsError {
		t.Fatalf("managed browser call: %s", resultText(r))
	}
	fm.cancel()
	waitDetached(t, logs, "dev-m")
	e := toolerr.FromResult(s.CallTool(context.Background(), "work", nil, 0))
	if e == nil || e.Code != toolerr.ExtensionNotConnected || !strings.Contains(e.Hint, "run `torii launch`") || strings.Contains(e.Hint, "open Chrome") {
		t.Fatalf("managed browser gone: %+v", e)
	}
	// A session that never had a browser, with a managed one listed.
	e = toolerr.FromResult(b.NewSession("fresh", KindStdio).CallTool(context.Background(), "work", nil, 0))
	if e == nil || !strings.Contains(e.Hint, "run `torii launch`") {
		t.Fatalf("no browser, a managed one listed: %+v", e)
	}
	// No managed browser listed: the person's own Chrome.
	b.SetManaged(func(string) bool { return false })
	e = toolerr.FromResult(b.NewSession("own", KindStdio).CallTool(context.Background(), "work", nil, 0))
	if e == nil || !strings.Contains(e.Hint, "open Chrome") {
		t.Fatalf("no browser, none managed: %+v", e)
	}
}

// loggedBroker is a broker whose log a test can wait on.
func loggedBroker(t *testing.T) (*Broker, *logwait.Buffer) {
	logs := &logwait.Buffer{}
	return New(slog.New(slog.NewTextHandler(logs, nil))), logs
}

// waitDetached waits for the broker to log that device's browser went; it
// logs once the browser is off its list.
func waitDetached(t *testing.T, logs *logwait.Buffer, device string) {
	t.Helper()
	if err := logs.Wait(`msg="broker: browser tool server detached" device=`+device+" ", 5*time.Second); err != nil {
		t.Fatal(err)
	}
}
