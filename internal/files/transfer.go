package files

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"time"
)

// A file of any size reaches the sandbox in bounded chunks: Begin opens a
// hidden partial file, Chunk appends in order, Commit moves it into the
// session folder under a free name, Cancel (or the sender's link closing,
// or silence past TransferIdle) removes it. So no single message has to
// hold a whole PDF, and nothing half-written is ever listed or read.
const (
	// ChunkMax is the most bytes one chunk carries: its base64 in a
	// JSON-RPC request stays under the link's 1 MiB request cap.
	ChunkMax = 512 << 10
	// MaxTransfer is the largest file a transfer may build.
	MaxTransfer = 256 << 20
	// MaxOpenPerOwner and MaxOpen bound the partial files held at once, per
	// sending link and in all.
	MaxOpenPerOwner = 4
	MaxOpen         = 16
	// TransferIdle: a transfer with no chunk for this long is dropped.
	TransferIdle = 30 * time.Second
	// TransferMaxAge: no transfer lives longer, however steadily it sends.
	TransferMaxAge = 10 * time.Minute
	// partialDir holds the partial files, under the sandbox root; its
	// leading dot keeps it from ever being a session folder.
	partialDir = ".partial"
)

// Transfer errors; each says what to do next.
var (
	// ErrNoTransfer: the id is unknown to this sender, or the transfer was
	// committed, cancelled or dropped (timed out, its link closed).
	ErrNoTransfer = errors.New("no open file transfer with that id from this link (finished, cancelled or timed out); begin a new one")
	// ErrOutOfOrder: a chunk not at the next offset; the transfer is dropped.
	ErrOutOfOrder = errors.New("chunk out of order; the transfer was dropped, begin a new one")
	// ErrTransferTooLarge: past MaxTransfer or a chunk over ChunkMax.
	ErrTransferTooLarge = errors.New("file transfer too large")
	// ErrTransferBusy: MaxOpenPerOwner or MaxOpen transfers are open.
	ErrTransferBusy = errors.New("too many file transfers are open; finish or cancel one first")
	// ErrSizeMismatch: Commit's size is not what the chunks added up to.
	ErrSizeMismatch = errors.New("the file's size does not match the bytes sent; the transfer was dropped")
)

type transfer struct {
	mu       sync.Mutex
	id       string
	owner    string
	folder   string
	name     string
	mimeType string
	declared int64 // -1: not said at Begin
	received int64
	f        *os.File
	idle     *time.Timer
	started  time.Time
	done     bool
}

// Transfers is the set of open chunked transfers into one sandbox.
type Transfers struct {
	sb   *Sandbox
	mu   sync.Mutex
	open map[string]*transfer
	// idle, maxAge and max are TransferIdle, TransferMaxAge and
	// MaxTransfer (smaller in tests).
	idle, maxAge time.Duration
	max          int64
}

// NewTransfers returns the transfer set of s, and removes partial files a
// previous daemon left behind (older than TransferIdle: a live sender
// writes more often than that).
func NewTransfers(s *Sandbox) *Transfers {
	t := &Transfers{sb: s, open: map[string]*transfer{}, idle: TransferIdle, maxAge: TransferMaxAge, max: MaxTransfer}
	t.sweep(time.Now().Add(-2 * TransferIdle))
	return t
}

func (t *Transfers) sweep(before time.Time) {
	r, err := os.OpenRoot(t.sb.root)
	if err != nil {
		return
	}
	defer r.Close()
	d, err := r.Open(partialDir)
	if err != nil {
		return
	}
	defer d.Close()
	ents, _ := d.ReadDir(-1)
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && fi.ModTime().Before(before) {
			_ = r.Remove(partialDir + "/" + e.Name())
		}
	}
}

