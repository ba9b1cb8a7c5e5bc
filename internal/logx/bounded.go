// Package logx keeps the daemon's log bounded: every logged value is cut to
// a fixed size (a peer chooses many of them: method names, ids, labels,
// remote addresses, error texts) and log files rotate by size.
package logx

import (
	"context"
	"fmt"
	"log/slog"
	"unicode/utf8"
)

// MaxField is the most bytes of one logged value; longer ones are cut and
// say how long they were. SECURITY I-50.
const MaxField = 256

// Field cuts s to MaxField bytes on a character boundary.
func Field(s string) string {
	if len(s) <= MaxField {
		return s
	}
	cut := MaxField
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s…(%d bytes)", s[:cut], len(s))
}

// Bounded wraps h so that the message and every attribute value of every
// record are cut to MaxField, whoever logs them: a peer cannot grow a log
// line by sending a long value, even through a call site that forgot to.
func Bounded(h slog.Handler) slog.Handler {
	if _, ok := h.(*bounded); ok {
		return h
	}
	return &bounded{h: h}
}

type bounded struct{ h slog.Handler }

func (b *bounded) Enabled(ctx context.Context, l slog.Level) bool { return b.h.Enabled(ctx, l) }

func (b *bounded) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, Field(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(clip(a))
		return true
	})
	return b.h.Handle(ctx, out)
}

func (b *bounded) WithAttrs(as []slog.Attr) slog.Handler {
	cl := make([]slog.Attr, len(as))
	for i, a := range as {
		cl[i] = clip(a)
	}
	return &bounded{h: b.h.WithAttrs(cl)}
}

func (b *bounded) WithGroup(name string) slog.Handler {
	return &bounded{h: b.h.WithGroup(Field(name))}
}

func clip(a slog.Attr) slog.Attr {
	a.Key = Field(a.Key)
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		a.Value = slog.StringValue(Field(v.String()))
	case slog.KindGroup:
		g := v.Group()
		cl := make([]slog.Attr, len(g))
		for i, x := range g {
			cl[i] = clip(x)
		}
		a.Value = slog.GroupValue(cl...)
	case slog.KindAny:
		// Errors, byte slices, structs: logged as their text, cut.
		a.Value = slog.StringValue(Field(fmt.Sprint(v.Any())))
	default:
		a.Value = v
	}
	return a
}
