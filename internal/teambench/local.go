package teambench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/torii-browser/torii/internal/control"
)

// proc is a torii process the bench started and measures.
type proc struct {
	name   string
	cmd    *exec.Cmd
	stderr syncBuf
	exited chan struct{}
}

func startProc(name, bin string, env []string, args ...string) (*proc, error) {
	p := &proc{name: name, cmd: exec.Command(bin, args...), exited: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stderr = &p.stderr
	p.cmd.Stdout = &p.stderr
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	return p, nil
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// stop ends the process (SIGTERM, then SIGKILL after 10 s) and waits.
func (p *proc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// gone reports an early exit with the process's output.
func (p *proc) gone() error {
	select {
	case <-p.exited:
		return fmt.Errorf("%s exited: %s", p.name, tail(p.stderr.String()))
	default:
		return nil
	}
}

func tail(s string) string {
	if len(s) > 3000 {
		s = s[len(s)-3000:]
	}
	return s
}

// localDaemon is the one-machine path: `torii serve` on loopback in a
// private state directory, with store tokens on /mcp.
type localDaemon struct {
	*proc
	addr string
	ctl  *control.Client
}

func startLocal(ctx context.Context, bin, dir string) (*localDaemon, error) {
	p, err := startProc("torii serve", bin, []string{"TORII_STATE_DIR=" + filepath.Join(dir, "s"),
		"TORII_CONFIG_DIR=" + filepath.Join(dir, "c")}, "serve", "--listen", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	l := &localDaemon{proc: p}
	sock := filepath.Join(dir, "s", "torii.sock")
	// The daemon's only announcement of readiness is its control socket.
	for deadline := time.Now().Add(30 * time.Second); ; {
		if l.ctl, err = control.Dial(ctx, sock); err == nil {
			break
		}
		if err := p.gone(); err != nil {
			return nil, err
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("torii serve did not open its control socket in 30 s: %s", tail(p.stderr.String()))
		}
		time.Sleep(50 * time.Millisecond)
	}
	var st struct {
		Listen string `json:"listen"`
	}
	if err := l.ctl.Call(ctx, "status", nil, &st); err != nil {
		l.stop()
		return nil, err
	}
	l.addr = st.Listen
	return l, nil
}

func (l *localDaemon) acpURL() string { return "ws://" + l.addr + "/acp" }
func (l *localDaemon) mcpURL() string { return "http://" + l.addr + "/mcp" }

func (l *localDaemon) token(ctx context.Context, label string) (string, error) {
	var tok struct {
		Token string `json:"token"`
	}
	err := l.ctl.Call(ctx, "tokens.create", map[string]string{"label": label}, &tok)
	return tok.Token, err
}

func (l *localDaemon) otp(ctx context.Context) (string, error) {
	var r struct {
		OTP string `json:"otp"`
	}
	err := l.ctl.Call(ctx, "launch.otp", nil, &r)
	return r.OTP, err
}

func (l *localDaemon) stop() {
	if l.ctl != nil {
		l.ctl.Close()
	}
	l.proc.stop()
}
