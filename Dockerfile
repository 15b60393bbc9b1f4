# The ECS task image: bin/tributary for linux/arm64 (Graviton Fargate) on a
# distroless base, running as non-root. The CDK builds it as an asset at
# deploy time; nothing else of the repository goes into it.
FROM --platform=$BUILDPLATFORM golang:1.26-bookworm AS build
ARG TARGETOS=linux
ARG TARGETARCH=arm64
# `tributary version` prints these: docker build --build-arg VERSION=$(git describe) --build-arg COMMIT=$(git rev-parse HEAD)
ARG VERSION=dev
ARG COMMIT=unknown
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY cmd ./cmd
COPY pkg ./pkg
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -buildvcs=false -trimpath -ldflags="-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" -o /out/tributary ./cmd/tributary

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/tributary /tributary
USER nonroot:nonroot
# SIGTERM from ECS: flush, checkpoint, release the lease, exit 0 (stop timeout 120 s).
ENTRYPOINT ["/tributary"]
