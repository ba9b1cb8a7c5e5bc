package cli

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/torii-browser/torii/extension"
	"github.com/torii-browser/torii/internal/launcher"
)

// remoteLaunch is what `torii launch --server` needs from launch's flags.
type remoteLaunch struct {
	browser, profile, windowSize string
	headless, foreground         bool
}

// launchRemote starts a managed browser whose extension pairs with a team
// gateway as the token's user, through a one-time secret from POST /v1/otp.
// No local daemon is involved.
func launchRemote(ctx context.Context, s Stdio, remote *remoteFlags, o remoteLaunch) error {
	c, err := remote.client()
	if err != nil {
		return err
	}
	wsURL, err := gatewayACP(c.base)
	if err != nil {
		return err
	}
	p, err := paths()
	if err != nil {
		return err
	}
	browser, err := launcher.Find(o.browser)
	if err != nil {
		return err
	}
	prof := o.profile
	if prof == "" {
		// One profile per gateway: its extension keeps that gateway's pairing,
		// apart from the local daemon's profile.
		prof = filepath.Join(p.StateDir, "profile-"+safeHost(c.base.Host))
	}
	if prof, err = filepath.Abs(prof); err != nil {
		return err
	}
	if pid := launcher.RunningPID(prof); pid != 0 {
		return fmt.Errorf("a browser (pid %d) already runs on profile %s\n  fix: use it as it is, or stop it first", pid, prof)
	}
	if !extension.Built() {
		return extension.ErrNotBuilt
	}
	if !o.headless && !hasDisplay() {
		o.headless = true
		fmt.Fprintf(s.Err, "torii: no $DISPLAY or $WAYLAND_DISPLAY: starting the browser headless\n")
	}
	size, err := launchWindowSize(o.windowSize, o.headless)
	if err != nil {
		return err
	}
	if _, err := launchParam(prof, false, nil, false, ""); err != nil {
		return err
	}
	if err := launcher.MarkProfile(prof); err != nil {
		return err
	}
	frag := url.Values{}
	if size != nil {
		frag.Set("viewport", size.Param())
	}
	if o.headless {
		frag.Set("headless", "1")
	}
	extDir := extensionDir(p)
	if _, err := syncExtension(extDir); err != nil {
		return fmt.Errorf("write the extension to %s: %w", extDir, err)
	}
	// Asked for last, so the secret's short life is not spent on the steps above.
	var otp struct {
		Secret    string    `json:"secret"`
		ExpiresAt time.Time `json:"expiresAt"`
	}
	if err := c.call(ctx, "POST", "/v1/otp", nil, &otp); err != nil {
		return err
	}
	startURL, err := connectURL(otpResult{OTP: otp.Secret, URL: wsURL}, "", true, frag)
	if err != nil {
		return err
	}
	proc, err := launcher.Start(launcher.Options{
		Browser:      browser,
		Profile:      prof,
		ExtensionDir: extDir,
		StartURL:     startURL,
		Headless:     o.headless,
		Root:         os.Geteuid() == 0,
		LogFile:      filepath.Join(p.StateDir, "browser-team.log"),
		WindowSize:   size,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Err, "torii: started %s (pid %d, profile %s)\n", browser, proc.PID(), prof)
	fmt.Fprintf(s.Out, "The browser pairs with the gateway %s as your user with a one-time secret (valid until %s).\nCheck with: torii admin device list, or ask an admin.\nPoint an agent at it: %s mcp --server %s --token …\n",
		c.base.Host, otp.ExpiresAt.Local().Format(time.Kitchen), selfCommand(), c.base)
	if !o.foreground {
		return nil
	}
	return waitForeground(proc)
}

// gatewayACP is the gateway's browser endpoint: wss:// for https://, ws://
// only for a loopback http:// gateway (checkServerURL refused the rest).
func gatewayACP(base *url.URL) (string, error) {
	u := *base
	switch u.Scheme {
	case "https":
		u.Scheme = "wss"
	case "http":
		u.Scheme = "ws"
	default:
		return "", fmt.Errorf("gateway URL %s is neither https:// nor http://", base)
	}
	u.Path = strings.TrimRight(u.Path, "/") + "/acp"
	return u.String(), nil
}

// safeHost makes host:port a file name.
func safeHost(h string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-':
			return r
		}
		return '_'
	}, h)
}
