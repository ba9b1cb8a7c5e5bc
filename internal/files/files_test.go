package files

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func sandbox(t *testing.T) *Sandbox {
	t.Helper()
	return New(filepath.Join(t.TempDir(), "torii"))
}

func TestNamesWithPathSeparatorsAreRefused(t *testing.T) {
	t.Parallel()
	s := sandbox(t)
	for _, n := range []string{"../../.bashrc", "a/b.txt", `a\b.txt`, "..", ".", ".hidden", "", "x\x00y", strings.Repeat("a", MaxName+1), "/etc/passwd"} {
		_, err := s.Put("f1", n, "text/plain", []byte("x"))
		if !errors.Is(err, ErrName) {
			t.Errorf("Put(%q) = %v, want ErrName", n, err)
		}
	}
	// Nothing was written anywhere near the root.
	if _, err := os.Stat(filepath.Join(filepath.Dir(s.Root()), ".bashrc")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a file escaped the sandbox: %v", err)
	}
	if got := s.List("f1"); len(got) != 0 {
		t.Fatalf("files after refused puts: %v", got)
	}
}

func TestPutListReadAndUniqueNames(t *testing.T) {
	t.Parallel()
	s := sandbox(t)
	e, err := s.Put("f1", "report", "application/pdf", []byte("%PDF-1.7"))
	if err != nil {
		t.Fatal(err)
	}
	if e.Name != "report.pdf" || e.MIMEType != "application/pdf" || e.Size != 8 || e.URI != "torii://files/f1/report.pdf" {
		t.Fatalf("entry %+v", e)
	}
	e2, err := s.Put("f1", "report.pdf", "application/pdf", []byte("%PDF-2"))
	if err != nil || e2.Name != "report (2).pdf" {
		t.Fatalf("second put: %+v %v", e2, err)
	}
	fi, err := os.Stat(filepath.Join(s.Root(), "f1", "report.pdf"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode: %v %v", fi, err)
	}
	if di, _ := os.Stat(filepath.Join(s.Root(), "f1")); di.Mode().Perm() != 0o700 {
		t.Fatalf("folder mode %v", di.Mode())
	}
	b, got, err := s.Read("f1", "report (2).pdf", 1<<20)
	if err != nil || string(b) != "%PDF-2" || got.URI != URI("f1", "report (2).pdf") {
		t.Fatalf("read: %q %+v %v", b, got, err)
	}
	folder, name, ok := ParseURI(got.URI)
	if !ok || folder != "f1" || name != "report (2).pdf" {
		t.Fatalf("ParseURI(%s) = %s %s %v", got.URI, folder, name, ok)
	}
	if l := s.List("f1"); len(l) != 2 {
		t.Fatalf("list: %v", l)
	}
	if _, _, err := s.Read("f1", "report.pdf", 4); !errors.As(err, new(*TooLargeError)) {
		t.Fatalf("read over max: %v", err)
	}
}

func TestMissingFileAndOtherSessionsFileLookTheSame(t *testing.T) {
	t.Parallel()
	s := sandbox(t)
	if _, err := s.Put("mine", "a.txt", "text/plain", []byte("mine")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put("theirs", "secret.txt", "text/plain", []byte("theirs")); err != nil {
		t.Fatal(err)
	}
	_, _, missing := s.Read("mine", "nope.txt", 1<<20)
	_, _, other := s.Read("mine", "secret.txt", 1<<20)
	if !errors.Is(missing, ErrNotFound) || !errors.Is(other, ErrNotFound) || missing.Error() != other.Error() {
		t.Fatalf("missing %v, other session's %v: must be the same ErrNotFound", missing, other)
	}
	for _, bad := range []string{"torii://files/../theirs/secret.txt", "torii://files/mine/..%2Ftheirs%2Fsecret.txt", "file:///etc/passwd", "torii://files/mine"} {
		if _, _, ok := ParseURI(bad); ok {
			t.Errorf("ParseURI(%q) accepted", bad)
		}
	}
}

func TestSymlinkIntoEtcIsRefused(t *testing.T) {
	t.Parallel()
	s := sandbox(t)
	if _, err := s.Put("f1", "ok.txt", "text/plain", []byte("ok")); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(s.Root(), "f1")
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "passwd")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(dir, "etc")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Read("f1", "passwd", 1<<20); !errors.Is(err, ErrNotFound) {
		t.Fatalf("read through a symlink into /etc: %v", err)
	}
	if _, _, err := s.Path("f1", "passwd"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("upload path through a symlink: %v", err)
	}
	for _, e := range s.List("f1") {
		if e.Name != "ok.txt" {
			t.Fatalf("list shows %s", e.Name)
		}
	}
	// A session folder that is itself a link into /etc is no folder at all.
	if err := os.Symlink("/etc", filepath.Join(s.Root(), "f2")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Read("f2", "passwd", 1<<20); !errors.Is(err, ErrNotFound) {
		t.Fatalf("read in a folder linked to /etc: %v", err)
	}
	if _, err := s.Put("f2", "x.txt", "text/plain", []byte("x")); err == nil {
		t.Fatal("put into a folder linked to /etc succeeded")
	}
}

func TestAdoptDownloadNamedDotDotBashrc(t *testing.T) {
	t.Parallel()
	s := sandbox(t)
	dl := filepath.Join(t.TempDir(), "Downloads")
	in := filepath.Join(dl, "torii", "f1")
	if err := os.MkdirAll(in, 0o700); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(in, "bashrc")
	if err := os.WriteFile(src, []byte("echo pwned"), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := s.Adopt("f1", src, "../../.bashrc")
	if err != nil {
		t.Fatal(err)
	}
	if e.Name != "bashrc" || e.Size != 10 {
		t.Fatalf("entry %+v", e)
	}
	if _, err := os.Stat(filepath.Join(s.Root(), "f1", "bashrc")); err != nil {
		t.Fatalf("not in the sandbox: %v", err)
	}
	for _, p := range []string{filepath.Join(s.Root(), "..", ".bashrc"), filepath.Join(s.Root(), "..", "..", ".bashrc"), src} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s exists: %v", p, err)
		}
	}
}

func TestAdoptRefusesPathsTheBrowserDidNotSaveForTheSession(t *testing.T) {
	t.Parallel()
	s := sandbox(t)
	other := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(other, []byte("private"), 0o600); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(t.TempDir(), "torii", "f1")
	if err := os.MkdirAll(in, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(in, "passwd")
	if err := os.Symlink("/etc/passwd", link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{other, "/etc/passwd", link, "relative/torii/f1/x", filepath.Join(in, "missing")} {
		if _, err := s.Adopt("f1", p, "x.txt"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Adopt(%s) = %v, want refused", p, err)
		}
	}
	if _, err := os.Stat(other); err != nil {
		t.Fatal("a refused adopt moved the file")
	}
}

func TestSafeName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"../../.bashrc": "bashrc", `C:\x\y.pdf`: "y.pdf", "...": "download", "ok.txt": "ok.txt", "a\x07b": "ab", "invoice\u202Efdp.exe": "invoicefdp.exe", "\u2066x.pdf\u2069": "x.pdf"} {
		if got := SafeName(in); got != want {
			t.Errorf("SafeName(%q) = %q, want %q", in, got, want)
		}
	}
}

// SECURITY I-85: a name with a bidirectional control character is refused,
// naming the character by its code point.
func TestValidNameRefusesBidi(t *testing.T) {
	t.Parallel()
	for _, r := range []rune{0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069} {
		name := "report" + string(r) + "fdp.exe"
		err := ValidName(name)
		want := fmt.Sprintf("U+%04X", r)
		if !errors.Is(err, ErrName) || !strings.Contains(err.Error(), want) {
			t.Errorf("ValidName(%q) = %v, want ErrName naming %s", name, err, want)
		}
		if strings.ContainsRune(err.Error(), r) {
			t.Errorf("the refusal carries the raw character %U itself: %q", r, err)
		}
	}
	for _, ok := range []string{"report.pdf", "résumé.txt", "レポート.pdf", "تقرير.pdf"} {
		if err := ValidName(ok); err != nil {
			t.Errorf("ValidName(%q) = %v, want nil", ok, err)
		}
	}
	s := New(t.TempDir())
	if _, err := s.Put("sess-1", "x\u202Etxt.exe", "text/plain", []byte("x")); !errors.Is(err, ErrName) {
		t.Errorf("Put with U+202E: %v, want ErrName", err)
	}
}
