# syntax=docker/dockerfile:1
#
# One image, three programs:
#   /rds-hooks  the Metacontroller hook server (the entrypoint; see manifests/deployment.yaml)
#   /rds-logs   the log fetcher the hooks' Job runs (RDS_HOOKS_JOB_IMAGE points at this image)
#   /otcsim     the OTC API simulator, for local trials: docker run --entrypoint /otcsim ...
#
# Build: make docker-build (docker build --build-arg VERSION=dev -t ghcr.io/mcsps/rds-lambda-controller:dev .)
# Multi-arch: docker buildx build --platform linux/amd64,linux/arm64 ... (cross-compiled, no emulation)
# test/image.sh builds this final stage's layout offline (FROM scratch, the same binaries, paths,
# user, entrypoint and arguments) and runs it as in a pod; keep the final stage in that shape.

FROM --platform=$BUILDPLATFORM golang:1.26-bookworm AS build
WORKDIR /src

# Modules first: this layer is rebuilt only when go.mod or go.sum change.
COPY go.mod go.sum ./
RUN go mod download && go mod verify

COPY . .
ARG TARGETOS=linux
ARG TARGETARCH
# What --version prints: make docker-build passes the Makefile's VERSION.
ARG VERSION=dev
RUN --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags="-s -w -X github.com/mcsps/rds-lambda-controller/internal/version.Version=${VERSION}" -o /out/ ./cmd/...

# Static binaries on distroless: no shell, no package manager, CA certificates and tzdata included.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/ /
USER 65532:65532
EXPOSE 8080 8081
ENTRYPOINT ["/rds-hooks"]
CMD ["--listen=:8080", "--tls-cert-file=/etc/rds-hooks/tls/tls.crt", "--tls-key-file=/etc/rds-hooks/tls/tls.key", "--hook-tokens=/etc/rds-hooks/token", "--logs-listen=:8081", "--resync-pending=4s"]
