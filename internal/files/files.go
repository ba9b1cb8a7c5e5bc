// Package files is the download sandbox: the one place on disk where
// files an agent asked for (a printed PDF, a saved page, a screenshot kept
// as a file, an export, a download the person allowed) are written, and
// the only place `upload` takes files from. Each agent session has its own
// folder under the root; a session reaches only its own folder, by plain
// file names (SECURITY I-66).
package files

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxName is the longest file name the sandbox takes, in bytes.
const MaxName = 200

// MaxFiles is how many files one session folder holds; a put past it is refused.
const MaxFiles = 1000

// URIPrefix starts every file's resource URI: torii://files/<folder>/<name>.
const URIPrefix = "torii://files/"

// ErrName is a file name with a path separator, "..", a leading dot, a
// control or bidirectional control character, or too long.
var ErrName = errors.New("not a plain file name")

// ErrNotFound is any file a session cannot read: missing, another
// session's, a symlink, not a regular file. One error for all of them, so
// a refusal says nothing about what is there.
var ErrNotFound = errors.New("no such file in this session's sandbox")

// ErrFull is a session folder at MaxFiles.
var ErrFull = errors.New("the session's sandbox folder is full")

// Entry is one file of a session folder.
type Entry struct {
	Name     string `json:"name"`
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType"`
	Size     int64  `json:"size"`
}

// Sandbox is the root folder (default ~/Downloads/torii).
type Sandbox struct {
	root string
}

// DefaultRoot is ~/Downloads/torii.
func DefaultRoot() string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		home = os.TempDir()
	}
	return filepath.Join(home, "Downloads", "torii")
}

// New returns the sandbox at root ("" = DefaultRoot; a leading ~/ is the home folder).
func New(root string) *Sandbox {
	if root == "" {
		root = DefaultRoot()
	} else if rest, ok := strings.CutPrefix(root, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			root = filepath.Join(home, rest)
		}
	}
	return &Sandbox{root: filepath.Clean(root)}
}

// Root is the sandbox's root folder.
func (s *Sandbox) Root() string { return s.root }

