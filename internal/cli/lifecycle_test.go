package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/torii-browser/torii/extension"
)

func needExtension(t *testing.T) {
	t.Helper()
	if !extension.Built() {
		t.Skip("extension not built into this binary (run npm run build in extension/)")
	}
}

// A second `torii launch` (and a second `make run`, which adds --reuse --permissive) finds
// the managed browser running on its profile and reuses it: exit 0, no second browser.
func TestSecondLaunchReusesTheBrowser(t *testing.T) {
	t.Parallel()
	needExtension(t)
	e := newEnv(t)
	exe, argsFile := lockingBrowser(t, e.state, false)
	fx, _ := launchPaired(t, e.command("launch", "--browser", exe, "--headless"), argsFile, 0)

	for _, extra := range [][]string{nil, {"--reuse", "--permissive"}} {
		r := e.run("", append([]string{"launch", "--browser", exe, "--headless"}, extra...)...)
		if r.code != 0 {
			t.Fatalf("second launch %v: exit %d\n%s%s", extra, r.code, r.stdout, r.stderr)
		}
		want := "already running (pid " + strconv.Itoa(fx.pid) + ", profile " + filepath.Join(e.state, "profile") + `), paired as "`
		if !strings.Contains(r.stdout, want) {
			t.Errorf("second launch %v output lacks %q:\n%s", extra, want, r.stdout)
		}
		if extra != nil && !strings.Contains(r.stderr, "launch policy not applied (--reuse): the browser was already running") {
			t.Errorf("--permissive on a running browser is not noted: %s", r.stderr)
		}
	}
	if b, _ := os.ReadFile(argsFile); !strings.HasPrefix(string(b), strconv.Itoa(fx.pid)+"\n") {
		t.Errorf("a second browser was started: %s", b)
	}
	if !alive(fx.pid) {
		t.Error("the browser died")
	}
	// Without --reuse, a policy cannot reach a running browser: that stays a typed refusal.
	for _, flag := range []string{"--allow", "--permissive"} {
		args := []string{"launch", "--browser", exe, "--headless", flag}
		if flag == "--allow" {
			args = append(args, "example.com")
		}
		r := e.run("", args...)
		if r.code != 1 || !strings.Contains(r.stderr, flag+" not applied: the browser on profile") || !strings.Contains(r.stderr, "fix:") {
			t.Errorf("%s on a running browser: %d %s", flag, r.code, r.stderr)
		}
	}
}

func TestStopWithNothingRunning(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.run("", "stop")
	if r.code != 0 || !strings.Contains(r.stdout, "nothing to stop: no torii daemon and no managed browser is running") {
		t.Fatalf("stop with nothing running: %d %q %q", r.code, r.stdout, r.stderr)
	}
}

// stop ends the daemon and the browser launch started; one that ignores SIGTERM is killed
// once the timeout passes.
func TestStopEndsDaemonAndBrowser(t *testing.T) {
	t.Parallel()
	needExtension(t)
	for _, stubborn := range []bool{false, true} {
		t.Run("stubborn="+strconv.FormatBool(stubborn), func(t *testing.T) {
			e := newEnv(t)
			exe, argsFile := lockingBrowser(t, e.state, stubborn)
			fx, _ := launchPaired(t, e.command("launch", "--browser", exe, "--headless"), argsFile, 0)
			daemonPID := e.status().PID
			r := e.run("", "stop", "--timeout", "1s")
			if r.code != 0 {
				t.Fatalf("stop: %d %s %s", r.code, r.stdout, r.stderr)
			}
			for _, want := range []string{"stopped the daemon (pid " + strconv.Itoa(daemonPID) + ")\n",
				"stopped the managed browser (pid " + strconv.Itoa(fx.pid) + ", profile " + filepath.Join(e.state, "profile") + ")"} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("stop output lacks %q:\n%s", want, r.stdout)
				}
			}
			if stubborn != strings.Contains(r.stdout, "killed, it did not exit within 1s") {
				t.Errorf("stubborn=%v, output: %s", stubborn, r.stdout)
			}
			if alive(fx.pid) || alive(daemonPID) {
				t.Errorf("still running after stop: browser %v, daemon %v", alive(fx.pid), alive(daemonPID))
			}
			if r := e.run("", "status"); r.code != 1 {
				t.Errorf("status after stop: %d", r.code)
			}
			if r := e.run("", "stop"); r.code != 0 || !strings.Contains(r.stdout, "nothing to stop") {
				t.Errorf("second stop: %d %s", r.code, r.stdout)
			}
		})
	}
}

// restart = stop + start, and the managed browser that ran is launched again on its profile.
func TestRestartRelaunchesTheBrowser(t *testing.T) {
	t.Parallel()
	needExtension(t)
	e := newEnv(t)
	exe, argsFile := lockingBrowser(t, e.state, false)
	fx, _ := launchPaired(t, e.command("launch", "--browser", exe, "--headless"), argsFile, 0)
	oldDaemon := e.status().PID
	fx2, out := launchPaired(t, e.command("restart", "--timeout", "2s"), argsFile, fx.pid)
	for _, want := range []string{"stopped the daemon (pid " + strconv.Itoa(oldDaemon) + ")", "stopped the managed browser (pid " + strconv.Itoa(fx.pid),
		"started the daemon (pid ", "Torii is ready"} {
		if !strings.Contains(out, want) {
			t.Errorf("restart output lacks %q:\n%s", want, out)
		}
	}
	if alive(fx.pid) || !alive(fx2.pid) {
		t.Errorf("old browser alive %v, new browser alive %v", alive(fx.pid), alive(fx2.pid))
	}
	if st := e.status(); st.PID == oldDaemon || !st.ExtensionConnected {
		t.Errorf("after restart: daemon pid %d (was %d), extension connected %v", st.PID, oldDaemon, st.ExtensionConnected)
	}
	args, _ := os.ReadFile(argsFile)
	if !strings.Contains(string(args), "\n--headless=new\n") {
		t.Errorf("relaunched browser is not headless like the first: %s", args)
	}
}

