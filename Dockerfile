# syntax=docker/dockerfile:1
# kpipe as a container image, built from source: docker build -t kpipe .
#
# The image holds kpipe, a static binary (CGO_ENABLED=0), and beside it
# kpipe-cache-server, which `kpipe cache serve` hands over to, on
# distroless's static base: no shell, no package manager, user nonroot (65532).
# Remote git bases and helm charts need the git and helm programs, which
# this image does not have: build from a local checkout, or base an image
# of your own on one that has them (see docs/install.md).
#
# Run it on a tree mounted at /work, with the cache on a volume:
#   docker run --rm -v "$PWD:/work" -v kpipe-cache:/cache kpipe build overlays/prod
# or serve a cache to a CI fleet (docs/cache-server.md):
#   docker run -p 8780:8780 -v kpipe-server:/srv kpipe cache serve --dir /srv/store --listen :8780 ...
#
# Releases publish the same image built by goreleaser from its own binary
# (build/Dockerfile.release).


FROM golang:1.26.8-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=v0.0.0-docker
RUN CGO_ENABLED=0 go build -trimpath -tags urfave_cli_no_docs -ldflags "-s -w -X github.com/kpipe/kpipe/internal/cli.Version=${VERSION}" -o /out/ ./cmd/kpipe ./cmd/kpipe-full ./cmd/kpipe-cache-server

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/kpipe /out/kpipe-full /out/kpipe-cache-server /usr/local/bin/
# kpipe's cache lives in $XDG_CACHE_HOME/kpipe: keep it on a volume so
# that runs share it.
ENV XDG_CACHE_HOME=/cache
VOLUME ["/cache"]
WORKDIR /work
USER nonroot:nonroot
ENTRYPOINT ["/usr/local/bin/kpipe"]
CMD ["--help"]