// ValidName checks a name an agent or tool chose: a plain file name, never
// a path (SECURITY I-66).
func ValidName(name string) error {
	switch {
	case name == "", len(name) > MaxName, !utf8.ValidString(name):
		return fmt.Errorf("%w: %q must be 1–%d bytes of UTF-8", ErrName, clip(name), MaxName)
	case strings.ContainsAny(name, `/\`):
		return fmt.Errorf("%w: %q holds a path separator; give a name only, like report.pdf", ErrName, clip(name))
	case name == "." || name == ".." || strings.HasPrefix(name, "."):
		return fmt.Errorf("%w: %q starts with a dot; give a name like report.pdf", ErrName, clip(name))
	case strings.IndexFunc(name, func(r rune) bool { return unicode.IsControl(r) }) >= 0:
		return fmt.Errorf("%w: %q holds a control character", ErrName, clip(name))
	}
	if i := strings.IndexFunc(name, isBidi); i >= 0 {
		r, _ := utf8.DecodeRuneInString(name[i:])
		return fmt.Errorf("%w: %q holds U+%04X, a bidirectional control character that can disguise a name's real extension; give a name without it", ErrName, clip(name), r)
	}
	return nil
}

// isBidi reports the bidirectional control characters: the marks
// (U+061C, U+200E, U+200F), embeddings and overrides (U+202A–U+202E) and
// isolates (U+2066–U+2069). In a file name they reorder what the person
// reads, so a name's real extension can hide behind a harmless one
// (SECURITY I-85).
func isBidi(r rune) bool {
	return r == 0x061C || r == 0x200E || r == 0x200F || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}

// SafeName turns a name the web chose (a download's) into a valid one: its
// last path segment, leading dots, control and bidi characters dropped, cut to
// MaxName; "download" when nothing is left.
func SafeName(raw string) string {
	if i := strings.LastIndexAny(raw, `/\`); i >= 0 {
		raw = raw[i+1:]
	}
	raw = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || isBidi(r) || r == utf8.RuneError {
			return -1
		}
		return r
	}, raw)
	raw = strings.TrimSpace(strings.TrimLeft(raw, ". "))
	for len(raw) > MaxName {
		_, n := utf8.DecodeLastRuneInString(raw)
		raw = raw[:len(raw)-n]
	}
	if ValidName(raw) != nil {
		return "download"
	}
	return raw
}

// ValidFolder checks a session folder name (minted by the daemon).
func ValidFolder(folder string) bool {
	if folder == "" || len(folder) > 120 || ValidName(folder) != nil {
		return false
	}
	return strings.IndexFunc(folder, func(r rune) bool {
		return !(r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '.'))
	}) < 0
}

// URI is a file's resource URI.
func URI(folder, name string) string { return URIPrefix + folder + "/" + url.PathEscape(name) }

// ParseURI splits a resource URI into folder and name; ok false for any
// URI that is not a well-formed sandbox file.
func ParseURI(uri string) (folder, name string, ok bool) {
	rest, found := strings.CutPrefix(uri, URIPrefix)
	if !found {
		return "", "", false
	}
	folder, esc, found := strings.Cut(rest, "/")
	if !found || !ValidFolder(folder) {
		return "", "", false
	}
	name, err := url.PathUnescape(esc)
	if err != nil || ValidName(name) != nil {
		return "", "", false
	}
	return folder, name, true
}

// extByType: the file extension a saved file gets when its name has none
// its MIME type knows, and the type a name's extension reads back as.
var extByType = map[string]string{
	"application/pdf":  ".pdf",
	"image/png":        ".png",
	"image/jpeg":       ".jpg",
	"image/webp":       ".webp",
	"text/html":        ".html",
	"text/plain":       ".txt",
	"text/markdown":    ".md",
	"text/csv":         ".csv",
	"application/json": ".json",
}

var typeByExt = map[string]string{
	".pdf": "application/pdf", ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
	".webp": "image/webp", ".html": "text/html", ".htm": "text/html", ".txt": "text/plain",
	".md": "text/markdown", ".csv": "text/csv", ".json": "application/json", ".har": "application/json",
	".mhtml": "multipart/related", ".zip": "application/zip", ".gif": "image/gif", ".svg": "image/svg+xml",
}

// MIMEType is the type a file name reads back as: the file on disk is all
// there is, so the name's extension decides.
func MIMEType(name string) string {
	ext := strings.ToLower(filepath.Ext(name))
	if t, ok := typeByExt[ext]; ok {
		return t
	}
	if t := mime.TypeByExtension(ext); t != "" {
		if base, _, err := mime.ParseMediaType(t); err == nil {
			return base
		}
	}
	return "application/octet-stream"
}

// WithExtension gives name the extension of mimeType when it has none that
// reads back as a known type (print_to_pdf's "report" is report.pdf).
func WithExtension(name, mimeType string) string {
	base, _, err := mime.ParseMediaType(mimeType)
	if err != nil {
		return name
	}
	ext, ok := extByType[base]
	if !ok || MIMEType(name) != "application/octet-stream" {
		return name // its own extension says what it is
	}
	if len(name)+len(ext) > MaxName {
		return name
	}
	return name + ext
}

// IsText says whether resources/read answers a type as text rather than a blob.
func IsText(mimeType string) bool {
	return strings.HasPrefix(mimeType, "text/") || mimeType == "application/json" || strings.HasSuffix(mimeType, "+json")
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// folderRoot opens the session folder as an os.Root, creating it (and the
// sandbox root) owner-only when create is set. os.Root refuses every path
// that leaves the folder, through ".." or a symlink (SECURITY I-66).
func (s *Sandbox) folderRoot(folder string, create bool) (*os.Root, error) {
	if !ValidFolder(folder) {
		return nil, ErrNotFound
	}
	dir := filepath.Join(s.root, folder)
	if create {
		if err := os.MkdirAll(s.root, 0o700); err != nil {
			return nil, fmt.Errorf("create the download sandbox %s: %w", s.root, err)
		}
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("create the session folder: %w", err)
		}
	}
	// The folder itself must be a real directory, not a link somewhere else.
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return nil, ErrNotFound
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, ErrNotFound
	}
	return r, nil
}

// regular is the Lstat of a name in the folder when it is a regular file
// (a symlink, even one pointing inside, is refused).
func regular(r *os.Root, name string) (fs.FileInfo, error) {
	if ValidName(name) != nil {
		return nil, ErrNotFound
	}
	fi, err := r.Lstat(name)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, ErrNotFound
	}
	return fi, nil
}

// uniqueName is name, or "name (2).ext", "name (3).ext"… for the first not taken.
func uniqueName(r *os.Root, name string) string {
	ext := filepath.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	for i := 1; ; i++ {
		n := name
		if i > 1 {
			n = stem + " (" + strconv.Itoa(i) + ")" + ext
		}
		if _, err := r.Lstat(n); errors.Is(err, fs.ErrNotExist) {
			return n
		}
		if i > MaxFiles {
			return ""
		}
	}
}

func (s *Sandbox) entry(folder, name string, size int64) Entry {
	return Entry{Name: name, URI: URI(folder, name), MIMEType: MIMEType(name), Size: size}
}

func count(r *os.Root) int {
	f, err := r.Open(".")
	if err != nil {
		return 0
	}
	defer f.Close()
	names, _ := f.Readdirnames(MaxFiles + 1)
	return len(names)
}

// Put writes data as a new file of the session folder (mode 0600, never
// over an existing one: a taken name gets " (2)"…) and returns its entry.
func (s *Sandbox) Put(folder, name, mimeType string, data []byte) (Entry, error) {
	if err := ValidName(name); err != nil {
		return Entry{}, err
	}
	name = WithExtension(name, mimeType)
	r, err := s.folderRoot(folder, true)
	if err != nil {
		return Entry{}, err
	}
	defer r.Close()
	if count(r) >= MaxFiles {
		return Entry{}, ErrFull
	}
	for range 3 {
		n := uniqueName(r, name)
		if n == "" {
			return Entry{}, ErrFull
		}
		f, err := r.OpenFile(n, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue // taken between the look and the create
		}
		if err != nil {
			return Entry{}, fmt.Errorf("write %s: %w", n, err)
		}
		_, werr := f.Write(data)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			_ = r.Remove(n)
			return Entry{}, fmt.Errorf("write %s: %w", n, werr)
		}
		return s.entry(folder, n, int64(len(data))), nil
	}
	return Entry{}, ErrFull
}

// Open opens a regular file of the session folder for reading.
func (s *Sandbox) Open(folder, name string) (*os.File, Entry, error) {
	r, err := s.folderRoot(folder, false)
	if err != nil {
		return nil, Entry{}, ErrNotFound
	}
	defer r.Close()
	if _, err := regular(r, name); err != nil {
		return nil, Entry{}, err
	}
	f, err := r.Open(name)
	if err != nil {
		return nil, Entry{}, ErrNotFound
	}
	// What was opened is what was checked: a swap for a link in between shows here.
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, Entry{}, ErrNotFound
	}
	return f, s.entry(folder, name, fi.Size()), nil
}

// Read returns a file's bytes, refusing one over max bytes.
func (s *Sandbox) Read(folder, name string, max int64) ([]byte, Entry, error) {
	f, e, err := s.Open(folder, name)
	if err != nil {
		return nil, e, err
	}
	defer f.Close()
	if e.Size > max {
		return nil, e, &TooLargeError{Size: e.Size, Max: max}
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, e, ErrNotFound
	}
	if int64(len(b)) > max {
		return nil, e, &TooLargeError{Size: int64(len(b)), Max: max}
	}
	return b, e, nil
}

// TooLargeError is a file over what one read may return.
type TooLargeError struct{ Size, Max int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the file is %d bytes, over the %d a read returns", e.Size, e.Max)
}

// Path is the absolute path of a regular file of the session folder, for
// upload: only names, only the session's own folder, never a symlink.
func (s *Sandbox) Path(folder, name string) (string, Entry, error) {
	f, e, err := s.Open(folder, name)
	if err != nil {
		return "", e, err
	}
	f.Close()
	return filepath.Join(s.root, folder, name), e, nil
}

// List is the session folder's regular files, by name.
func (s *Sandbox) List(folder string) []Entry {
	r, err := s.folderRoot(folder, false)
	if err != nil {
		return nil
	}
	defer r.Close()
	d, err := r.Open(".")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(MaxFiles)
	slices.Sort(names)
	var out []Entry
	for _, n := range names {
		if fi, err := regular(r, n); err == nil {
			out = append(out, s.entry(folder, n, fi.Size()))
		}
	}
	return out
}

// Adopt moves a finished browser download into the session folder under a
// safe form of name. src must be a regular file (not a symlink) whose
// folder is named like the session folder inside a folder named "torii":
// where the extension told the browser to save the session's downloads.
// Any other path is refused, so the daemon never moves a file the browser
// did not just write for this session (SECURITY I-66).
func (s *Sandbox) Adopt(folder, src, name string) (Entry, error) {
	if !ValidFolder(folder) || !filepath.IsAbs(src) {
		return Entry{}, ErrNotFound
	}
	src = filepath.Clean(src)
	dir := filepath.Dir(src)
	if filepath.Base(dir) != folder || filepath.Base(filepath.Dir(dir)) != "torii" {
		return Entry{}, fmt.Errorf("%w: not a download saved for this session", ErrNotFound)
	}
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() {
			return Entry{}, fmt.Errorf("%w: the download's folder is a link", ErrNotFound)
		}
	}
	fi, err := os.Lstat(src)
	if err != nil || !fi.Mode().IsRegular() {
		return Entry{}, ErrNotFound
	}
	r, err := s.folderRoot(folder, true)
	if err != nil {
		return Entry{}, err
	}
	defer r.Close()
	target := filepath.Join(s.root, folder)
	if dir == target {
		// The browser saved straight into the sandbox.
		n := filepath.Base(src)
		if ValidName(n) != nil {
			safe := uniqueName(r, SafeName(n))
			if safe == "" {
				return Entry{}, ErrFull
			}
			if err := os.Rename(src, filepath.Join(target, safe)); err != nil {
				return Entry{}, err
			}
			n = safe
		}
		return s.entry(folder, n, fi.Size()), nil
	}
	if count(r) >= MaxFiles {
		return Entry{}, ErrFull
	}
	n := uniqueName(r, SafeName(name))
	if n == "" {
		return Entry{}, ErrFull
	}
	dst := filepath.Join(target, n)
	if err := os.Rename(src, dst); err != nil {
		// Another file system: copy, then remove the browser's copy.
		if err := copyInto(r, n, src); err != nil {
			return Entry{}, err
		}
		_ = os.Remove(src)
	}
	_ = os.Chmod(dst, 0o600)
	return s.entry(folder, n, fi.Size()), nil
}

func copyInto(r *os.Root, name, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		_ = r.Remove(name)
		return err
	}
	return out.Close()
}
