#!/usr/bin/env bash
# Build the images of docker-compose.yml with no registry (`make stack-images`): the web and
# worker image from the offline Debian base and a wheelhouse made here, and PostgreSQL, Redis
# and the TLS proxy's nginx (deploy/tls) from Debian's packages on the same base. Docker's
# layer cache makes a rebuild with unchanged dependencies a matter of seconds. Then:
#   GRAPHDOJO_POSTGRES_IMAGE=graphdojo-postgres:offline GRAPHDOJO_REDIS_IMAGE=graphdojo-redis:offline \
#   docker-compose up
# Needs the base from `make image` (graphdojo-base:bookworm).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
BASE=graphdojo-base:bookworm
WEB_IMAGE=${GRAPHDOJO_WEB_IMAGE:-graphdojo-web:latest}
CACHE=${GRAPHDOJO_CACHE:-/var/cache/graphdojo}
PYTHON=${PYTHON:-$root/.venv/bin/python}
[[ -x $PYTHON ]] || PYTHON=python3.11

docker image inspect "$BASE" >/dev/null 2>&1 || bash "$root/sandbox/image/build.sh"

# The web image's wheels: the pinned dependencies and gunicorn. Debian's CPython is 3.11.2,
# older than 3.11.3, so redis needs async-timeout there (pip download judges markers by ours).
requirements=$("$PYTHON" - "$root/pyproject.toml" <<'PY'
import sys, tomllib
project = tomllib.load(open(sys.argv[1], "rb"))["project"]
print("\n".join([*project["dependencies"], "gunicorn==23.0.0"]))
PY
)
wheelhouse="$CACHE/wheelhouse-web-$(sha256sum <<<"async-timeout $requirements" | cut -c1-16)"
if [[ ! -f $wheelhouse/requirements.txt ]]; then
    mkdir -p "$wheelhouse"
    # shellcheck disable=SC2086
    "$PYTHON" -m pip download -q --only-binary=:all: --python-version 3.11.2 --platform manylinux_2_28_x86_64 \
        --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform any \
        -d "$wheelhouse" $requirements "async-timeout>=4.0.3" 2> >(grep -v "is ignored: it is neither" >&2)
    printf '%s\n' "$requirements" > "$wheelhouse/requirements.txt"
fi
find "$here/wheelhouse" -mindepth 1 ! -name README -delete
cp -al "$wheelhouse"/. "$here/wheelhouse/" 2>/dev/null || cp -a "$wheelhouse"/. "$here/wheelhouse/"
trap 'find "$here/wheelhouse" -mindepth 1 ! -name README -delete' EXIT

echo "building $WEB_IMAGE, graphdojo-postgres:offline, graphdojo-redis:offline and graphdojo-proxy:offline from $BASE"
docker build -q --build-arg "BASE=$BASE" --build-arg PIP_ARGS=--no-index -t "$WEB_IMAGE" "$root" >/dev/null
docker build -q --build-arg "BASE=$BASE" -t graphdojo-postgres:offline "$here/postgres" >/dev/null
docker build -q --build-arg "BASE=$BASE" -t graphdojo-redis:offline "$here/redis" >/dev/null
docker build -q --build-arg "BASE=$BASE" -t graphdojo-proxy:offline "$here/tls" >/dev/null
