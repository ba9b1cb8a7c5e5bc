package launcher

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// WindowSize is the size of the agent tabs' viewport in CSS pixels (`torii launch --window-size
// W,H`). The browser gets --window-size (its first window), a headless one also a screen of that
// size (--screen-info: Chromium's headless screen is 800×600 and keeps windows within it), and
// the extension makes each agent window's page area exactly W×H, toolbars and infobars aside. In
// a browser with a window, Chrome's "started debugging this browser" bar takes its height from the
// page while the extension's debugger is attached (headless, it is silenced: args.go).
type WindowSize struct {
	Width, Height int
}

// DefaultHeadlessSize is a headless browser's viewport unless --window-size says otherwise: the
// common desktop size (Chromium's own headless default left pages 780×437).
var DefaultHeadlessSize = WindowSize{Width: 1280, Height: 720}

// The bounds of a window size: below 200 no page lays out, above 8K UHD is no screen.
const (
	MinWindowWidth  = 200
	MinWindowHeight = 200
	MaxWindowWidth  = 7680
	MaxWindowHeight = 4320
)

// WindowSizeError is a --window-size value that cannot be used; Hint says what to give instead.
type WindowSizeError struct {
	Value string
	Msg   string
	Hint  string
}

func (e *WindowSizeError) Error() string {
	return fmt.Sprintf("--window-size %q: %s\n  fix: %s", e.Value, e.Msg, e.Hint)
}

// String is the value as Chromium's --window-size takes it.
func (w WindowSize) String() string { return fmt.Sprintf("%d,%d", w.Width, w.Height) }

// Param is the value as the extension's connect page takes it (WxH).
func (w WindowSize) Param() string { return fmt.Sprintf("%dx%d", w.Width, w.Height) }

var (
	sizeDigits = regexp.MustCompile(`^[0-9]{1,6}$`)
	// Other ways people write a size: 1280x720, 1280X720, 1280×720, 1280*720, "1280 720", 1280:720.
	sizeOther = regexp.MustCompile(`^\s*([0-9]{1,6})\s*(?:[xX×*:;/]|\s)\s*([0-9]{1,6})\s*$`)
)

// ParseWindowSize reads "W,H" (whole CSS pixels, each within its bounds).
func ParseWindowSize(v string) (WindowSize, error) {
	example := DefaultHeadlessSize.String()
	bad := func(msg, hint string) (WindowSize, error) {
		return WindowSize{}, &WindowSizeError{Value: v, Msg: msg, Hint: hint}
	}
	if strings.TrimSpace(v) == "" {
		return bad("empty", "give WIDTH,HEIGHT in pixels, e.g. --window-size "+example)
	}
	parts := strings.Split(v, ",")
	if len(parts) != 2 {
		if m := sizeOther.FindStringSubmatch(v); m != nil {
			return bad("not WIDTH,HEIGHT", fmt.Sprintf("did you mean --window-size %s,%s? (a comma between width and height, as Chromium takes it)", m[1], m[2]))
		}
		return bad("not WIDTH,HEIGHT", "give two whole numbers separated by a comma, e.g. --window-size "+example)
	}
	w, h := strings.TrimSpace(parts[0]), strings.TrimSpace(parts[1])
	for _, p := range []struct{ name, v string }{{"width", w}, {"height", h}} {
		if !sizeDigits.MatchString(p.v) {
			return bad(fmt.Sprintf("the %s %q is not a whole number of pixels", p.name, p.v), "give two whole numbers separated by a comma, e.g. --window-size "+example)
		}
	}
	width, _ := strconv.Atoi(w)
	height, _ := strconv.Atoi(h)
	if width < MinWindowWidth || width > MaxWindowWidth {
		return bad(fmt.Sprintf("the width %d is outside %d..%d", width, MinWindowWidth, MaxWindowWidth), fmt.Sprintf("give a width from %d to %d, e.g. --window-size %s", MinWindowWidth, MaxWindowWidth, example))
	}
	if height < MinWindowHeight || height > MaxWindowHeight {
		return bad(fmt.Sprintf("the height %d is outside %d..%d", height, MinWindowHeight, MaxWindowHeight), fmt.Sprintf("give a height from %d to %d, e.g. --window-size %s", MinWindowHeight, MaxWindowHeight, example))
	}
	return WindowSize{Width: width, Height: height}, nil
}
