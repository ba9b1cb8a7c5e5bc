package launcher

// Options describe one managed browser.
type Options struct {
	Browser      string // executable, from Find
	Profile      string // --user-data-dir; dedicated so the person's own profile is never touched
	ExtensionDir string // unpacked extension for --load-extension
	StartURL     string // first page; carries the one-time secret (SECURITY I-5: command line only)
	Headless     bool
	Root         bool   // running as uid 0: Chromium refuses to start without --no-sandbox
	LogFile      string // browser stdout/stderr are appended here; "" discards them
	ExtraArgs    []string
}

// baseFlags keep a managed browser quiet and offline apart from what it is
// asked to load: no first-run UI, no update/sync/background traffic, and no
// QUIC or GPU, which fail noisily in containers and closed networks.
var baseFlags = []string{
	"--no-first-run",
	"--no-default-browser-check",
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
	"--disable-quic",
	"--disable-gpu",
}

// Args builds the browser's argument list (without argv[0]).
func Args(o Options) []string {
	a := []string{"--user-data-dir=" + o.Profile, "--load-extension=" + o.ExtensionDir}
	a = append(a, baseFlags...)
	if o.Root {
		a = append(a, "--no-sandbox")
	}
	if o.Headless {
		a = append(a, "--headless=new")
	}
	a = append(a, o.ExtraArgs...)
	if o.StartURL != "" {
		a = append(a, o.StartURL)
	}
	return a
}
