// Package image proves the container image: the Dockerfile, the Makefile, the Deployment and the
// image test (test/image.sh) agree, the binaries are static and answer --version and --help, and
// the image runs with podman as the Deployment runs it.
package image

import (
	"bufio"
	"bytes"
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"
)

// root is the repository, seen from this package.
const root = "../.."

// versionVar is the variable the linker sets to the version (internal/version).
const versionVar = "github.com/mcsps/rds-lambda-controller/internal/version.Version"

// binaries are the programs of cmd/, each at /<name> in the image.
var binaries = []string{"otcsim", "rds-hooks", "rds-hooks-secrets", "rds-logs"}

// instruction is one Dockerfile instruction: its keyword and the rest of the line.
type instruction struct{ cmd, args string }

// stages splits a Dockerfile into its stages' instructions, joining continued lines.
func stages(t *testing.T, path string) [][]instruction {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var out [][]instruction
	var line string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		text := strings.TrimSpace(sc.Text())
		if line == "" && (text == "" || strings.HasPrefix(text, "#")) {
			continue
		}
		if cont, ok := strings.CutSuffix(text, `\`); ok {
			line += strings.TrimSpace(cont) + " "
			continue
		}
		line += text
		cmd, args, _ := strings.Cut(line, " ")
		line = ""
		if strings.EqualFold(cmd, "FROM") {
			out = append(out, nil)
		}
		require.NotEmpty(t, out, "%s: %s before FROM", path, cmd)
		out[len(out)-1] = append(out[len(out)-1], instruction{strings.ToUpper(cmd), strings.TrimSpace(args)})
	}
	require.NoError(t, sc.Err())
	return out
}

// find returns the arguments of the stage's instructions named cmd.
func find(stage []instruction, cmd string) []string {
	var out []string
	for _, in := range stage {
		if in.cmd == cmd {
			out = append(out, in.args)
		}
	}
	return out
}

// command runs name args in the repository and returns its stdout; an exit other than 0 fails.
func command(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%s: %s", cmd, stderr.String())
	return string(out)
}

// makeEnv is the environment without the caller's make variables, so that the Makefile's
// defaults are seen.
func makeEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); !slices.Contains([]string{"VERSION", "IMAGE", "IMAGE_REPO", "BIN", "MAKEFLAGS"}, name) {
			env = append(env, kv)
		}
	}
	return env
}

// TestDockerfileAgreesWithTheDeployment: the image the Dockerfile builds is what the Deployment
// and the Makefile expect: static binaries of every program at /<name>, stamped with the version
// as the Makefile stamps them, run as 65532 with the Deployment's arguments on its port.
func TestDockerfileAgreesWithTheDeployment(t *testing.T) {
	st := stages(t, filepath.Join(root, "Dockerfile"))
	require.Len(t, st, 2, "a build stage and the final stage")
	build, final := st[0], st[1]

	run := strings.Join(find(build, "RUN"), "\n")
	assert.Contains(t, run, "CGO_ENABLED=0", "static binaries: the final stage has no libc")
	assert.Contains(t, run, "-o /out/ ./cmd/...", "every program of cmd/")
	assert.Contains(t, run, "-X "+versionVar+"=${VERSION}")
	makeVersion := strings.TrimSpace(command(t, "make", "-s", "--no-print-directory", "version"))
	assert.Contains(t, find(build, "ARG"), "VERSION="+makeVersion, "the Dockerfile's default version is the Makefile's")

	cmd := exec.Command("make", "-n", "--no-print-directory", "build", "VERSION=v9.8.7")
	cmd.Dir, cmd.Env = root, makeEnv()
	dryRun, err := cmd.Output()
	require.NoError(t, err)
	assert.Contains(t, string(dryRun), "CGO_ENABLED=0")
	assert.Contains(t, string(dryRun), "-X "+versionVar+"=v9.8.7", "make build stamps the version as the Dockerfile does")

	assert.Equal(t, []string{"gcr.io/distroless/static-debian12:nonroot"}, find(final, "FROM"))
	assert.Equal(t, []string{"--from=build /out/ /"}, find(final, "COPY"), "the binaries at /<name>")
	entries, err := os.ReadDir(filepath.Join(root, "cmd"))
	require.NoError(t, err)
	var programs []string
	for _, e := range entries {
		programs = append(programs, e.Name())
	}
	assert.Equal(t, binaries, programs)

	var d appsv1.Deployment
	data, err := os.ReadFile(filepath.Join(root, "manifests", "deployment.yaml"))
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(data, &d))
	c := d.Spec.Template.Spec.Containers[0]
	require.NotNil(t, c.SecurityContext.RunAsUser)
	require.NotNil(t, c.SecurityContext.RunAsGroup)
	assert.Equal(t, []string{"65532:65532"}, find(final, "USER"))
	assert.Equal(t, int64(65532), *c.SecurityContext.RunAsUser, "the Dockerfile's USER")
	assert.Equal(t, int64(65532), *c.SecurityContext.RunAsGroup, "the Dockerfile's USER")
	assert.Equal(t, []string{`["/rds-hooks"]`}, find(final, "ENTRYPOINT"))
	assert.Empty(t, c.Command, "the Deployment runs the entrypoint")
	assert.Equal(t, []string{`["` + strings.Join(c.Args, `", "`) + `"]`}, find(final, "CMD"), "the Deployment's args are the image's CMD")
	assert.Equal(t, []string{"8080 8081"}, find(final, "EXPOSE"), "the hooks and the log Jobs' port")
	assert.Equal(t, int32(8080), c.Ports[0].ContainerPort)
}

// TestImageTestBuildsTheDockerfilesLayout: test/image.sh builds the Dockerfile's final stage on
// scratch (no registry here): the same user, port, entrypoint and arguments, the binaries at the
// same paths, and the CA bundle where distroless has it.
func TestImageTestBuildsTheDockerfilesLayout(t *testing.T) {
	final := stages(t, filepath.Join(root, "Dockerfile"))[1]
	generated := stages(t, writeTemp(t, command(t, "bash", "test/image.sh", "--print-containerfile")))
	require.Len(t, generated, 1)
	test := generated[0]

	assert.Equal(t, []string{"scratch"}, find(test, "FROM"))
	assert.Equal(t, []string{"ca-certificates.crt /etc/ssl/certs/ca-certificates.crt", "bin/ /"}, find(test, "COPY"))
	for _, cmd := range []string{"USER", "EXPOSE", "ENTRYPOINT", "CMD", "ENV", "LABEL"} {
		assert.Equal(t, find(final, cmd), find(test, cmd), cmd)
	}
	assert.Len(t, test, len(final)+1, "nothing else: the Dockerfile's instructions and the CA bundle")
}

func writeTemp(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "Containerfile")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	return path
}

// TestBinaries: `make build` makes static binaries (they run FROM scratch) that print the version
// it stamps on --version, exit 0 on --help, and refuse an unknown flag.
func TestBinaries(t *testing.T) {
	bin := t.TempDir()
	cmd := exec.Command("make", "-s", "--no-print-directory", "build", "BIN="+bin, "VERSION=v0.0.0-test")
	cmd.Dir, cmd.Env = root, makeEnv()
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))

	for _, name := range binaries {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(bin, name)
			f, err := elf.Open(path)
			require.NoError(t, err)
			defer f.Close()
			for _, p := range f.Progs {
				assert.NotEqual(t, elf.PT_INTERP, p.Type, "no dynamic loader: the binary is static")
			}
			libs, err := f.ImportedLibraries()
			require.NoError(t, err)
			assert.Empty(t, libs, "no shared libraries")

			version, err := exec.Command(path, "--version").Output()
			require.NoError(t, err, "--version exits 0")
			assert.Equal(t, name+" v0.0.0-test\n", string(version))

			help, err := exec.Command(path, "--help").CombinedOutput()
			require.NoError(t, err, "--help exits 0")
			assert.Contains(t, strings.ToLower(string(help)), "usage: "+name)
			assert.Contains(t, string(help), "-version")

			err = exec.Command(path, "--no-such-flag").Run()
			var exit *exec.ExitError
			require.True(t, errors.As(err, &exit), "an unknown flag fails: %v", err)
			assert.Equal(t, 1, exit.ExitCode())
		})
	}
}

// TestImageRunsWithPodman builds the image and runs it non-root on a read-only root filesystem
// with every capability dropped (test/image.sh). Where podman cannot be installed or run it fails.
func TestImageRunsWithPodman(t *testing.T) {
	if testing.Short() {
		t.Skip("IMAGE TEST NOT RUN under -short: it builds and runs the image with podman (bash test/image.sh)")
	}
	cmd := exec.Command("bash", "test/image.sh")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	t.Log("\n" + string(out))
	require.NoError(t, err, "test/image.sh failed: the image is not proven (its output is above)")
}
