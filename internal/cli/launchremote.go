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
	// The start-up policy, as for a local launch (launchpolicy.go): built and
	// checked from the flags before anything starts; nil and false for none.
	policy     *launchPolicy
	permissive bool
	policyFlag string // the flag a refusal names
}

// gatewayOTP is POST /v1/otp's answer: the secret, and the gateway's public
// addresses when it has a team.publicURL.
type gatewayOTP struct {
	Secret    string    `json:"secret"`
	ExpiresAt time.Time `json:"expiresAt"`
	Gateway   *struct {
		URL string `json:"url"`
		MCP string `json:"mcp"`
	} `json:"gateway"`
}

// launchRemote starts a managed browser whose extension pairs with a team
// gateway as the token's user, through a one-time secret from POST /v1/otp.
// No local daemon is involved. The policy reaches the extension the way a
// local launch's does: in the connect page's fragment (launchParam), applied
// by the extension only once the pairing with this secret has connected and
// only in a profile torii created (SECURITY I-47); the gateway never sees it.
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
	// The default profile is torii's own and is marked as such; one named
	// with --profile is marked only when torii creates it here, so a policy
	// never lands in a profile torii did not make.
	frag, err := launchParam(prof, o.profile == "", o.policy, o.permissive, o.policyFlag)
	if err != nil {
		return err
	}
	if frag == nil {
		frag = url.Values{}
	}
	if size != nil {
		frag.Set("viewport", size.Param())
	}
	var asks *askReport
	if o.headless {
		// SECURITY I-80, as for a local launch.
		frag.Set("headless", "1")
		asks = headlessAsks(o.policy, o.permissive)
	}
	extDir := extensionDir(p)
	if _, err := syncExtension(extDir); err != nil {
		return fmt.Errorf("write the extension to %s: %w", extDir, err)
	}
	if o.permissive {
		fmt.Fprintf(s.Err, "torii: permissive policy for this profile: every site is allowed and act mode is on (turn it off in the extension's options)\n")
	}
	if o.policy != nil {
		fmt.Fprintf(s.Err, "torii: launch policy for this profile: %s (applied once the extension pairs)\n", o.policy.summary())
	}
	if asks != nil {
		fmt.Fprintf(s.Err, "torii: %s\n", asks.line())
	}
	// Asked for last, so the secret's short life is not spent on the steps above.
	var otp gatewayOTP
	if err := c.call(ctx, "POST", "/v1/otp", nil, &otp); err != nil {
		return err
	}
	// Nothing more is asked of the gateway: a --foreground launch keeps no
	// idle connection to it for as long as the browser runs.
	c.http.CloseIdleConnections()
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
	printRemoteLaunched(s, c.base, wsURL, otp)
	if !o.foreground {
		return nil
	}
	return waitForeground(proc)
}

// printRemoteLaunched tells the person what happens next and how to point
// an agent at the browser: at the gateway's public address when it has one
// (team.publicURL), else at the address launch was given.
func printRemoteLaunched(s Stdio, base *url.URL, wsURL string, otp gatewayOTP) {
	server, mcpURL := base.String(), base.String()+"/mcp"
	if g := otp.Gateway; g != nil && g.URL != "" && g.MCP != "" {
		server, mcpURL = g.URL, g.MCP
	}
	fmt.Fprintf(s.Out, "The browser pairs with the gateway at %s as your user with a one-time secret (valid until %s).\n", wsURL, otp.ExpiresAt.Local().Format(time.Kitchen))
	if server != base.String() {
		fmt.Fprintf(s.Out, "(The gateway's public address is %s; the browser keeps the address launch was given.)\n", server)
	}
	fmt.Fprintf(s.Out, "Check with: torii admin device list, or GET /v1/devices with your token.\nPoint an agent at it: %s mcp --server %s --token …\n  or over HTTP: %s with the header \"Authorization: Bearer <your token>\"\n",
		selfCommand(), server, mcpURL)
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
