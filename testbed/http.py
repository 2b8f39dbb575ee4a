"""A small HTTP client for tests against a real server: keeps cookies itself (Secure ones
too, since a test behind a pretend TLS proxy speaks plain HTTP), reads CSRF tokens, and
speaks HTTPS to a site whose certificate the test made."""
from __future__ import annotations

import re
import ssl
import urllib.error
import urllib.parse
import urllib.request
from http.cookies import SimpleCookie
from typing import Any


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class Client:
    def __init__(self, base_url: str, headers: dict[str, str] | None = None, tls: ssl.SSLContext | None = None):
        """``tls``: the context that trusts the site's certificate, for an https:// ``base_url``."""
        self.base_url = base_url.rstrip("/")
        self.headers = headers or {}
        self.cookies: dict[str, str] = {}
        self._opener = urllib.request.build_opener(_NoRedirect, urllib.request.HTTPSHandler(context=tls))

    def request(self, method: str, path: str, data: dict[str, Any] | bytes | None = None,
                content_type: str = "application/x-www-form-urlencoded") -> tuple[int, dict[str, str], str]:
        body = urllib.parse.urlencode(data).encode() if isinstance(data, dict) else data
        request = urllib.request.Request(self.base_url + path, data=body, method=method)
        # Over HTTPS (or behind a pretend TLS proxy), Django wants the Referer of an HTTPS page of this site.
        scheme = self.headers.get("X-Forwarded-Proto", self.base_url.split("://", 1)[0])
        referer = scheme + "://" + self.base_url.split("://", 1)[1] + "/"
        for name, value in {**self.headers, "Referer": referer}.items():
            request.add_header(name, value)
        if body is not None:
            request.add_header("Content-Type", content_type)
        if self.cookies:
            request.add_header("Cookie", "; ".join(f"{k}={v}" for k, v in self.cookies.items()))
        try:
            response = self._opener.open(request, timeout=30)
        except urllib.error.HTTPError as error:
            response = error
        for header in response.headers.get_all("Set-Cookie") or []:
            for name, morsel in SimpleCookie(header).items():
                self.cookies[name] = morsel.value
        return response.status, dict(response.headers), response.read().decode(errors="replace")

    def get(self, path: str) -> tuple[int, dict[str, str], str]:
        return self.request("GET", path)

    def post_form(self, path: str, fields: dict[str, Any],
                  form_page: str | None = None) -> tuple[int, dict[str, str], str]:
        """POST ``fields`` with the CSRF token of ``form_page`` (default: ``path``)."""
        _, _, page = self.get(form_page or path)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
        assert token, f"no CSRF token on {form_page or path}: {page[:500]}"
        return self.request("POST", path, {"csrfmiddlewaretoken": token.group(1), **fields})

    def log_in(self, username: str, password: str) -> None:
        status, headers, page = self.post_form("/login/", {"username": username, "password": password})
        assert status == 302, (status, page[:1000])
