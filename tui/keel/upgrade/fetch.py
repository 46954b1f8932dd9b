"""A bundle from an https:// URL, fetched once onto /data: `keel upgrade URL`
then checks, shows, records and installs that one local file, never the URL
again (someone on the path cannot swap what was verified for what is
written).

    fetch(url, dest, progress)   the bundle at dest, or UpgradeError

https only, checked against the image's CA bundle (CA_FILE: Debian's and
Buildroot's ca-certificates); a redirect must stay on https; at most
MAX_BUNDLE bytes, and /data keeps FREE_MARGIN free. What the server says
(its length, its errors) is hostile: bounded, shown escaped."""

from __future__ import annotations

import shutil
import ssl
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from keel.shown import shown
from keel.upgrade.system import UpgradeError

CA_FILE = Path("/etc/ssl/certs/ca-certificates.crt")
DOWNLOAD = Path("/data/keel/upgrade/download.raucb")
MAX_BUNDLE = 1 << 30  # a keel bundle is ~200 MiB: a larger answer is not one
FREE_MARGIN = 64 << 20  # /data keeps this free for config, revisions, history
CHUNK = 1 << 20
TIMEOUT_S = 30.0  # per connect and per read, not for the whole transfer

Progress = Callable[[int, str], None]
# (url, context) -> a response: read(n), a headers mapping; injectable in tests
Opener = Callable[[str, ssl.SSLContext], Any]


class _HttpsOnly(urllib.request.HTTPRedirectHandler):
    """Redirects followed only to another https:// URL."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[override]
        if not str(newurl).startswith("https://"):
            raise UpgradeError(f"the server redirected to {shown(str(newurl)[:200])}: "
                               "not https, refused, nothing written")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def context(ca_file: Path = CA_FILE) -> ssl.SSLContext:
    """TLS that checks the server's certificate and name against the image's
    CA bundle, and nothing else."""
    if not ca_file.is_file():
        raise UpgradeError(f"no CA bundle at {ca_file}: cannot check an https server")
    return ssl.create_default_context(cafile=str(ca_file))


def open_url(url: str, ctx: ssl.SSLContext) -> Any:
    opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=ctx), _HttpsOnly)
    return opener.open(urllib.request.Request(url, headers={"User-Agent": "keel-upgrade"}),
                       timeout=TIMEOUT_S)


def _length(headers: Any) -> int | None:
    text = headers.get("Content-Length") if headers is not None else None
    if text is None:
        return None
    text = str(text).strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 15:
        raise UpgradeError(f"the server's Content-Length {shown(text[:20])} is not a size")
    return int(text)


def fetch(url: str, dest: Path = DOWNLOAD, progress: Progress | None = None, *,
          ca_file: Path = CA_FILE, opener: Opener = open_url, limit: int = MAX_BUNDLE,
          free: Callable[[Path], int] = lambda p: shutil.disk_usage(p).free) -> Path:
    """The bundle at `url` written to `dest` (through dest.part, renamed when
    whole); UpgradeError (and no file left) when it is not https, the server
    fails its certificate, or it is larger than `limit` or /data's room."""
    if not url.startswith("https://"):
        raise UpgradeError(f"{shown(url[:200])} is not https://: refused, nothing fetched")
    ctx = context(ca_file)
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    try:
        with opener(url, ctx) as answer:
            length = _length(getattr(answer, "headers", None))
            room = free(dest.parent) - FREE_MARGIN
            if length is not None and length > limit:
                raise UpgradeError(f"the server offers {length >> 20} MiB, more than a bundle "
                                   f"({limit >> 20} MiB at most): refused, nothing written")
            if length is not None and length > room:
                raise UpgradeError(f"/data has room for {max(0, room) >> 20} MiB, the bundle is "
                                   f"{length >> 20} MiB: refused, nothing written")
            _copy(answer, part, length, min(limit, room), progress)
        part.replace(dest)
    except UpgradeError:
        part.unlink(missing_ok=True)
        raise
    except ssl.SSLCertVerificationError as err:
        part.unlink(missing_ok=True)
        raise UpgradeError(f"the server's certificate does not check out against the "
                           f"router's CA bundle ({shown(str(err.verify_message)[:80])}): "
                           "refused, nothing fetched") from None
    except urllib.error.HTTPError as err:
        part.unlink(missing_ok=True)
        raise UpgradeError(f"the server answered {err.code} {shown(str(err.reason)[:60])}: "
                           "nothing fetched") from None
    except (urllib.error.URLError, OSError, ValueError) as err:
        part.unlink(missing_ok=True)
        why = getattr(err, "reason", None) or getattr(err, "strerror", None) or err
        if isinstance(why, ssl.SSLCertVerificationError):
            raise UpgradeError(f"the server's certificate does not check out against the "
                               f"router's CA bundle ({shown(str(why.verify_message)[:80])}): "
                               "refused, nothing fetched") from None
        raise UpgradeError(f"cannot fetch {shown(url[:200])}: {shown(str(why)[:120])}") from None
    return dest


def _copy(answer: BinaryIO, part: Path, length: int | None, most: int,
          progress: Progress | None) -> None:
    done = 0
    with part.open("wb") as out:
        while chunk := answer.read(CHUNK):
            done += len(chunk)
            if length is not None and done > length:
                raise UpgradeError(f"the server sent more than the {length} bytes it said: "
                                   "refused, nothing written")
            if done > most:
                raise UpgradeError(f"the bundle passed {most >> 20} MiB (a bundle's bound, or "
                                   "/data's room): refused, nothing written")
            out.write(chunk)
            if progress is not None:
                mib = f"{done >> 20} of {length >> 20} MiB" if length else f"{done >> 20} MiB"
                progress(done * 100 // length if length else 0, f"downloading: {mib}")
        if length is not None and done != length:
            raise UpgradeError(f"the download ended at {done} of {length} bytes: nothing written")
        out.flush()
