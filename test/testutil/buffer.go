// Package testutil holds small helpers that tests in several packages share.
package testutil

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer that a program under test may write to while the test reads it.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write implements io.Writer.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
