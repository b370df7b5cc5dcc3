// Package docs checks the project's Markdown: every relative link in README.md and docs/*.md
// points to a file that exists (or to one of the few pages other work adds, listed below), and
// every #anchor to a heading of its target.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// root is the repository root, seen from this package.
const root = "../.."

// pending are pages that README.md links to and that parallel work adds. Keep this list short:
// remove a page from it once the page exists (TestPendingPagesAreStillMissing says when).
var pending = map[string]bool{
	"docs/tenancy.md": true,
}

var (
	fence      = regexp.MustCompile("(?ms)^\\s*```.*?^\\s*```")
	inlineCode = regexp.MustCompile("`[^`\n]*`")
	link       = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	// htmlComment hides the sources comment in README.md, whose URLs are not links.
	htmlComment = regexp.MustCompile(`(?s)<!--.*?-->`)
)

// markdownFiles are the files whose links are checked, relative to the repository root.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, pages, "docs/*.md")
	for _, p := range pages {
		rel, err := filepath.Rel(root, p)
		require.NoError(t, err)
		files = append(files, filepath.ToSlash(rel))
	}
	return files
}

// links returns the link targets of a Markdown text, outside code and comments.
func links(text string) []string {
	text = htmlComment.ReplaceAllString(text, "")
	text = fence.ReplaceAllString(text, "")
	text = inlineCode.ReplaceAllString(text, "")
	var out []string
	for _, m := range link.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// slug is GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors are the heading anchors of a Markdown text.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	for _, line := range strings.Split(fence.ReplaceAllString(text, ""), "\n") {
		if strings.HasPrefix(line, "#") {
			out[slug(strings.TrimLeft(line, "#"))] = true
		}
	}
	return out
}

func TestRelativeLinksResolve(t *testing.T) {
	for _, file := range markdownFiles(t) {
		raw, err := os.ReadFile(filepath.Join(root, file))
		require.NoError(t, err)
		for _, target := range links(string(raw)) {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			resolved := file
			if path != "" {
				resolved = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(file), path)))
			}
			if pending[resolved] {
				continue
			}
			data, err := os.ReadFile(filepath.Join(root, resolved))
			if !assert.NoError(t, err, "%s links to %s, which does not exist", file, target) {
				continue
			}
			if anchor != "" && strings.HasSuffix(resolved, ".md") {
				assert.True(t, anchors(string(data))[anchor], "%s links to %s: no heading #%s in %s", file, target, anchor, resolved)
			}
		}
	}
}

// TestPendingPagesAreStillMissing keeps the allowed list honest: a page that exists is checked
// like any other.
func TestPendingPagesAreStillMissing(t *testing.T) {
	for page := range pending {
		_, err := os.Stat(filepath.Join(root, page))
		assert.True(t, os.IsNotExist(err), "%s exists now: remove it from the pending list", page)
	}
}

// TestReadmeLinksEveryPage: every page under docs/ is reachable from README.md.
func TestReadmeLinksEveryPage(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	linked := map[string]bool{}
	for _, target := range links(string(raw)) {
		path, _, _ := strings.Cut(target, "#")
		linked[filepath.ToSlash(filepath.Clean(path))] = true
	}
	for _, file := range markdownFiles(t)[1:] {
		assert.True(t, linked[file], "README.md does not link %s", file)
	}
	for page := range pending {
		assert.True(t, linked[page], "README.md does not link %s", page)
	}
}

func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		" Deploy to a cluster":          "deploy-to-a-cluster",
		" Standalone: `cmd/otcsim`":     "standalone-cmdotcsim",
		" Where each account's secrets": "where-each-accounts-secrets",
		" Day-2 operations":             "day-2-operations",
	} {
		assert.Equal(t, want, slug(heading), heading)
	}
}

// TestMakeTargetsExist: every `make TARGET` the documentation shows is a target of the Makefile.
func TestMakeTargetsExist(t *testing.T) {
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	require.NoError(t, err)
	targets := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^([a-zA-Z0-9_-]+):`).FindAllStringSubmatch(string(makefile), -1) {
		targets[m[1]] = true
	}
	invocation := regexp.MustCompile("(?m)(?:`|^\\s*)make ([a-z][a-z0-9_-]*)") // in code, not prose
	for _, file := range markdownFiles(t) {
		raw, err := os.ReadFile(filepath.Join(root, file))
		require.NoError(t, err)
		for _, m := range invocation.FindAllStringSubmatch(string(raw), -1) {
			assert.True(t, targets[m[1]], "%s shows `make %s`, which the Makefile does not have", file, m[1])
		}
	}
}

// TestKubectlSamplesComeFromARealRun: the `kubectl get rds` tables the pages show are the golden
// files test/e2e renders from the CRD's printer columns and a status the hooks answered.
func TestKubectlSamplesComeFromARealRun(t *testing.T) {
	for _, tc := range []struct {
		page, golden, indent string
	}{
		{"README.md", "get-rds.txt", "   "}, // inside a numbered list
		{"docs/day2.md", "get-rds-wide-resize.txt", ""},
	} {
		table, err := os.ReadFile(filepath.Join(root, "test", "testdata", "kubectl", tc.golden))
		require.NoError(t, err)
		page, err := os.ReadFile(filepath.Join(root, tc.page))
		require.NoError(t, err)
		var block strings.Builder
		block.WriteString(tc.indent + "```\n")
		for _, line := range strings.Split(strings.TrimSuffix(string(table), "\n"), "\n") {
			block.WriteString(tc.indent + line + "\n")
		}
		block.WriteString(tc.indent + "```\n")
		assert.Contains(t, string(page), block.String(), "%s quotes test/testdata/kubectl/%s", tc.page, tc.golden)
	}
}

// TestReferenceListsThePrinterColumns: docs/reference.md lists every column of the CRD with its path.
func TestReferenceListsThePrinterColumns(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(root, "manifests", "crd.yaml"))
	require.NoError(t, err)
	var crd apiextensionsv1.CustomResourceDefinition
	require.NoError(t, yaml.Unmarshal(raw, &crd))
	page, err := os.ReadFile(filepath.Join(root, "docs", "reference.md"))
	require.NoError(t, err)
	columns := crd.Spec.Versions[0].AdditionalPrinterColumns
	require.NotEmpty(t, columns)
	for _, col := range columns {
		row := "| `" + strings.ToUpper(col.Name) + "` | `" + col.JSONPath + "` |"
		assert.Contains(t, string(page), row, "docs/reference.md lists the column %s", col.Name)
	}
}
