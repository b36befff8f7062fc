# inferno's container image, for those who build with Docker (or podman
# build, buildah). deploy/tools/image assembles the same image without
# Docker and without pulling a base image; docs/DEPLOY.md has both.
#
#   docker build -t inferno:dev .
#   docker run --rm --gpus all -p 8080:8080 -v inferno-models:/models -e INFERNO_API_KEY \
#     inferno:dev serve --addr 0.0.0.0:8080 Qwen/Qwen3-0.6B-GGUF:Q8_0

ARG GO_VERSION=1.26

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG TARGETOS=linux
ARG TARGETARCH
# No cgo and no CUDA toolkit: the GPU kernels are embedded, and the driver
# (libcuda.so.1) is loaded at run time from what the NVIDIA container
# toolkit mounts.
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags='-s -w' -o /out/inferno ./cmd/inferno && \
    mkdir -p /out/models

# distroless "base" rather than "static": inferno names glibc's loader and
# libc (purego links them to call dlopen), and libcuda.so.1 needs libc, libm,
# librt, libdl and libpthread. It also brings CA certificates (HTTPS pulls
# from the hub), /tmp and the user nonroot (65532).
FROM gcr.io/distroless/base-debian12:nonroot
COPY --from=build /out/inferno /usr/bin/inferno
COPY --from=build --chown=65532:65532 /out/models /models
ENV HF_HOME=/models \
    NVIDIA_DRIVER_CAPABILITIES=compute,utility
USER 65532:65532
WORKDIR /home/nonroot
EXPOSE 8080
VOLUME /models
ENTRYPOINT ["/usr/bin/inferno"]
CMD ["--help"]
