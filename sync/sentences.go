package reconcile

import (
	"fmt"
	"strings"
)

// problems are the sentences a check collects, each saying one thing wrong with the spec.
type problems []string

// addf adds a sentence.
func (p *problems) addf(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

// joinSentences is the sentences as one message.
func joinSentences(s []string) string { return strings.Join(s, " ") }
