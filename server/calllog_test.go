package server

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCallLoggerWritesWhatWithWrites: a call's logger adds its attributes only when it logs, and
// its lines read as those of slog's With, also through further With and WithGroup.
func TestCallLoggerWritesWhatWithWrites(t *testing.T) {
	attrs := []any{slog.String("hook", "sync"), slog.String("rds", "ns/a"), slog.Int64("generation", 3)}
	var want, got bytes.Buffer
	opts := &slog.HandlerOptions{Level: slog.LevelInfo, ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey && len(groups) == 0 {
			return slog.Attr{}
		}
		return a
	}}
	eager := slog.New(slog.NewJSONHandler(&want, opts)).With(attrs...)
	lazy := callLogger(slog.New(slog.NewJSONHandler(&got, opts)), slog.String("hook", "sync"), slog.String("rds", "ns/a"), slog.Int64("generation", 3))
	for _, l := range []*slog.Logger{eager, lazy} {
		l.Debug("not written", "x", 1)
		l.Info("answered", "duration", 5)
		l.With("instance", "i-1").Warn("cloud call failed", "op", "GetInstance")
		l.WithGroup("g").With("k", "v").Error("grouped", "n", 2)
		l.Info("again")
	}
	assert.Equal(t, want.String(), got.String())
	assert.NotContains(t, got.String(), "not written")
}
