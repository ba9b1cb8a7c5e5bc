package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// pgrepServe lists pids of `torii serve` processes of the test binary.
func pgrepServe(t *testing.T) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc: cannot count daemons")
	}
	want := []byte(toriiBin + "\x00serve")
	var pids []int
	for _, d := range ents {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err == nil && bytes.HasPrefix(b, want) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func environHas(pid int, kv string) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	if err != nil {
		return false
	}
	for _, e := range bytes.Split(b, []byte{0}) {
		if string(e) == kv {
			return true
		}
	}
	return false
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}
