#!/usr/bin/env bash
# Build the sandbox image (`make image`); skipped when its inputs did not change.
#
#   BASE=offline (default)  Debian minbase from debootstrap, imported once and cached as
#                           graphdojo-base:bookworm; no registry needed
#   BASE=python:3.11-slim   any registry base with Python 3.11
#   VARIANT=gpu             torch with CUDA from TORCH_INDEX (default the cu128 index);
#                           tagged graphdojo-sandbox:gpu unless IMAGE is given
#   TORCH_INDEX=URL         where torch comes from (the local wheel dir / pip's config otherwise)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
VARIANT=${VARIANT:-cpu}
if [[ $VARIANT == gpu ]]; then
    IMAGE=${IMAGE:-graphdojo-sandbox:gpu}
    TORCH_INDEX=${TORCH_INDEX:-https://download.pytorch.org/whl/cu128}
else
    IMAGE=${IMAGE:-graphdojo-sandbox:latest}
    TORCH_INDEX=${TORCH_INDEX:-}
fi
BASE=${BASE:-offline}
BASE_IMAGE=graphdojo-base:bookworm
NUMPY_VERSION=2.3.5
TORCH_VERSION=2.13.0
CACHE=${GRAPHDOJO_CACHE:-/var/cache/graphdojo}
PYTHON=${PYTHON:-$root/.venv/bin/python}
[[ -x $PYTHON ]] || PYTHON=python3.11

inputs_hash=$(cat "$here/Dockerfile" "$here/build.sh" \
    | { cat; echo "$BASE $VARIANT $NUMPY_VERSION $TORCH_VERSION $TORCH_INDEX"; } \
    | sha256sum | cut -c1-16)
current=$(docker image inspect "$IMAGE" --format '{{ index .Config.Labels "graphdojo.inputs" }}' 2>/dev/null || true)
if [[ $current == "$inputs_hash" ]]; then
    echo "$IMAGE is up to date (inputs $inputs_hash)"
    exit 0
fi

if [[ $BASE == offline ]]; then
    if ! docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
        mirror=$(awk '/^URIs:/ {print $2; exit} /^deb / {print $2; exit}' \
            /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null || true)
        mirror=${mirror:-http://deb.debian.org/debian}
        rootfs=$(mktemp -d "${TMPDIR:-/tmp}/graphdojo-rootfs.XXXXXX")
        trap 'rm -rf "$rootfs"' EXIT
        echo "debootstrap bookworm from $mirror (about a minute)"
        debootstrap --variant=minbase --include=python3,python3-venv bookworm "$rootfs" "$mirror" >/dev/null
        tar -C "$rootfs" -c . | docker import -c 'LABEL graphdojo.base=bookworm' - "$BASE_IMAGE" >/dev/null
        rm -rf "$rootfs"
    fi
    BASE=$BASE_IMAGE
fi

wheelhouse="$CACHE/wheelhouse-$VARIANT-numpy$NUMPY_VERSION-torch$TORCH_VERSION"
if [[ ! -f $wheelhouse/requirements.txt ]]; then
    mkdir -p "$wheelhouse"
    index_args=()
    [[ -n $TORCH_INDEX ]] && index_args=(--extra-index-url "$TORCH_INDEX")
    "$PYTHON" -m pip download -q --only-binary=:all: --python-version 3.11 --platform manylinux_2_28_x86_64 \
        --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 "${index_args[@]}" \
        -d "$wheelhouse" "numpy==$NUMPY_VERSION" "torch==$TORCH_VERSION"
    printf 'numpy==%s\ntorch==%s\n' "$NUMPY_VERSION" "$TORCH_VERSION" > "$wheelhouse/requirements.txt"
fi

context=$(mktemp -d "${TMPDIR:-/tmp}/graphdojo-image.XXXXXX")
trap 'rm -rf "$context"' EXIT
cp "$here/Dockerfile" "$context/"
cp -al "$wheelhouse" "$context/wheelhouse" 2>/dev/null || cp -a "$wheelhouse" "$context/wheelhouse"
echo "building $IMAGE from $BASE (inputs $inputs_hash)"
docker build -q --build-arg "BASE=$BASE" --label "graphdojo.inputs=$inputs_hash" -t "$IMAGE" "$context"
docker image prune -f --filter "label=graphdojo.sandbox.image=1" >/dev/null 2>&1 || true
