package files

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func transfers(t *testing.T) (*Sandbox, *Transfers) {
	t.Helper()
	s := sandbox(t)
	return s, NewTransfers(s)
}

// partials is the partial files on disk.
func partials(t *testing.T, s *Sandbox) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(s.Root(), partialDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func TestTransferInChunksLandsAsANewFileAndHidesItsPartial(t *testing.T) {
	t.Parallel()
	s, tr := transfers(t)
	if _, err := s.Put("f1", "big.pdf", "application/pdf", []byte("taken")); err != nil {
		t.Fatal(err)
	}
	want := bytes.Repeat([]byte("0123456789abcdef"), (ChunkMax*2+100)/16)
	id, err := tr.Begin("link-1", "f1", "big", "application/pdf", int64(len(want)))
	if err != nil {
		t.Fatal(err)
	}
	var off int64
	for off < int64(len(want)) {
		end := min(off+ChunkMax, int64(len(want)))
		n, err := tr.Chunk("link-1", id, off, want[off:end])
		if err != nil || n != end {
			t.Fatalf("chunk at %d: %d %v", off, n, err)
		}
		off = end
		// Nothing half-written is listed, read or uploadable.
		if got := s.List("f1"); len(got) != 1 || got[0].Name != "big.pdf" {
			t.Fatalf("listed during the transfer: %+v", got)
		}
	}
	e, err := tr.Commit("link-1", id, "f1", off)
	if err != nil {
		t.Fatal(err)
	}
	if e.Name != "big (2).pdf" || e.Size != int64(len(want)) || e.MIMEType != "application/pdf" {
		t.Fatalf("entry %+v", e)
	}
	b, _, err := s.Read("f1", e.Name, MaxTransfer)
	if err != nil || !bytes.Equal(b, want) {
		t.Fatalf("read back %d bytes, %v", len(b), err)
	}
	fi, _ := os.Stat(filepath.Join(s.Root(), "f1", e.Name))
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
	if p := partials(t, s); len(p) != 0 || tr.Open() != 0 {
		t.Fatalf("left behind: %v, %d open", p, tr.Open())
	}
	// A committed id is gone.
	if _, err := tr.Chunk("link-1", id, off, []byte("x")); !errors.Is(err, ErrNoTransfer) {
		t.Fatalf("chunk after commit: %v", err)
	}
}

func TestTransferBadInputIsRefusedAndDropsThePartial(t *testing.T) {
	t.Parallel()
	s, tr := transfers(t)
	tr.max = 3 * ChunkMax
	begin := func(size int64) string {
		t.Helper()
		id, err := tr.Begin("link-1", "f1", "x.bin", "application/octet-stream", size)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	chunk := make([]byte, ChunkMax)

	// An unknown id, and another link's id, are the same refusal.
	if _, err := tr.Chunk("link-1", "00000000000000000000000000000000", 0, []byte("x")); !errors.Is(err, ErrNoTransfer) {
		t.Fatalf("unknown id: %v", err)
	}
	theirs := begin(-1)
	if _, err := tr.Chunk("link-2", theirs, 0, []byte("x")); !errors.Is(err, ErrNoTransfer) {
		t.Fatalf("another link's id: %v", err)
	}
	if _, err := tr.Commit("link-2", theirs, "f1", 0); !errors.Is(err, ErrNoTransfer) {
		t.Fatalf("another link's commit: %v", err)
	}
	if err := tr.Cancel("link-2", theirs); !errors.Is(err, ErrNoTransfer) {
		t.Fatalf("another link's cancel: %v", err)
	}

	// Out of order: a gap, and a chunk sent twice.
	if _, err := tr.Chunk("link-1", theirs, 0, []byte("abc")); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Chunk("link-1", theirs, 10, []byte("def")); !errors.Is(err, ErrOutOfOrder) {
		t.Fatalf("a gap: %v", err)
	}
	if _, err := tr.Chunk("link-1", theirs, 3, []byte("def")); !errors.Is(err, ErrNoTransfer) {
		t.Fatalf("after an out-of-order chunk the transfer is gone: %v", err)
	}
	again := begin(-1)
	if _, err := tr.Chunk("link-1", again, 0, []byte("abc")); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Chunk("link-1", again, 0, []byte("abc")); !errors.Is(err, ErrOutOfOrder) {
		t.Fatalf("a repeated chunk: %v", err)
	}

	// Oversize: declared, one chunk, and the running total.
	if _, err := tr.Begin("link-1", "f1", "x.bin", "", tr.max+1); !errors.Is(err, ErrTransferTooLarge) {
		t.Fatalf("declared over the cap: %v", err)
	}
	big := begin(-1)
	if _, err := tr.Chunk("link-1", big, 0, make([]byte, ChunkMax+1)); !errors.Is(err, ErrTransferTooLarge) {
		t.Fatalf("a chunk over ChunkMax: %v", err)
	}
	total := begin(-1)
	var off int64
	for i := range 3 {
		if off, _ = tr.Chunk("link-1", total, off, chunk); off != int64(i+1)*ChunkMax {
			t.Fatalf("chunk %d", i)
		}
	}
	if _, err := tr.Chunk("link-1", total, off, []byte("x")); !errors.Is(err, ErrTransferTooLarge) {
		t.Fatalf("past the total cap: %v", err)
	}
	declared := begin(4)
	if _, err := tr.Chunk("link-1", declared, 0, []byte("12345")); !errors.Is(err, ErrSizeMismatch) {
		t.Fatalf("more than declared: %v", err)
	}

	// Commit with the wrong size.
	short := begin(-1)
	if _, err := tr.Chunk("link-1", short, 0, []byte("abc")); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Commit("link-1", short, "f1", 4); !errors.Is(err, ErrSizeMismatch) {
		t.Fatalf("commit of the wrong size: %v", err)
	}
	under := begin(10)
	if _, err := tr.Chunk("link-1", under, 0, []byte("abc")); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Commit("link-1", under, "f1", 3); !errors.Is(err, ErrSizeMismatch) {
		t.Fatalf("commit short of the declared size: %v", err)
	}

	// Cancel: the partial goes, and the id with it.
	c := begin(-1)
	if _, err := tr.Chunk("link-1", c, 0, []byte("abc")); err != nil {
		t.Fatal(err)
	}
	if err := tr.Cancel("link-1", c); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Commit("link-1", c, "f1", 3); !errors.Is(err, ErrNoTransfer) {
		t.Fatalf("commit after cancel: %v", err)
	}
	if err := tr.Cancel("link-1", c); !errors.Is(err, ErrNoTransfer) {
		t.Fatalf("cancel twice: %v", err)
	}

	// Bad names and folders fail before anything is opened.
	for _, n := range []string{"../x", "a/b", ".hidden", ""} {
		if _, err := tr.Begin("link-1", "f1", n, "", 1); !errors.Is(err, ErrName) {
			t.Fatalf("name %q: %v", n, err)
		}
	}
	if _, err := tr.Begin("link-1", "../f1", "x", "", 1); !errors.Is(err, ErrNotFound) {
		t.Fatalf("bad folder: %v", err)
	}

	// Nothing refused was kept.
	if tr.Open() != 0 {
		t.Fatalf("%d transfers open", tr.Open())
	}
	if p := partials(t, s); len(p) != 0 {
		t.Fatalf("partials left: %v", p)
	}
	if got := s.List("f1"); len(got) != 0 {
		t.Fatalf("files: %+v", got)
	}
}

func TestTransfersEndWithTheirLinkOrSilence(t *testing.T) {
	t.Parallel()
	s, tr := transfers(t)
	var ids []string
	for range MaxOpenPerOwner {
		id, err := tr.Begin("link-1", "f1", "x", "", -1)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if _, err := tr.Begin("link-1", "f1", "x", "", -1); !errors.Is(err, ErrTransferBusy) {
		t.Fatalf("past the per-link cap: %v", err)
	}
	other, err := tr.Begin("link-2", "f2", "y", "", -1)
	if err != nil {
		t.Fatalf("another link is not held back: %v", err)
	}
	// The link closed: all of its transfers go, the other link's stay.
	tr.DropOwner("link-1")
	if tr.Open() != 1 || len(partials(t, s)) != 1 {
		t.Fatalf("after the link closed: %d open, partials %v", tr.Open(), partials(t, s))
	}
	if _, err := tr.Chunk("link-1", ids[0], 0, []byte("x")); !errors.Is(err, ErrNoTransfer) {
		t.Fatalf("chunk after the link closed: %v", err)
	}

	// Silence past the idle time drops a transfer.
	tr.idle = 50 * time.Millisecond
	quiet, err := tr.Begin("link-3", "f3", "z", "", -1)
	if err != nil {
		t.Fatal(err)
	}
	// A bounded poll: the idle timer drops the transfer silently, and an
	// event added only for this test would be a hook in production.
	deadline := time.Now().Add(5 * time.Second)
	for tr.Open() != 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := tr.Chunk("link-3", quiet, 0, []byte("x")); !errors.Is(err, ErrNoTransfer) {
		t.Fatalf("chunk after the idle time: %v", err)
	}
	if p := partials(t, s); len(p) != 1 || p[0] != other {
		t.Fatalf("partials left: %v", p)
	}
}

func TestStalePartialsFromAnEarlierDaemonAreSwept(t *testing.T) {
	t.Parallel()
	s, tr := transfers(t)
	id, err := tr.Begin("link-1", "f1", "x", "", -1)
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(s.Root(), partialDir, id), old, old); err != nil {
		t.Fatal(err)
	}
	fresh, err := tr.Begin("link-1", "f1", "y", "", -1)
	if err != nil {
		t.Fatal(err)
	}
	NewTransfers(s) // a restarted daemon
	if p := partials(t, s); len(p) != 1 || p[0] != fresh {
		t.Fatalf("partials after the sweep: %v", p)
	}
}
