package broker

import (
	"strings"
	"unicode"
)

// FilesFolder is the session's folder in the download sandbox
// (internal/files): when it started, its label and a piece of its ID, so
// the person can tell folders apart and two sessions never share one
// (SECURITY I-66). The extension is told it in every call's _meta, to save
// the session's allowed downloads there.
func (s *Session) FilesFolder() string {
	label := strings.Map(func(r rune) rune {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_') {
			return r
		}
		return '-'
	}, s.label)
	label = strings.Trim(label, "-")
	if len(label) > 32 {
		label = label[:32]
	}
	if label == "" {
		label = string(s.kind)
	}
	id := strings.TrimPrefix(s.id, "s-")
	if len(id) > 8 {
		id = id[:8]
	}
	return s.started.UTC().Format("20060102-150405") + "-" + label + "-" + id
}

// FileSession is the live session id whose calls go to the browser
// deviceID, for a file that browser hands over; nil for an ended session,
// an unknown one, or another browser's, so a browser can file bytes only
// for sessions acting in it.
func (b *Broker) FileSession(id, deviceID string) *Session {
	b.smu.Lock()
	defer b.smu.Unlock()
	s := b.sessions[id]
	if s == nil || !s.ended.IsZero() || s.ctx.Err() != nil || deviceID == "" || s.browser != deviceID {
		return nil
	}
	return s
}

// Session is the live session with this id (nil when ended or unknown).
func (b *Broker) Session(id string) *Session {
	b.smu.Lock()
	defer b.smu.Unlock()
	if s := b.sessions[id]; s != nil && s.ended.IsZero() {
		return s
	}
	return nil
}
