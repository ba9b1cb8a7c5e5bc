package launcher

// Options describe one managed browser.
type Options struct {
	Browser      string // executable, from Find
	Profile      string // --user-data-dir; dedicated so the person's own profile is never touched
	ExtensionDir string // unpacked extension for --load-extension
	StartURL     string // first page; carries the one-time secret (SECURITY I-5: command line only)
	Headless     bool
	Root         bool        // running as uid 0: Chromium refuses to start without --no-sandbox
	LogFile      string      // browser stdout/stderr are appended here; "" discards them
	WindowSize   *WindowSize // nil: the browser's own default (a person's window)
	ExtraArgs    []string
}

// deadEnd is a loopback address no test or service uses: the services below that cannot be
// switched off are pointed at it, so they fail at once on this machine instead of asking Google.
const deadEnd = "http://127.0.0.9:9"

// baseFlags keep a managed browser quiet and offline apart from what it is asked to load: no
// first-run UI, no update/sync/background traffic, and no QUIC or GPU, which fail noisily in
// containers and closed networks.
//
// SECURITY I-60: a managed browser asks no Google service anything at start. Measured with
// Chromium 156 behind a recording proxy, with only the flags above it still sent: the
// network-time query (clients2.google.com/time), optimisation-guide hints
// (optimizationguide-pa.googleapis.com), an on-demand component install of the on-device model
// manifest (update.googleapis.com, which --disable-component-update does not stop) and Gaia's
// ListAccounts with retries (accounts.google.com, which the signin.allowed pref does not stop).
// The features are switched off; the component updater and Gaia, which have no off switch, get
// a dead loopback address (Chrome sign-in is off in this profile anyway: --disable-sync).
var baseFlags = []string{
	"--no-first-run",
	"--no-default-browser-check",
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
	"--disable-quic",
	"--disable-gpu",
	"--disable-domain-reliability",
	"--disable-breakpad",
	"--disable-client-side-phishing-detection",
	"--metrics-recording-only",
	"--no-pings",
	"--disable-features=NetworkTimeServiceQuerying,OptimizationHints,OptimizationHintsFetching,OptimizationGuideModelDownloading,OptimizationTargetPrediction,MediaRouter,DialMediaRouteProvider",
	"--component-updater=url-source=" + deadEnd + "/",
	"--gaia-url=" + deadEnd,
}

// Args builds the browser's argument list (without argv[0]).
func Args(o Options) []string {
	a := []string{"--user-data-dir=" + o.Profile, "--load-extension=" + o.ExtensionDir}
	a = append(a, baseFlags...)
	if o.Root {
		a = append(a, "--no-sandbox")
	}
	if o.Headless {
		// No one sees a headless browser's "started debugging this browser" bar, but pages do: it
		// took 56 px of every window's height while the extension's debugger was attached.
		a = append(a, "--headless=new", "--silent-debugger-extension-api")
	}
	if w := o.WindowSize; w != nil {
		a = append(a, "--window-size="+w.String())
		if o.Headless {
			// Chromium's headless screen is 800×600 and it keeps new windows within their
			// screen; a screen of the size asked lets the extension fit agent windows to it.
			a = append(a, "--screen-info={"+w.Param()+"}")
		}
	}
	a = append(a, o.ExtraArgs...)
	if o.StartURL != "" {
		a = append(a, o.StartURL)
	}
	return a
}
