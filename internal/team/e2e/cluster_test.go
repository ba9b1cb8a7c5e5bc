package e2e_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/torii-browser/torii/internal/pairing"
	"github.com/torii-browser/torii/internal/team/teamtest"
)

// cluster is the engines and the replicas sharing them.
type cluster struct {
	t          *testing.T
	pg, nats   *teamtest.Server
	dir        string
	adminToken string
	replicas   []*replica
}

// replica is one `torii serve --team` process.
type replica struct {
	name, addr string
	cfgDir     string
	stateDir   string
	log        string
	mu         sync.Mutex
	cmd        *exec.Cmd
	done       chan struct{}
}

func newCluster(t *testing.T, n int) *cluster {
	t.Helper()
	c := &cluster{t: t, dir: t.TempDir()}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); c.nats = teamtest.NATS(t) }()
	c.pg = teamtest.Postgres(t)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	// What a Helm Secret gives every replica: one gateway identity, one
	// bootstrap admin secret.
	idFile := filepath.Join(c.dir, "identity", "key")
	if err := os.MkdirAll(filepath.Dir(idFile), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := pairing.LoadOrCreateIdentity(idFile); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 24)
	_, _ = rand.Read(buf)
	c.adminToken = "admin-" + hex.EncodeToString(buf)
	adminFile := filepath.Join(c.dir, "admin", "token")
	if err := os.MkdirAll(filepath.Dir(adminFile), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(adminFile, []byte(c.adminToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		r := &replica{name: fmt.Sprintf("r%d", i), addr: fmt.Sprintf("127.0.0.1:%d", teamtest.FreePort(t))}
		r.cfgDir = filepath.Join(c.dir, r.name, "config")
		r.stateDir = filepath.Join(c.dir, r.name, "state")
		r.log = filepath.Join(c.dir, r.name, "torii.log")
		for _, d := range []string{r.cfgDir, r.stateDir} {
			if err := os.MkdirAll(d, 0o700); err != nil {
				t.Fatal(err)
			}
		}
		cfg := map[string]any{
			"listen": r.addr,
			"team": map[string]any{
				"store":          c.pg.URL,
				"bus":            c.nats.URL,
				"publicURL":      "http://" + r.addr,
				"identityFile":   idFile,
				"adminTokenFile": adminFile,
				"replica":        r.name,
			},
		}
		b, _ := json.MarshalIndent(cfg, "", "  ")
		if err := os.WriteFile(filepath.Join(r.cfgDir, "config.json"), b, 0o600); err != nil {
			t.Fatal(err)
		}
		c.replicas = append(c.replicas, r)
	}
	// The first replica applies the migrations alone; the others then start
	// side by side.
	c.start(0)
	c.waitReady(0, 30*time.Second)
	for i := 1; i < n; i++ {
		c.start(i)
	}
	for i := 1; i < n; i++ {
		c.waitReady(i, 30*time.Second)
	}
	t.Cleanup(func() {
		for i := range c.replicas {
			c.kill(i)
		}
		if t.Failed() {
			for _, r := range c.replicas {
				t.Logf("replica %s log:\n%s", r.name, tailFile(r.log, 6000))
			}
		}
	})
	return c
}

func (c *cluster) addrs() []string {
	out := make([]string, len(c.replicas))
	for i, r := range c.replicas {
		out[i] = r.addr
	}
	return out
}

func (c *cluster) url(i int, path string) string { return "http://" + c.replicas[i].addr + path }

// start runs replica i as a process of the real binary.
func (c *cluster) start(i int) {
	c.t.Helper()
	r := c.replicas[i]
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd != nil {
		return
	}
	logf, err := os.OpenFile(r.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		c.t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--team", "--config-dir", r.cfgDir, "--listen", r.addr)
	cmd.Env = append(os.Environ(), "TORII_CONFIG_DIR="+r.cfgDir, "TORII_STATE_DIR="+r.stateDir)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		c.t.Fatalf("start replica %s: %v", r.name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(done) }()
	r.cmd, r.done = cmd, done
}

// kill ends replica i with SIGKILL, as a node failure would, and waits
// for the process to be gone.
func (c *cluster) kill(i int) {
	r := c.replicas[i]
	r.mu.Lock()
	cmd, done := r.cmd, r.done
	r.cmd = nil
	r.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-done
}

func (c *cluster) alive(i int) bool {
	r := c.replicas[i]
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cmd != nil
}

// ready asks replica i's /readyz once.
func (c *cluster) ready(i int) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.url(i, "/readyz"), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// waitReadiness waits until replica i's /readyz says want, as a kubelet's
// probe would learn it, or fails after d.
func (c *cluster) waitReadiness(i int, want bool, d time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(d)
	r := c.replicas[i]
	for {
		if c.ready(i) == want {
			return
		}
		r.mu.Lock()
		done := r.done
		r.mu.Unlock()
		select {
		case <-done:
			engineless(c.t, tailFile(r.log, 4000))
			c.t.Fatalf("replica %s exited while waiting for /readyz=%v:\n%s", r.name, want, tailFile(r.log, 4000))
		default:
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("replica %s: /readyz is not %v after %s:\n%s", r.name, want, d, tailFile(r.log, 4000))
		}
		time.Sleep(50 * time.Millisecond) // the probe's period
	}
}

func (c *cluster) waitReady(i int, d time.Duration) { c.t.Helper(); c.waitReadiness(i, true, d) }

// api calls the admin or user API on replica i with a bearer token and
// decodes the JSON answer into out (when not nil). It returns the status.
func (c *cluster) api(i int, token, method, path string, body, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.url(i, path), rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, fmt.Errorf("%s %s on %s: %d %s", method, path, c.replicas[i].name, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: decode %q: %w", method, path, b, err)
		}
	}
	return resp.StatusCode, nil
}

// mustAPI is api that fails the test on any error.
func (c *cluster) mustAPI(i int, token, method, path string, body, out any) {
	c.t.Helper()
	if _, err := c.api(i, token, method, path, body, out); err != nil {
		c.t.Fatal(err)
	}
}

// user creates a user and a user token for it through the admin API.
type teamUser struct {
	ID, Name, TokenID, Token string
}

func (c *cluster) newUser(i int, name string) teamUser {
	c.t.Helper()
	var u struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	c.mustAPI(i, c.adminToken, http.MethodPost, "/admin/users", map[string]any{"name": name}, &u)
	tok := c.newToken(i, u.ID, name+"-agent")
	return teamUser{ID: u.ID, Name: u.Name, TokenID: tok.id, Token: tok.secret}
}

type tokenPair struct{ id, secret string }

func (c *cluster) newToken(i int, userID, label string) tokenPair {
	c.t.Helper()
	var tk struct {
		Token struct {
			ID string `json:"id"`
		} `json:"token"`
		Secret string `json:"secret"`
	}
	c.mustAPI(i, c.adminToken, http.MethodPost, "/admin/tokens", map[string]any{"user": userID, "label": label, "admin": false}, &tk)
	if tk.Secret == "" || tk.Token.ID == "" {
		c.t.Fatalf("POST /admin/tokens gave no token id or secret")
	}
	return tokenPair{id: tk.Token.ID, secret: tk.Secret}
}

func tailFile(path string, n int) string {
	b, _ := os.ReadFile(path)
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		s = s[len(s)-n:]
	}
	return s
}

// engineless stops the run when the binary was built without the store or
// bus drivers (a tree where those parts have not landed): skipped with the
// reason on a developer's machine, failed under CI.
func engineless(t *testing.T, log string) {
	t.Helper()
	for _, missing := range []string{"has no store driver", "has no bus"} {
		if strings.Contains(log, missing) {
			msg := "e2e: this torii build " + missing + " (internal/team/replica/engines.go): the team store and bus are not wired in yet"
			if os.Getenv("CI") != "" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
}
