"""The little HTTP/1.x the metrics endpoint speaks: a request's head judged
(pure), and the response to it. It answers GET and HEAD of /metrics and /,
404 to any other path, 405 to any other method, 400 to anything that is not
a request line and headers, 431 past MAX_HEAD bytes or MAX_HEADERS headers,
505 to an HTTP version other than 1.0 and 1.1. Every response closes the
connection. Nothing of the request is ever written back or logged."""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_HEAD = 8192  # bytes: the request line and the headers together
MAX_HEADERS = 32
PATHS = ("/metrics", "/")
METHODS = ("GET", "HEAD")
# RFC 9110's token: a method and a header field's name
TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
VERSION = re.compile(rb"HTTP/1\.[01]")
# an origin-form target: a path of visible ASCII, an optional query
TARGET = re.compile(rb"/[\x21-\x7e]*")
REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
           408: "Request Timeout", 431: "Request Header Fields Too Large",
           500: "Internal Server Error", 503: "Service Unavailable",
           505: "HTTP Version Not Supported"}
INDEX = b"keel: metrics for Prometheus at /metrics\n"


@dataclass(frozen=True)
class Request:
    """A head judged: `status` 200 with the method and the path asked for,
    else the refusal's status."""

    status: int
    method: str = ""
    path: str = ""


def head_end(data: bytes) -> int | None:
    """Where the head ends (the index after its blank line), or None while
    it has not; a bare LF ends lines too (RFC 9112 2.2 lets a server take it)."""
    ends = [i + len(mark) for mark in (b"\r\n\r\n", b"\n\n") if (i := data.find(mark)) >= 0]
    return min(ends) if ends else None


def judge(head: bytes) -> Request:
    """The head of a request (up to its blank line, which may be missing)."""
    if len(head) > MAX_HEAD:
        return Request(431)
    lines = head.replace(b"\r\n", b"\n").split(b"\n")
    while lines and lines[-1] == b"":
        lines.pop()
    if not lines:
        return Request(400)
    parts = lines[0].split(b" ")
    if len(parts) != 3 or not TOKEN.fullmatch(parts[0]):
        return Request(400)
    method, target, version = parts
    if not VERSION.fullmatch(version):
        return Request(505 if version.startswith(b"HTTP/") else 400)
    fields = lines[1:]
    if len(fields) > MAX_HEADERS:
        return Request(431)
    for line in fields:
        name, colon, _value = line.partition(b":")
        if not colon or not TOKEN.fullmatch(name) or b"\r" in line or b"\x00" in line:
            return Request(400)  # obsolete folding (leading space) is no token either
    if not TARGET.fullmatch(target):
        return Request(400)
    path = target.split(b"?", 1)[0].decode("ascii")
    if path not in PATHS:
        return Request(404)
    if method.decode("ascii") not in METHODS:
        return Request(405)
    return Request(200, method.decode("ascii"), path)


def response(status: int, body: bytes = b"", content_type: str = "text/plain; charset=utf-8",
             head_only: bool = False) -> bytes:
    """A whole response that closes the connection. An error's body is its
    reason (never anything of the request)."""
    if status != 200 and not body:
        body = f"{status} {REASONS[status]}\n".encode()
    lines = [f"HTTP/1.1 {status} {REASONS[status]}", f"Content-Type: {content_type}",
             f"Content-Length: {len(body)}", "Connection: close", "Cache-Control: no-store",
             "X-Content-Type-Options: nosniff"]
    if status == 405:
        lines.append("Allow: " + ", ".join(METHODS))
    if status == 503:
        lines.append("Retry-After: 1")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("ascii")
    return head if head_only else head + body
