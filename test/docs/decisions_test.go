package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDecisionTableNamesRealCode keeps docs/architecture.md's table "Where each decision is" true:
// every pure function it names is declared in sync/ (or the package its row names), and every
// table test it names is a test function there.
func TestDecisionTableNamesRealCode(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	require.NoError(t, err)
	_, table, ok := strings.Cut(string(doc), "### Where each decision is")
	require.True(t, ok, "docs/architecture.md has the table")
	table, _, _ = strings.Cut(table, "\n\n## ")

	var code strings.Builder
	for _, dir := range []string{"sync", "sync/dbusers"} {
		files, err := filepath.Glob(filepath.Join(root, dir, "*.go"))
		require.NoError(t, err)
		for _, f := range files {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			code.Write(b)
		}
	}
	name := regexp.MustCompile("`([A-Za-z][A-Za-z0-9]*)`")
	rows := 0
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") || strings.TrimSpace(cells[1]) == "decision" {
			continue
		}
		rows++
		for _, m := range name.FindAllStringSubmatch(cells[2], -1) {
			decl := regexp.MustCompile(`func (\([^)]*\) )?` + m[1] + `[\[(]`)
			assert.True(t, decl.MatchString(code.String()), "function %s named in the table is not declared", m[1])
		}
		for _, m := range name.FindAllStringSubmatch(cells[3], -1) {
			if strings.HasPrefix(m[1], "Test") {
				assert.True(t, strings.Contains(code.String(), "func "+m[1]+"(t *testing.T)"), "test %s named in the table does not exist", m[1])
			}
		}
		// A file a cell names holds the functions (or tests) named before it in the cell.
		for _, cell := range cells[2:4] {
			var names []string
			for _, m := range token.FindAllStringSubmatch(cell, -1) {
				if !strings.HasSuffix(m[1], ".go") {
					names = append(names, m[1])
					continue
				}
				b, err := os.ReadFile(filepath.Join(root, m[1]))
				if !assert.NoError(t, err, "file %s named in the table", m[1]) {
					continue
				}
				for _, n := range names {
					decl := regexp.MustCompile(`func (\([^)]*\) )?` + n + `[\[(]`)
					assert.True(t, decl.Match(b), "%s is not declared in %s, as the table says", n, m[1])
				}
				names = nil
			}
		}
	}
	assert.GreaterOrEqual(t, rows, 15, "the table's rows were read")
}

// token is a name or a path in backquotes.
var token = regexp.MustCompile("`([A-Za-z][A-Za-z0-9_./]*)`")

// TestLayoutTableNamesEveryFile keeps docs/architecture.md's table "Where each part of a call is"
// true: it names every file of sync/ that is not a test, and only files that exist.
func TestLayoutTableNamesEveryFile(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	require.NoError(t, err)
	_, table, ok := strings.Cut(string(doc), "### Where each part of a call is")
	require.True(t, ok, "docs/architecture.md has the table")
	table, _, _ = strings.Cut(table, "\n\n### ")
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`(sync/[a-z0-9_]+\\.go)`").FindAllStringSubmatch(table, -1) {
		named[m[1]] = true
		_, err := os.Stat(filepath.Join(root, m[1]))
		assert.NoError(t, err, "the table names %s", m[1])
	}
	files, err := filepath.Glob(filepath.Join(root, "sync", "*.go"))
	require.NoError(t, err)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		assert.True(t, named["sync/"+filepath.Base(f)], "sync/%s is not in the table", filepath.Base(f))
	}
}

// TestCallPictureNamesRealCode keeps docs/architecture.md's section "How a call runs" true: every
// name in backquotes or in its picture that is not a path is declared in sync/ (a function, a
// method, a type or a constant), and its lists of reads and changes are exactly observe's read
// kinds and act's action kinds.
func TestCallPictureNamesRealCode(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	require.NoError(t, err)
	_, sec, ok := strings.Cut(string(doc), "## How a call runs")
	require.True(t, ok, "docs/architecture.md has the section")
	sec, _, _ = strings.Cut(sec, "\n## ")

	files, err := filepath.Glob(filepath.Join(root, "sync", "*.go"))
	require.NoError(t, err)
	var code strings.Builder
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		code.Write(b)
	}
	declared := func(n string) bool {
		return regexp.MustCompile(`(func (\([^)]*\) )?|type |\t)` + regexp.QuoteMeta(n) + `[\[( ]`).MatchString(code.String())
	}
	// The picture's names: identifiers followed by ( or :, and the step types.
	_, picture, _ := strings.Cut(sec, "```text")
	picture, _, _ = strings.Cut(picture, "```")
	names := map[string]bool{}
	for _, m := range regexp.MustCompile(`\b([a-zA-Z][A-Za-z0-9]*(?:\.[a-z][A-Za-z0-9]*)?)\(`).FindAllStringSubmatch(picture, -1) {
		names[m[1]] = true
	}
	for _, m := range regexp.MustCompile(`\b([a-z][A-Za-z0-9]*Step)\b`).FindAllStringSubmatch(picture, -1) {
		names[m[1]] = true
	}
	for _, m := range token.FindAllStringSubmatch(sec, -1) {
		if !strings.Contains(m[1], "/") {
			names[m[1]] = true
		}
	}
	require.GreaterOrEqual(t, len(names), 20, "the section's names were read")
	for n := range names {
		_, method, isMethod := strings.Cut(n, ".")
		if isMethod {
			n = method
		}
		assert.True(t, declared(n), "%s, named in \"How a call runs\", is not declared in sync/", n)
	}

	// The lists of reads and changes are the switches' kinds, all of them.
	for _, tc := range []struct{ lead, typ string }{{"`observe` makes the reads:", "readKind"}, {"`act` makes the changes:", "actionKind"}} {
		_, list, ok := strings.Cut(sec, tc.lead)
		require.True(t, ok, "the section lists %s", tc.typ)
		list, _, _ = strings.Cut(list, "\n\n")
		listed := map[string]bool{}
		for _, m := range token.FindAllStringSubmatch(list, -1) {
			listed[m[1]] = true
		}
		kinds := map[string]bool{}
		for _, m := range regexp.MustCompile(`(?m)^\t([a-zA-Z]+)\s+`+tc.typ+` = `).FindAllStringSubmatch(code.String(), -1) {
			kinds[m[1]] = true
		}
		require.NotEmpty(t, kinds, "the %s constants were read", tc.typ)
		assert.Equal(t, kinds, listed, "the section lists every %s, and only those", tc.typ)
	}
}
