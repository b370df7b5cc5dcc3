// Package version holds the version of the build, set by the linker:
//
//	go build -ldflags "-X github.com/mcsps/rds-lambda-controller/internal/version.Version=v1.2.3" ./cmd/...
//
// `make build` and the Dockerfile set it from VERSION; a plain `go build` leaves "dev".
package version

// Version is the version of this build.
var Version = "dev"

// String is what `--version` prints: the program's name and the version.
func String(program string) string { return program + " " + Version }
