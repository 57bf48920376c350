#!/usr/bin/env bash
# Builds Kassa's image with podman and runs it against PostgreSQL and Redis: waits for /readyz and
# for the image's own HEALTHCHECK, checks it runs as an unprivileged user, makes a token with
# `kassa bootstrap` inside the container and uses it, then stops it with SIGTERM and expects exit 0.
# Exits non-zero at the first failure. See docs/testing.md#the-container-image.
#
#   KASSA_CHECK_POSTGRES_URL  a PostgreSQL URL whose user may create databases
#                             (default postgres://postgres@127.0.0.1:5432/postgres); two throwaway
#                             databases are created and dropped
#   KASSA_CHECK_REDIS_URL     default redis://127.0.0.1:6379
#   KASSA_CHECK_PODMAN_FLAGS  flags before podman's command, e.g. "--runtime runc"
#   KASSA_CHECK_RUN_FLAGS     more `podman run` flags, e.g. "--ulimit nofile=1024:1024"
# The container shares the host's network, so the URLs are as the host sees them.
set -euo pipefail
cd "$(dirname "$0")/.."

admin_url=${KASSA_CHECK_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/postgres}
redis_url=${KASSA_CHECK_REDIS_URL:-redis://127.0.0.1:6379}
read -r -a podman_flags <<<"${KASSA_CHECK_PODMAN_FLAGS:-}"
read -r -a run_flags <<<"${KASSA_CHECK_RUN_FLAGS:-}"
podman() { command podman "${podman_flags[@]}" "$@"; }

suffix="$(date +%s)_$$"
# One tag, kept after the run: the next build reuses its layers (`podman image prune` drops the old ones).
image="localhost/kassa:check"
container="kassa-check-$suffix"
databases=("kassa_check_${suffix}" "kassa_check_${suffix}_sandbox")
port=$((20000 + RANDOM % 20000))
started=$SECONDS

say() { printf '[container-check %3ss] %s\n' "$((SECONDS - started))" "$*"; }
fail() { say "FAILED: $*"; exit 1; }
cleanup() {
  if podman container exists "$container" 2>/dev/null; then
    podman logs "$container" >"${KASSA_CHECK_LOG:-/dev/null}" 2>&1 || true
    podman rm -f "$container" >/dev/null 2>&1 || true
  fi
  for db in "${databases[@]}"; do psql "$admin_url" -qc "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true; done
}
trap cleanup EXIT

say "building $image"
# The docker format keeps the HEALTHCHECK instruction (the OCI format has no place for it).
podman build --format docker -t "$image" . >"${KASSA_CHECK_BUILD_LOG:-/dev/null}" 2>&1 || fail "podman build (set KASSA_CHECK_BUILD_LOG=<file> for its output)"
say "built"

for db in "${databases[@]}"; do psql "$admin_url" -qc "CREATE DATABASE $db" >/dev/null || fail "could not create database $db"; done
url_of() { printf '%s' "$admin_url" | sed -E "s#/[^/?]*(\?|$)#/$1\1#"; }

podman run -d --name "$container" --network host "${run_flags[@]}" \
  -e PORT="$port" -e DATABASE_URL="$(url_of "${databases[0]}")" -e SANDBOX_DATABASE_URL="$(url_of "${databases[1]}")" \
  -e REDIS_URL="$redis_url" -e SECRETS_KEY="$(openssl rand -hex 32)" "$image" >/dev/null || fail "podman run"

say "waiting for /readyz on port $port"
ready=""
for _ in $(seq 1 240); do
  [ "$(podman inspect -f '{{.State.Running}}' "$container")" = true ] || fail "the container exited: $(podman logs --tail 20 "$container" 2>&1)"
  if [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz")" = 200 ]; then ready=yes; break; fi
  sleep 0.5
done
[ -n "$ready" ] || fail "/readyz did not answer 200 within 120 s"
say "ready"

podman healthcheck run "$container" >/dev/null || fail "the image's HEALTHCHECK reports unhealthy"
[ "$(podman exec "$container" id -u)" != 0 ] || fail "the server runs as root"

token=$(podman exec "$container" node dist/cli.js bootstrap --environment sandbox --json | sed -E 's/.*"organization_access_token":"([^"]+)".*/\1/')
status=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" "http://127.0.0.1:$port/sandbox/v1/products/")
[ "$status" = 200 ] || fail "GET /sandbox/v1/products/ with the bootstrap token answered $status"
say "kassa bootstrap in the container made a token that lists products"

podman stop -t 20 "$container" >/dev/null
code=$(podman inspect -f '{{.State.ExitCode}}' "$container")
[ "$code" = 0 ] || fail "SIGTERM: exit code $code"
say "stopped cleanly; passed in $((SECONDS - started)) s"
