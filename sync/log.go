package reconcile

import (
	"context"
	"log/slog"
)

type loggerKey struct{}

// WithLogger returns ctx carrying l, keyed by the Rds object the call is for.
func WithLogger(ctx context.Context, l *slog.Logger) context.Context {
	return context.WithValue(ctx, loggerKey{}, l)
}

// LoggerFrom returns the call's logger, or slog's default.
func LoggerFrom(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(loggerKey{}).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}
