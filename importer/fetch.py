"""Reading inputs from files or URLs, with limits: size, time, retries on transient faults.

Every input is read with a cap (``max_bytes``), never by trusting a size from ``stat`` or a
header: a pipe, a device or a server can send more than they declare. Every read that can wait
on someone else has one wall-clock deadline (``timeout_s``): a URL attempt from the connection to
the last byte of the body, headers included, however slowly the server trickles them; a pipe,
FIFO or device from opening it to its end of file. Regular files are read without a deadline.
"""

from __future__ import annotations

import os
import select
import socket
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cuda_l2_explorer.db.errors import BadInputError, IOFailure

ProgressCallback = Callable[[int, int | None], None]

_TRANSIENT_STATUS = {408, 425, 429, 500, 502, 503, 504}
_CHUNK = 64 * 1024


@dataclass(frozen=True)
class FetchOptions:
    timeout_s: float = 30.0  # one attempt of a download (headers and body), or the read of a pipe
    retries: int = 3  # extra attempts after the first, transient faults only
    backoff_s: float = 0.5  # first wait; doubles each retry
    max_bytes: int = 64 * 1024 * 1024
    # Hosts a redirect may lead to besides the URL's own (a GitHub archive: api.github.com sends
    # the body from codeload.github.com); never from https down to http.
    redirect_hosts: frozenset[str] = frozenset()
    expect: str = "a CSV"  # what the body should be, for the message when a server sends a web page


def is_url(text: str) -> bool:
    return text.startswith(("http://", "https://"))


def _over_limit(what: str, max_bytes: int) -> BadInputError:
    return BadInputError(f"{what} is over the {max_bytes}-byte limit (--max-bytes)")


def read_local(path: Path, options: FetchOptions) -> bytes:
    """The bytes of a local file, a pipe or a device: at most ``max_bytes``, and for anything but
    a regular file within ``timeout_s`` (a FIFO nobody writes to must not block for ever)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError as exc:
        raise IOFailure(f"no such file: {path}") from exc
    except PermissionError as exc:
        raise IOFailure(f"cannot read {path}: permission denied") from exc
    except OSError as exc:
        raise IOFailure(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IOFailure(f"{path} is a directory, not a file")
        if not stat.S_ISREG(info.st_mode):
            return _read_capped(fd, path, options.max_bytes, options.timeout_s)
        if info.st_size > options.max_bytes:  # refused at once; the capped read holds if it grows
            raise BadInputError(f"{path} is {info.st_size} bytes, over the {options.max_bytes}-byte limit")
        os.set_blocking(fd, True)
        return _read_capped(fd, path, options.max_bytes, None)
    except OSError as exc:
        raise IOFailure(f"cannot read {path}: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)


def _read_capped(fd: int, path: Path, max_bytes: int, timeout_s: float | None) -> bytes:
    """Read ``fd`` to its end: BadInputError past ``max_bytes``, IOFailure after ``timeout_s``."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    poller = select.poll()
    poller.register(fd, select.POLLIN)  # hang-ups and errors are reported without asking
    body = bytearray()
    while True:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not poller.poll(max(1, int(left * 1000))):
                raise IOFailure(
                    f"reading {path} took longer than {timeout_s:g} s (a pipe or device that sends no end "
                    "of file: no writer?); pass a regular file, or raise --timeout"
                )
        try:
            chunk = os.read(fd, _CHUNK)
        except BlockingIOError:
            continue  # woken without data: wait again
        if not chunk:
            return bytes(body)
        body += chunk
        if len(body) > max_bytes:
            raise _over_limit(str(path), max_bytes)


class _Transient(Exception):
    """A fault worth another attempt; its text ends up in the final message."""


def fetch_url(url: str, options: FetchOptions, progress: ProgressCallback | None = None) -> bytes:
    """GET ``url`` into memory, retrying transient faults with exponential backoff."""
    last: str = ""
    attempts = options.retries + 1
    for attempt in range(attempts):
        if attempt:
            time.sleep(options.backoff_s * 2 ** (attempt - 1))
        try:
            return _attempt(url, options, progress)
        except _Transient as exc:
            last = str(exc)
    tries = f"{attempts} tries" if attempts > 1 else "1 try"
    raise IOFailure(f"download failed after {tries}: {last}: {url}")


