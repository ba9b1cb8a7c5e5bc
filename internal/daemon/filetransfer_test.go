package daemon_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/daemon"
	"github.com/torii-browser/torii/internal/daemon/daemontest"
	"github.com/torii-browser/torii/internal/files"
	"github.com/torii-browser/torii/internal/link"
)

// A file larger than the link's 1 MiB request cap reaches the session's
// folder in chunks; a transfer is its own link's only, and ends with that
// link (SECURITY I-81).
func TestFilesInChunksPastTheRequestCap(t *testing.T) {
	root := filepath.Join(t.TempDir(), "sandbox")
	d := daemontest.Start(t, func(o *daemon.Options) { o.Config.FilesRoot = root })
	ctx := tctx(t)
	extA, extB, _, _ := twoBrowsers(t, ctx, d)
	mine := mcpTo(t, ctx, d, d.Token(t, "agents"), "") // acts in B
	call(t, ctx, mine, "echo")
	id := sessionID(t, d, "http:agents")

	type begun struct {
		ID       string `json:"id"`
		ChunkMax int    `json:"chunkMax"`
	}
	begin := func(size int64) begun {
		t.Helper()
		var b begun
		if err := extB.Call(ctx, daemon.FilesBegin, map[string]any{"sessionId": id, "name": "big.pdf", "mimeType": "application/pdf", "size": size}, &b); err != nil || b.ChunkMax != files.ChunkMax {
			t.Fatalf("begin: %+v %v", b, err)
		}
		return b
	}
	want := bytes.Repeat([]byte("%PDF-1.7 long table row\n"), 3*files.ChunkMax/24+7)
	if len(want) <= link.MaxRequest {
		t.Fatal("the file must be over the request cap")
	}
	b := begin(int64(len(want)))
	var got struct {
		Received int64 `json:"received"`
	}
	for off := 0; off < len(want); off += files.ChunkMax {
		end := min(off+files.ChunkMax, len(want))
		if err := extB.Call(ctx, daemon.FilesChunk, map[string]any{"id": b.ID, "offset": off, "data": want[off:end]}, &got); err != nil || got.Received != int64(end) {
			t.Fatalf("chunk at %d: %+v %v", off, got, err)
		}
	}
	// Another browser cannot commit, feed or cancel B's transfer.
	if err := extA.Call(ctx, daemon.FilesChunk, map[string]any{"id": b.ID, "offset": len(want), "data": []byte("x")}, &got); toolCode(err) != "invalid_argument" {
		t.Fatalf("A fed B's transfer: %v", err)
	}
	if err := extA.Call(ctx, daemon.FilesCancel, map[string]any{"id": b.ID}, nil); toolCode(err) != "invalid_argument" {
		t.Fatalf("A cancelled B's transfer: %v", err)
	}
	var l fileLink
	if err := extB.Call(ctx, daemon.FilesCommit, map[string]any{"sessionId": id, "id": b.ID, "size": len(want)}, &l); err != nil || l.Name != "big.pdf" || l.Size != int64(len(want)) {
		t.Fatalf("commit: %+v %v", l, err)
	}
	res, err := mine.ReadResource(ctx, &mcp.ReadResourceParams{URI: l.URI})
	if err != nil || len(res.Contents) != 1 || !bytes.Equal(res.Contents[0].Blob, want) {
		t.Fatalf("read back: %v", err)
	}

	// Bad input, each typed: a chunk over chunkMax, out of order, an unknown id, a wrong size.
	b = begin(-1)
	if err := extB.Call(ctx, daemon.FilesChunk, map[string]any{"id": b.ID, "offset": 0, "data": make([]byte, files.ChunkMax+1)}, &got); toolCode(err) != "too_large" {
		t.Fatalf("an oversize chunk: %v", err)
	}
	b = begin(-1)
	if err := extB.Call(ctx, daemon.FilesChunk, map[string]any{"id": b.ID, "offset": 5, "data": []byte("x")}, &got); toolCode(err) != "invalid_argument" {
		t.Fatalf("out of order: %v", err)
	}
	if err := extB.Call(ctx, daemon.FilesChunk, map[string]any{"id": "nope", "offset": 0, "data": []byte("x")}, &got); toolCode(err) != "invalid_argument" {
		t.Fatalf("unknown id: %v", err)
	}
	if err := extB.Call(ctx, daemon.FilesBegin, map[string]any{"sessionId": id, "name": "x", "size": files.MaxTransfer + 1}, &b); toolCode(err) != "too_large" {
		t.Fatalf("declared over the cap: %v", err)
	}
	if err := extA.Call(ctx, daemon.FilesBegin, map[string]any{"sessionId": id, "name": "x"}, &b); toolCode(err) != "invalid_argument" {
		t.Fatalf("a browser the session does not act in began a transfer: %v", err)
	}
	b = begin(-1)
	if err := extB.Call(ctx, daemon.FilesChunk, map[string]any{"id": b.ID, "offset": 0, "data": []byte("abc")}, &got); err != nil {
		t.Fatal(err)
	}
	if err := extB.Call(ctx, daemon.FilesCommit, map[string]any{"sessionId": id, "id": b.ID, "size": 4}, &l); toolCode(err) != "invalid_argument" {
		t.Fatalf("commit of the wrong size: %v", err)
	}

	// B's link closes mid-transfer: the partial file goes.
	begin(-1)
	partials := func() int {
		ents, _ := os.ReadDir(filepath.Join(root, ".partial"))
		return len(ents)
	}
	if partials() != 1 {
		t.Fatalf("%d partial files before the link closed", partials())
	}
	extB.Close()
	deadline := time.Now().Add(10 * time.Second)
	for partials() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the partial file outlived its link")
		}
		time.Sleep(10 * time.Millisecond) // partial files go silently: polled, bounded
	}
	// Only the committed file is in the folder.
	if l, err := mine.ListResources(ctx, nil); err != nil || len(l.Resources) != 1 {
		t.Fatalf("resources: %+v %v", l, err)
	}
}
