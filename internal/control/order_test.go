package control

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// InOrder requests written back to back reach the handler in the order
// written, and a released turn lets the next start while it still runs.
func TestInOrder(t *testing.T) {
	const n = 40
	var mu sync.Mutex
	var seen []int
	all := make(chan struct{})
	h := func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		var a [1]int
		json.Unmarshal(params, &a)
		k := a[0]
		mu.Lock()
		seen = append(seen, k)
		if len(seen) == n {
			close(all)
		}
		mu.Unlock()
		Release(ctx)
		select { // every call is running at once: none waited for another to end
		case <-all:
		case <-time.After(5 * time.Second):
			return nil, fmt.Errorf("call %d: the others never started", k)
		}
		return k, nil
	}
	path := filepath.Join(socketDir(t), "run", "torii.sock")
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := NewServer(h, nil)
	s.InOrder("seq")
	done := make(chan struct{})
	go func() { s.Serve(ctx, ln); close(done) }()
	t.Cleanup(func() { cancel(); <-done; s.Close() })

	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var b strings.Builder
	for k := 0; k < n; k++ {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"seq","params":[%d]}`+"\n", k+1, k)
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	for k := 0; k < n; k++ {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(line, `"error"`) {
			t.Fatal(line)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for k, v := range seen {
		if k != v {
			t.Fatalf("handler saw %v", seen)
		}
	}
}