class _Deadline:
    """One attempt's wall-clock limit. httpx's timeouts bound each read, not the whole: a server
    that sends a byte a second keeps every read short. So each socket of the attempt is kept (a
    duplicate, through httpx's ``trace`` extension, taken as it connects: TLS wraps the same
    socket) and shut down when the time is up, which ends any read blocked inside httpx, in the
    headers as in the body."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.expired = False
        self._ends = time.monotonic() + seconds
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def left(self) -> float:
        return max(0.001, self._ends - time.monotonic())

    def trace(self, event: str, info: dict) -> None:
        if event != "connection.connect_tcp.complete" or info.get("return_value") is None:
            return
        sock = info["return_value"].get_extra_info("socket")
        if sock is None:
            return
        with self._lock:
            self._sockets.append(sock.dup())
            if self.expired:
                _shut(self._sockets[-1])

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._sockets:
                _shut(sock)

    def close(self) -> None:
        self._timer.cancel()
        with self._lock:
            for sock in self._sockets:
                sock.close()
            self._sockets.clear()


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # the connection is gone already


_REDIRECTS = {301, 302, 303, 307, 308}
MAX_REDIRECTS = 5


def _redirect_target(url: str, location: str, allowed_hosts: frozenset[str] = frozenset()) -> str:
    """Follow a redirect only on the same host (or to one of ``allowed_hosts``) and never from
    https down to http."""
    from urllib.parse import urljoin, urlparse

    target = urljoin(url, location)
    old, new = urlparse(url), urlparse(target)
    same_host = new.hostname == old.hostname and new.port == old.port
    if not same_host and new.hostname not in allowed_hosts:
        raise IOFailure(
            f"refusing a redirect to another host ({new.hostname}): {url}; import that URL directly"
        )
    if old.scheme == "https" and new.scheme != "https":
        raise IOFailure(f"refusing a redirect from https to {new.scheme}: {url}")
    return target


def _attempt(url: str, options: FetchOptions, progress: ProgressCallback | None) -> bytes:
    """One attempt, redirects included, within one deadline (a fresh client: no reused sockets)."""
    import httpx

    deadline = _Deadline(options.timeout_s)
    timed_out = f"timed out: the attempt took longer than {options.timeout_s:g} s (--timeout)"
    try:
        with httpx.Client(follow_redirects=False) as client:
            body = _get(client, url, options, progress, deadline)
        if deadline.expired:  # a body that ends at the connection's close ends when we shut it
            raise _Transient(timed_out)
        return body
    except (httpx.TransportError, _Transient) as exc:
        if deadline.expired or isinstance(exc, httpx.TimeoutException):
            raise _Transient(timed_out) from exc
        if isinstance(exc, _Transient):
            raise
        if isinstance(exc, httpx.RemoteProtocolError):
            raise _Transient(f"connection broke off, body truncated ({_first_line(exc)})") from exc
        if isinstance(exc, httpx.UnsupportedProtocol):
            raise IOFailure(f"download failed: unsupported URL: {url}") from exc
        raise _Transient(f"network error ({_first_line(exc)})") from exc
    finally:
        deadline.close()


def _get(client, url: str, options: FetchOptions, progress: ProgressCallback | None, deadline: _Deadline):
    import httpx

    original = url
    for _ in range(MAX_REDIRECTS + 1):
        request = client.build_request(
            "GET", url, timeout=httpx.Timeout(deadline.left()), extensions={"trace": deadline.trace}
        )
        response = client.send(request, stream=True)
        if response.status_code not in _REDIRECTS:
            break
        location = response.headers.get("location", "")
        response.close()
        url = _redirect_target(url, location, options.redirect_hosts)
    else:
        raise IOFailure(f"download failed: more than {MAX_REDIRECTS} redirects: {original}")
    try:
        if response.status_code in _TRANSIENT_STATUS:
            raise _Transient(f"HTTP {response.status_code} {response.reason_phrase}")
        if response.status_code >= 400:
            raise IOFailure(f"download failed: HTTP {response.status_code} {response.reason_phrase}: {url}")
        content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type in {"text/html", "application/xhtml+xml"}:
            raise BadInputError(f"not {options.expect}: the server sent {content_type}: {url}")
        declared = response.headers.get("content-length")
        total = int(declared) if declared and declared.isdigit() and len(declared) < 20 else None
        if total is not None and total > options.max_bytes:
            raise BadInputError(
                f"download is {total} bytes, over the {options.max_bytes}-byte limit (--max-bytes): {url}"
            )
        body = bytearray()
        for chunk in response.iter_bytes():  # as the bytes arrive (decoded: the limit is on those)
            body += chunk
            if len(body) > options.max_bytes:
                raise _over_limit(f"download {url}", options.max_bytes)
            if progress is not None:
                progress(response.num_bytes_downloaded, total)
        # Content-Length counts the bytes on the wire: compressed ones when the body is gzip.
        if total is not None and response.num_bytes_downloaded != total:
            raise _Transient(f"truncated body ({response.num_bytes_downloaded} of {total} bytes)")
        return bytes(body)
    finally:
        response.close()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