var fixRE = regexp.MustCompile(`(?m)^FAIL (extension link|daemon|paired devices): (.*)\n  fix: (.*)$`)

// doctorFix runs doctor and returns the fix printed under the named failing check.
func doctorFix(t *testing.T, e *env, check string) (detail, fix string) {
	t.Helper()
	r := e.run("", "doctor")
	for _, m := range fixRE.FindAllStringSubmatch(r.stdout, -1) {
		if m[1] == check {
			// A fix may add a note after three spaces; the command is before it.
			cmd, _, _ := strings.Cut(m[3], "   ")
			return m[2], cmd
		}
	}
	t.Fatalf("doctor shows no failing %q check:\n%s", check, r.stdout)
	return "", ""
}

func (e *env) shell(cmdline string) *exec.Cmd {
	cmd := exec.Command("sh", "-c", cmdline)
	cmd.Env = e.environ()
	return cmd
}

// Each fix doctor prints works when run as printed, on a machine without a display: with the
// daemon down, with the managed browser closed, and after the browser's device was revoked.
func TestDoctorFixesRunAsPrinted(t *testing.T) {
	t.Parallel()
	needExtension(t)
	e := newEnv(t)
	e.noDisplay()
	exe, argsFile := lockingBrowser(t, e.state, false)
	// The printed fixes name no browser; discovery finds this one.
	e.extraEnv = append(e.extraEnv, "TORII_BROWSER="+exe)

	_, fix := doctorFix(t, e, "daemon")
	if fix != toriiBin+" launch --headless" {
		t.Errorf("daemon-down fix = %q, want the headless launch (no display)", fix)
	}
	fx, _ := launchPaired(t, e.shell(fix), argsFile, 0)
	if r := e.run("", "doctor"); strings.Contains(r.stdout, "FAIL daemon") || strings.Contains(r.stdout, "FAIL extension link") {
		t.Fatalf("after the daemon-down fix:\n%s", r.stdout)
	}

	// The browser closed.
	fx.client.Close()
	killAndWait(t, fx.pid)
	e.waitLink(false)
	_, fix = doctorFix(t, e, "extension link")
	if fix != toriiBin+" launch --headless" {
		t.Errorf("closed-browser fix = %q", fix)
	}
	fx, _ = launchPaired(t, e.shell(fix), argsFile, fx.pid)
	if r := e.run("", "doctor"); strings.Contains(r.stdout, "FAIL extension link") {
		t.Fatalf("after the closed-browser fix:\n%s", r.stdout)
	}

	// The browser's device revoked: a specific fix that pairs it anew.
	var devs devicesResult
	e.controlCall("devices.list", &devs)
	live := ""
	for _, d := range devs.Devices {
		if d.Connected {
			live = d.DeviceID
		}
	}
	if r := e.run("", "devices", "revoke", live); r.code != 0 || !strings.Contains(r.stdout, "pair it anew") {
		t.Fatalf("revoke: %d %s %s", r.code, r.stdout, r.stderr)
	}
	e.waitLink(false) // the daemon closes the device's connection as it revokes it
	detail, fix := doctorFix(t, e, "extension link")
	if !strings.Contains(detail, "was revoked") || fix != toriiBin+" stop && "+toriiBin+" launch --headless" {
		t.Errorf("after revoke: detail %q fix %q", detail, fix)
	}
	if r := e.run("", "launch"); r.code != 1 || !strings.Contains(r.stderr, "was revoked") || !strings.Contains(r.stderr, "fix: "+fix) {
		t.Errorf("launch on the revoked browser: %d %s", r.code, r.stderr)
	}
	launchPaired(t, e.shell(fix), argsFile, fx.pid)
	r := e.run("", "doctor")
	if strings.Contains(r.stdout, "FAIL extension link") || strings.Contains(r.stdout, "FAIL paired devices") {
		t.Fatalf("after the revoke fix:\n%s", r.stdout)
	}
}

func killAndWait(t *testing.T, pid int) {
	t.Helper()
	p, _ := os.FindProcess(pid)
	p.Kill()
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond) // not our child: no Wait, so its death is polled
	}
}

func (e *env) controlCall(method string, out any) {
	e.t.Helper()
	if err := e.control().Call(context.Background(), method, nil, out); err != nil {
		e.t.Fatal(err)
	}
}

// waitLink waits for the daemon to see the extension link up or down.
func (e *env) waitLink(up bool) {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for e.status().ExtensionConnected != up {
		if time.Now().After(deadline) {
			e.t.Fatalf("extension link never became up=%v", up)
		}
		time.Sleep(50 * time.Millisecond) // status offers no event: polled, bounded
	}
}
