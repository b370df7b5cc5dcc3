package server

import (
	"context"
	"log/slog"
	"slices"
	"sync"
)

// callLogger is the logger of one hook call: base with the call's attributes.
//
// NOTE: most calls log nothing (a steady sync decides that nothing changes), and slog's With
// formats its attributes at once, which cost about as much as a steady call's decision. The
// attributes are added only when the call logs a line (lazyAttrs); the lines read the same.
func callLogger(base *slog.Logger, attrs ...slog.Attr) *slog.Logger {
	return slog.New(&lazyAttrs{next: base.Handler(), attrs: attrs})
}

// lazyAttrs is next with attrs, made when the first record is handled.
type lazyAttrs struct {
	next  slog.Handler
	attrs []slog.Attr
	once  sync.Once
	with  slog.Handler
}

func (h *lazyAttrs) handler() slog.Handler {
	h.once.Do(func() { h.with = h.next.WithAttrs(h.attrs) })
	return h.with
}

func (h *lazyAttrs) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

func (h *lazyAttrs) Handle(ctx context.Context, r slog.Record) error {
	return h.handler().Handle(ctx, r)
}

func (h *lazyAttrs) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	return &lazyAttrs{next: h.next, attrs: append(slices.Clip(h.attrs), attrs...)}
}

func (h *lazyAttrs) WithGroup(name string) slog.Handler { return h.handler().WithGroup(name) }