// partialRoot opens the sandbox root, creating it and its partial folder
// owner-only; the partial folder must be a real directory.
func (t *Transfers) partialRoot() (*os.Root, error) {
	if err := os.MkdirAll(t.sb.root, 0o700); err != nil {
		return nil, fmt.Errorf("create the download sandbox %s: %w", t.sb.root, err)
	}
	r, err := os.OpenRoot(t.sb.root)
	if err != nil {
		return nil, err
	}
	if err := r.Mkdir(partialDir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		r.Close()
		return nil, err
	}
	if fi, err := r.Lstat(partialDir); err != nil || !fi.IsDir() {
		r.Close()
		return nil, fmt.Errorf("the sandbox's %s is not a folder", partialDir)
	}
	return r, nil
}

// Begin opens a transfer of a new file for owner (the sending link) into
// folder. size is the file's length when known, else -1. The name is
// checked now, so a bad one fails before any bytes travel.
func (t *Transfers) Begin(owner, folder, name, mimeType string, size int64) (string, error) {
	if err := ValidName(name); err != nil {
		return "", err
	}
	if !ValidFolder(folder) {
		return "", ErrNotFound
	}
	if size > t.max {
		return "", fmt.Errorf("%w: the file is %d bytes, over the %d one file may take", ErrTransferTooLarge, size, t.max)
	}
	if size < 0 {
		size = -1
	}
	fr, err := t.sb.folderRoot(folder, true)
	if err != nil {
		return "", err
	}
	full := count(fr) >= MaxFiles
	fr.Close()
	if full {
		return "", ErrFull
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	x := &transfer{id: id, owner: owner, folder: folder, name: WithExtension(name, mimeType), mimeType: mimeType, declared: size, started: time.Now()}
	// Held until the file exists, so a drop meanwhile waits for it.
	x.mu.Lock()
	defer x.mu.Unlock()
	t.mu.Lock()
	mine := 0
	for _, x := range t.open {
		if x.owner == owner {
			mine++
		}
	}
	if mine >= MaxOpenPerOwner || len(t.open) >= MaxOpen {
		t.mu.Unlock()
		return "", ErrTransferBusy
	}
	t.open[id] = x
	t.mu.Unlock()
	r, err := t.partialRoot()
	if err == nil {
		x.f, err = r.OpenFile(partialDir+"/"+id, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		r.Close()
	}
	if err != nil {
		t.closeLocked(x)
		return "", fmt.Errorf("open a partial file: %w", err)
	}
	x.idle = time.AfterFunc(t.idle, func() { t.drop(x) })
	return id, nil
}

// get is owner's open transfer id; another link's id is as unknown as a
// finished one.
func (t *Transfers) get(owner, id string) (*transfer, error) {
	t.mu.Lock()
	x := t.open[id]
	t.mu.Unlock()
	if x == nil || x.owner != owner {
		return nil, ErrNoTransfer
	}
	return x, nil
}

// Chunk appends data at offset, which must be the bytes received so far;
// it returns that count afterwards. Any refusal but an unknown id drops
// the transfer.
func (t *Transfers) Chunk(owner, id string, offset int64, data []byte) (int64, error) {
	x, err := t.get(owner, id)
	if err != nil {
		return 0, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.done {
		return 0, ErrNoTransfer
	}
	fail := func(err error) (int64, error) {
		t.closeLocked(x)
		return 0, err
	}
	switch {
	case offset != x.received:
		return fail(fmt.Errorf("%w: it starts at byte %d, the next byte is %d", ErrOutOfOrder, offset, x.received))
	case len(data) > ChunkMax:
		return fail(fmt.Errorf("%w: a chunk is %d bytes, over the %d one chunk takes", ErrTransferTooLarge, len(data), ChunkMax))
	case x.received+int64(len(data)) > t.max:
		return fail(fmt.Errorf("%w: the file passed %d bytes, the most one file may take", ErrTransferTooLarge, t.max))
	case x.declared >= 0 && x.received+int64(len(data)) > x.declared:
		return fail(fmt.Errorf("%w: more bytes than the %d declared", ErrSizeMismatch, x.declared))
	case time.Since(x.started) > t.maxAge:
		return fail(fmt.Errorf("%w (it ran past %s)", ErrNoTransfer, t.maxAge))
	}
	if _, err := x.f.Write(data); err != nil {
		return fail(fmt.Errorf("write the partial file: %w", err))
	}
	x.received += int64(len(data))
	x.idle.Reset(t.idle)
	return x.received, nil
}

// Commit checks that size bytes arrived (and were declared, if they were)
// and moves the file into its session folder as a new file (a taken name
// gets " (2)"…, never an overwrite). folder must be the one Begin named.
func (t *Transfers) Commit(owner, id, folder string, size int64) (Entry, error) {
	x, err := t.get(owner, id)
	if err != nil {
		return Entry{}, err
	}
	if x.folder != folder {
		return Entry{}, ErrNoTransfer
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.done {
		return Entry{}, ErrNoTransfer
	}
	defer t.closeLocked(x)
	if size != x.received || x.declared >= 0 && x.declared != x.received {
		return Entry{}, fmt.Errorf("%w: %d bytes arrived, %d were said", ErrSizeMismatch, x.received, size)
	}
	if err := x.f.Close(); err != nil {
		return Entry{}, fmt.Errorf("write the partial file: %w", err)
	}
	x.f = nil
	return t.place(x)
}

// place moves x's partial file into its folder under a free name: a hard
// link, which fails rather than replace a name taken meanwhile; a copy
// where the file system has no links.
func (t *Transfers) place(x *transfer) (Entry, error) {
	fr, err := t.sb.folderRoot(x.folder, true)
	if err != nil {
		return Entry{}, err
	}
	defer fr.Close()
	if count(fr) >= MaxFiles {
		return Entry{}, ErrFull
	}
	r, err := t.partialRoot()
	if err != nil {
		return Entry{}, err
	}
	defer r.Close()
	part := partialDir + "/" + x.id
	for range 3 {
		n := uniqueName(fr, x.name)
		if n == "" {
			return Entry{}, ErrFull
		}
		err := r.Link(part, x.folder+"/"+n)
		if errors.Is(err, fs.ErrExist) {
			continue // taken between the look and the link
		}
		if err != nil {
			err = copyFrom(r, part, fr, n)
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			if err != nil {
				return Entry{}, fmt.Errorf("write %s: %w", n, err)
			}
		}
		return t.sb.entry(x.folder, n, x.received), nil
	}
	return Entry{}, ErrFull
}

func copyFrom(src *os.Root, srcName string, dst *os.Root, name string) error {
	in, err := src.Open(srcName)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := dst.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		_ = dst.Remove(name)
		return err
	}
	return out.Close()
}

// Cancel drops owner's transfer and its partial file.
func (t *Transfers) Cancel(owner, id string) error {
	x, err := t.get(owner, id)
	if err != nil {
		return err
	}
	t.drop(x)
	return nil
}

// DropOwner drops every transfer of owner: its link closed.
func (t *Transfers) DropOwner(owner string) {
	t.mu.Lock()
	var mine []*transfer
	for _, x := range t.open {
		if x.owner == owner {
			mine = append(mine, x)
		}
	}
	t.mu.Unlock()
	for _, x := range mine {
		t.drop(x)
	}
}

// Open is how many transfers are open (for tests and status).
func (t *Transfers) Open() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.open)
}

func (t *Transfers) drop(x *transfer) {
	x.mu.Lock()
	defer x.mu.Unlock()
	t.closeLocked(x)
}

// closeLocked ends x: its slot freed, its partial file closed and removed
// (after Commit placed it, the folder keeps its own link or copy).
func (t *Transfers) closeLocked(x *transfer) {
	if x.done {
		return
	}
	x.done = true
	if x.idle != nil {
		x.idle.Stop()
	}
	t.mu.Lock()
	delete(t.open, x.id)
	t.mu.Unlock()
	if x.f != nil {
		x.f.Close()
		x.f = nil
	}
	if r, err := os.OpenRoot(t.sb.root); err == nil {
		_ = r.Remove(partialDir + "/" + x.id)
		r.Close()
	}
}
