package daemon_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/daemon"
	"github.com/torii-browser/torii/internal/daemon/daemontest"
	"github.com/torii-browser/torii/internal/link/linktest"
	"github.com/torii-browser/torii/internal/wire"
)

type fileLink struct {
	Type     string `json:"type"`
	URI      string `json:"uri"`
	Name     string `json:"name"`
	MIMEType string `json:"mimeType"`
	Size     int64  `json:"size"`
}

// sessionID is the broker session of the one live session labelled label.
func sessionID(t *testing.T, d *daemontest.Daemon, label string) string {
	t.Helper()
	for _, s := range daemonStatus(t, d).Sessions {
		if s.Label == label && s.Ended == nil {
			return s.ID
		}
	}
	t.Fatalf("no live session %q", label)
	return ""
}

func toolCode(err error) string {
	var re *wire.Error
	if !errors.As(err, &re) {
		return ""
	}
	var d struct {
		ToolCode string `json:"toolCode"`
	}
	if raw, ok := re.Data.(json.RawMessage); ok && json.Unmarshal(raw, &d) == nil {
		return d.ToolCode
	}
	return ""
}

// The link's file methods file bytes only for a live session acting in the
// browser that sends them, and resources/read answers only from the
// caller's own folder (SECURITY I-66).
func TestFilesOnlyForTheSessionsOwnBrowserAndReader(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "sandbox")
	d := daemontest.Start(t, func(o *daemon.Options) { o.Config.FilesRoot = root })
	ctx := tctx(t)
	extA, extB, _, _ := twoBrowsers(t, ctx, d)
	tok := d.Token(t, "agents")
	mine := mcpTo(t, ctx, d, tok, "") // acts in B, the most recently connected
	call(t, ctx, mine, "echo")
	id := sessionID(t, d, "http:agents")

	put := func(c *linktest.Client, sid, name, text string) (fileLink, error) {
		var l fileLink
		err := c.Call(ctx, daemon.FilesPut, map[string]any{"sessionId": sid, "name": name, "mimeType": "text/plain", "text": text}, &l)
		return l, err
	}
	if _, err := put(extA, id, "x.txt", "from A"); toolCode(err) != "invalid_argument" {
		t.Fatalf("another browser filed bytes for the session: %v", err)
	}
	if _, err := put(extB, "s-no-such-session", "x.txt", "x"); toolCode(err) != "invalid_argument" {
		t.Fatalf("bytes for an unknown session: %v", err)
	}
	for _, bad := range []string{"../../.bashrc", "a/b.txt", `a\b.txt`, ".hidden"} {
		if _, err := put(extB, id, bad, "x"); toolCode(err) != "invalid_argument" {
			t.Fatalf("put %q: %v", bad, err)
		}
	}
	l, err := put(extB, id, "notes", "hello")
	if err != nil || l.Type != "resource_link" || l.Name != "notes.txt" || l.MIMEType != "text/plain" || l.Size != 5 {
		t.Fatalf("put: %+v %v", l, err)
	}
	folder, _, _ := strings.Cut(strings.TrimPrefix(l.URI, "torii://files/"), "/")
	if _, err := os.Stat(filepath.Join(root, folder, "notes.txt")); err != nil {
		t.Fatalf("not on disk under filesRoot: %v", err)
	}

	got, err := mine.ReadResource(ctx, &mcp.ReadResourceParams{URI: l.URI})
	if err != nil || len(got.Contents) != 1 || got.Contents[0].Text != "hello" || got.Contents[0].MIMEType != "text/plain" {
		t.Fatalf("read back: %+v %v", got, err)
	}
	list, err := mine.ListResources(ctx, nil)
	if err != nil || len(list.Resources) != 1 || list.Resources[0].URI != l.URI {
		t.Fatalf("list: %+v %v", list, err)
	}

	// Another session: the same answer as for a missing file, and an empty list.
	other := mcpTo(t, ctx, d, d.Token(t, "other"), "")
	call(t, ctx, other, "echo")
	_, theirs := other.ReadResource(ctx, &mcp.ReadResourceParams{URI: l.URI})
	_, missing := mine.ReadResource(ctx, &mcp.ReadResourceParams{URI: strings.TrimSuffix(l.URI, "notes.txt") + "nope.txt"})
	if theirs == nil || missing == nil || theirs.Error() != strings.Replace(missing.Error(), "nope.txt", "notes.txt", 1) {
		t.Fatalf("another session's file %v vs a missing one %v", theirs, missing)
	}
	if strings.Contains(theirs.Error(), "hello") || !strings.Contains(theirs.Error(), "not_found") {
		t.Fatalf("refusal: %v", theirs)
	}
	if ol, err := other.ListResources(ctx, nil); err != nil || len(ol.Resources) != 0 {
		t.Fatalf("other's list: %+v %v", ol, err)
	}

	// upload's names resolve to the session's own files only; adopt takes no arbitrary path.
	var paths struct {
		Paths []string `json:"paths"`
	}
	if err := extB.Call(ctx, daemon.FilesPath, map[string]any{"sessionId": id, "names": []string{"notes.txt"}}, &paths); err != nil || len(paths.Paths) != 1 || !strings.HasPrefix(paths.Paths[0], root+string(filepath.Separator)) {
		t.Fatalf("path: %+v %v", paths, err)
	}
	if err := extB.Call(ctx, daemon.FilesPath, map[string]any{"sessionId": id, "names": []string{"missing.txt"}}, &paths); toolCode(err) != "not_found" {
		t.Fatalf("path of a missing file: %v", err)
	}
	if err := extB.Call(ctx, daemon.FilesAdopt, map[string]any{"sessionId": id, "path": "/etc/passwd", "name": "passwd"}, &fileLink{}); toolCode(err) != "not_found" {
		t.Fatalf("adopt of /etc/passwd: %v", err)
	}
	if _, err := os.Stat("/etc/passwd"); err != nil {
		t.Fatal(err)
	}

	// The session ends: its folder stays on disk, and no one reads it through Torii.
	mine.Close()
	if b, err := os.ReadFile(filepath.Join(root, folder, "notes.txt")); err != nil || string(b) != "hello" {
		t.Fatalf("the ended session's file: %q %v", b, err)
	}
	if _, err := other.ReadResource(ctx, &mcp.ReadResourceParams{URI: l.URI}); err == nil {
		t.Fatal("read after the session ended")
	}
	// The session ends asynchronously after its client goes: wait for the refusal that shows it.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := put(extB, id, "late.txt", "x")
		if toolCode(err) == "invalid_argument" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("bytes for an ended session: %v", err)
		}
		time.Sleep(10 * time.Millisecond) // the session ends asynchronously with no event: polled, bounded
	}
}
