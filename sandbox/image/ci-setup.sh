#!/usr/bin/env bash
# Make this machine able to run every sandbox backend, then return once `docker info`
# answers: installs docker.io, runsc (gVisor), bubblewrap and debootstrap when missing,
# registers runsc in /etc/docker/daemon.json and starts (or reloads) dockerd.
# Idempotent; needs root and Debian's package mirror. `.ci/run` calls it before `make image`.
set -euo pipefail

missing=()
command -v dockerd >/dev/null || missing+=(docker.io)
command -v runsc >/dev/null || missing+=(runsc)
command -v bwrap >/dev/null || missing+=(bubblewrap)
command -v debootstrap >/dev/null || missing+=(debootstrap)
if ((${#missing[@]})); then
    echo "ci-setup: installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Register gVisor, keeping whatever else daemon.json holds. ptrace: no /dev/kvm needed.
mkdir -p /etc/docker
changed=$(python3 - <<'PY'
import json, pathlib
path = pathlib.Path("/etc/docker/daemon.json")
config = json.loads(path.read_text() or "{}") if path.exists() else {}
wanted = {"path": "/usr/bin/runsc", "runtimeArgs": ["--platform=ptrace", "--network=none"]}
if config.get("runtimes", {}).get("runsc") != wanted:
    config.setdefault("runtimes", {})["runsc"] = wanted
    path.write_text(json.dumps(config, indent=2) + "\n")
    print("yes")
PY
)

if docker info >/dev/null 2>&1; then
    if [[ -n $changed ]] && [[ -f /var/run/docker.pid ]]; then
        kill -HUP "$(cat /var/run/docker.pid)"  # runtimes are reloaded on SIGHUP
    fi
else
    echo "ci-setup: starting dockerd (log in /tmp/dockerd.log)"
    # setsid: the engine outlives the shell that started it (a developer session, say)
    setsid nohup dockerd >/tmp/dockerd.log 2>&1 &
fi

for _ in $(seq 60); do
    if docker info --format '{{json .Runtimes}}' 2>/dev/null | grep -q runsc; then
        echo "ci-setup: docker is up with runtimes: $(docker info --format '{{range $k, $v := .Runtimes}}{{$k}} {{end}}')"
        exit 0
    fi
    sleep 1
done
echo "ci-setup: dockerd did not come up with the runsc runtime; see /tmp/dockerd.log" >&2
tail -20 /tmp/dockerd.log >&2 || true
exit 1
