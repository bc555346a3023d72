# Container image of reconcile: a static binary (no cgo: the SQLite driver
# is pure Go) on a distroless base, running as a non-root user.
#
#   docker build -t reconcile --build-arg VERSION=v0.1.0 .
#   docker run --rm reconcile version
#
# See docs/deploy.md and deploy/compose.yaml.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# VERSION names the build in `reconcile version` (the build context has no
# .git, so the go command cannot stamp a commit).
ARG VERSION=""
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X main.version=${VERSION}" -o /out/reconcile ./cmd/reconcile

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/reconcile /usr/local/bin/reconcile
# The embedded SQLite default (sqlite:reconcile.db) lands in the working
# directory; use PostgreSQL (RECONCILE_DATABASE_URL) for anything that lasts.
WORKDIR /home/nonroot
USER nonroot:nonroot
# Public port (callbacks, intents API) and admin port (metrics, health). The
# admin port listens on all interfaces inside the container; publish it only
# to the scraper's network.
ENV RECONCILE_HTTP_ADMIN_LISTEN=:8081
EXPOSE 8080 8081
ENTRYPOINT ["/usr/local/bin/reconcile"]
CMD ["serve"]
