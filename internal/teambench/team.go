package teambench

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/torii-browser/torii/internal/pairing"
	"github.com/torii-browser/torii/internal/team/teamtest"
)

// cluster is team mode on this machine: PostgreSQL, nats-server and n
// `torii serve --team` replicas on loopback, sharing one gateway identity
// and one bootstrap admin secret.
type cluster struct {
	pg, nats *teamtest.Server
	replicas []*replica
	admin    string
	hc       *http.Client
}

type replica struct {
	*proc
	addr string
}

func (r *replica) base() string   { return "http://" + r.addr }
func (r *replica) acpURL() string { return "ws://" + r.addr + "/acp" }
func (r *replica) mcpURL() string { return r.base() + "/mcp" }

func startCluster(ctx context.Context, bin, dir string, n int, sqlite bool) (*cluster, error) {
	c := &cluster{hc: &http.Client{Timeout: 30 * time.Second}}
	var err error
	for _, d := range []string{"pg", "nats", "identity", "admin"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return nil, err
		}
	}
	storeURL := "sqlite:" + filepath.Join(dir, "team.db")
	if !sqlite {
		if c.pg, err = teamtest.StartPostgres(filepath.Join(dir, "pg")); err != nil {
			return nil, err
		}
		storeURL = c.pg.URL
	}
	if c.nats, err = teamtest.StartNATS(filepath.Join(dir, "nats")); err != nil {
		c.stop()
		return nil, err
	}
	idFile := filepath.Join(dir, "identity", "key")
	if _, err := pairing.LoadOrCreateIdentity(idFile); err != nil {
		c.stop()
		return nil, err
	}
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	c.admin = hex.EncodeToString(secret)
	adminFile := filepath.Join(dir, "admin", "token")
	if err := os.WriteFile(adminFile, []byte(c.admin+"\n"), 0o600); err != nil {
		c.stop()
		return nil, err
	}
	for i := range n {
		r, err := startReplica(bin, filepath.Join(dir, "r"+strconv.Itoa(i)), i, storeURL, c.nats.URL, idFile, adminFile)
		if err != nil {
			c.stop()
			return nil, err
		}
		c.replicas = append(c.replicas, r)
	}
	for _, r := range c.replicas {
		if err := c.waitReady(ctx, r); err != nil {
			c.stop()
			return nil, err
		}
	}
	return c, nil
}

func startReplica(bin, dir string, i int, store, bus, idFile, adminFile string) (*replica, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cfg := map[string]any{"listen": addr, "team": map[string]any{
		"store": store, "bus": bus, "publicURL": "http://" + addr,
		"identityFile": idFile, "adminTokenFile": adminFile, "replica": "r" + strconv.Itoa(i)}}
	b, _ := json.MarshalIndent(cfg, "", "  ")
	cdir := filepath.Join(dir, "config")
	if err := os.MkdirAll(cdir, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(cdir, "config.json"), b, 0o600); err != nil {
		return nil, err
	}
	p, err := startProc("replica r"+strconv.Itoa(i), bin, []string{"TORII_STATE_DIR=" + filepath.Join(dir, "state"),
		"TORII_CONFIG_DIR=" + cdir}, "serve", "--team", "--config-dir", cdir, "--listen", addr)
	if err != nil {
		return nil, err
	}
	return &replica{proc: p, addr: addr}, nil
}

// waitReady waits for /readyz: the replica reaches its store and bus.
func (c *cluster) waitReady(ctx context.Context, r *replica) error {
	for deadline := time.Now().Add(60 * time.Second); ; {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.base()+"/readyz", nil)
		if resp, err := c.hc.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if err := r.gone(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after 60 s: %s", r.name, tail(r.stderr.String()))
		}
		time.Sleep(100 * time.Millisecond) // a process we started, coming up
	}
}

// api calls the admin or user API on replica i with a bearer token.
func (c *cluster) api(ctx context.Context, i int, token, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.replicas[i%len(c.replicas)].base()+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: HTTP %d: %s", method, path, resp.StatusCode, bytes.TrimSpace(b))
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%s %s: %w: %s", method, path, err, b)
		}
	}
	return nil
}

// user makes a user and a user token for it through the admin API.
func (c *cluster) user(ctx context.Context, name string) (id, token string, err error) {
	var u struct {
		ID string `json:"id"`
	}
	if err := c.api(ctx, 0, c.admin, http.MethodPost, "/admin/users", map[string]any{"name": name}, &u); err != nil {
		return "", "", err
	}
	var t struct {
		Secret string `json:"secret"`
	}
	if err := c.api(ctx, 0, c.admin, http.MethodPost, "/admin/tokens",
		map[string]any{"user": u.ID, "label": "bench agent", "admin": false}, &t); err != nil {
		return "", "", err
	}
	if u.ID == "" || t.Secret == "" {
		return "", "", fmt.Errorf("POST /admin/users and /admin/tokens gave no user ID or no secret")
	}
	return u.ID, t.Secret, nil
}

// otp is a one-time pairing secret for the token's user, from replica i.
func (c *cluster) otp(ctx context.Context, i int, token string) (string, error) {
	var o struct {
		Secret string `json:"secret"`
	}
	if err := c.api(ctx, i, token, http.MethodPost, "/v1/otp", map[string]any{}, &o); err != nil {
		return "", err
	}
	return o.Secret, nil
}

func (c *cluster) stop() {
	for _, r := range c.replicas {
		r.stop()
	}
	if c.nats != nil {
		c.nats.Stop()
	}
	if c.pg != nil {
		c.pg.Stop()
	}
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
