"""``graphdojo submit SLUG FILE``: submit through the REST API, show progress, print the verdict.

    export GRAPHDOJO_URL=http://127.0.0.1:8000 GRAPHDOJO_TOKEN=...   # the token: /api/token/ on the site
    graphdojo submit static-graph-executor solution.py
    graphdojo exercises

Exit status: 0 accepted, 1 graded but not accepted, 2 the submission could not be made or read.
Standard library only, so it runs wherever Python does.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any


class ApiError(Exception):
    """The server refused or could not be reached; str() says why, for a person."""


class Client:
    def __init__(self, url: str, token: str, language: str):
        self.url = url.rstrip("/")
        self.language = language
        self.headers = {"Authorization": f"Token {token}", "Accept": "application/json", "Accept-Language": language}

    def request(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        headers = dict(self.headers, **({"Content-Type": "application/json"} if data else {}))
        request = urllib.request.Request(self.url + path, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return json.load(response)
        except urllib.error.HTTPError as error:
            raise ApiError(f"{method} {path}: HTTP {error.code}: {_problem(error)}") from None
        except (urllib.error.URLError, OSError) as error:
            raise ApiError(f"cannot reach {self.url}: {getattr(error, 'reason', error)}") from None


def _problem(error: urllib.error.HTTPError) -> str:
    try:
        body = json.load(error)
    except ValueError:
        return error.reason
    if isinstance(body, dict) and "detail" in body:
        return str(body["detail"])
    if isinstance(body, dict):
        return "; ".join(f"{field}: {' '.join(map(str, problems))}" for field, problems in body.items())
    return str(body)


def submit(client: Client, slug: str, path: Path, timeout_s: float, as_json: bool) -> int:
    try:
        code = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ApiError(f"cannot read {path}: {error}") from None
    submission = client.request("POST", f"/api/v1/exercises/{slug}/submissions/", {"code": code})
    print(f"submitted #{submission['id']}: {submission['url']}", file=sys.stderr)
    started = time.monotonic()
    while not submission["finished"]:
        waited = time.monotonic() - started
        if waited > timeout_s:
            raise ApiError(f"no verdict after {timeout_s:g} s; it is still {submission['status']}: {submission['url']}")
        print(f"\r{submission['status']}… {waited:4.0f} s", end="", file=sys.stderr, flush=True)
        time.sleep(1)
        submission = client.request("GET", f"/api/v1/submissions/{submission['id']}/")
    print("\r" + " " * 20 + "\r", end="", file=sys.stderr)
    if as_json:
        print(json.dumps(submission, indent=1, ensure_ascii=False))
    else:
        print_verdict(submission, client.language)
    return 0 if submission["verdict"] == "ACCEPTED" else 1


HIDDEN = {"en": " (hidden)", "zh-hans": "（隐藏）"}  # the server words everything else


def print_verdict(submission: dict[str, Any], language: str) -> None:
    print(f"{submission['verdict'] or submission['status'].upper()}: {submission['headline'] or ''}")
    for check in submission["checks"]:
        mark = "✔" if check["passed"] else "✘"
        hidden = "" if check["visible"] else HIDDEN.get(language, HIDDEN["en"])
        print(f"  {mark} {check['title']}{hidden}  {check['points']:g}/{check['max_points']:g}")
        if not check["passed"] and check["visible"] and check["message"]:
            for line in check["message"].splitlines():
                print(f"      {line}")


def exercises(client: Client) -> int:
    marks = {"solved": "✔", "attempted": "◐", "new": " "}
    for exercise in client.request("GET", "/api/v1/exercises/"):
        mark = marks.get(exercise["state"], " ")
        print(f"{mark} {exercise['slug']:<28} {exercise['difficulty']:<7} {exercise['title']}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="graphdojo", description="GraphDojo from the command line.")
    parser.add_argument(
        "--url", default=os.environ.get("GRAPHDOJO_URL", "http://127.0.0.1:8000"), help="the site (GRAPHDOJO_URL)"
    )
    parser.add_argument(
        "--token", default=os.environ.get("GRAPHDOJO_TOKEN", ""), help="your API token (GRAPHDOJO_TOKEN)"
    )
    parser.add_argument(
        "--lang",
        default="zh-hans" if os.environ.get("LANG", "").startswith("zh") else "en",
        help="language of the verdict: en or zh-hans",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    submit_parser = commands.add_parser("submit", help="submit FILE to exercise SLUG and wait for the verdict")
    submit_parser.add_argument("slug")
    submit_parser.add_argument("file", type=Path)
    submit_parser.add_argument("--timeout", type=float, default=600, help="seconds to wait for the verdict")
    submit_parser.add_argument("--json", action="store_true", help="print the whole verdict as JSON")
    commands.add_parser("exercises", help="list the exercises, marked solved or attempted")
    args = parser.parse_args(argv)
    if not args.token:
        parser.error("no token: make one on the site's /api/token/ page and pass --token or set GRAPHDOJO_TOKEN")
    client = Client(args.url, args.token, args.lang)
    try:
        if args.command == "submit":
            return submit(client, args.slug, args.file, args.timeout, args.json)
        return exercises(client)
    except ApiError as error:
        print(f"graphdojo: {error}", file=sys.stderr)
        return 2
