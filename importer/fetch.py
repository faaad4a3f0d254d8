"""Reading inputs from files or URLs, with limits: size, timeouts, retries on transient faults."""

from __future__ import annotations

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
    timeout_s: float = 30.0  # connect and per-read timeout of one attempt
    attempt_deadline_s: float = 300.0  # whole attempt, so a trickling server cannot stall us
    retries: int = 3  # extra attempts after the first, transient faults only
    backoff_s: float = 0.5  # first wait; doubles each retry
    max_bytes: int = 64 * 1024 * 1024


def is_url(text: str) -> bool:
    return text.startswith(("http://", "https://"))


def read_local(path: Path, options: FetchOptions) -> bytes:
    try:
        if path.is_dir():
            raise IOFailure(f"{path} is a directory, not a file")
        size = path.stat().st_size
        if size > options.max_bytes:
            raise BadInputError(f"{path} is {size} bytes, over the {options.max_bytes}-byte limit")
        return path.read_bytes()
    except FileNotFoundError as exc:
        raise IOFailure(f"no such file: {path}") from exc
    except PermissionError as exc:
        raise IOFailure(f"cannot read {path}: permission denied") from exc
    except OSError as exc:
        raise IOFailure(f"cannot read {path}: {exc.strerror or exc}") from exc


class _Transient(Exception):
    """A fault worth another attempt; its text ends up in the final message."""


def fetch_url(url: str, options: FetchOptions, progress: ProgressCallback | None = None) -> bytes:
    """GET ``url`` into memory, retrying transient faults with exponential backoff."""
    import httpx

    timeout = httpx.Timeout(options.timeout_s)
    last: str = ""
    attempts = options.retries + 1
    with httpx.Client(timeout=timeout, follow_redirects=False) as client:
        for attempt in range(attempts):
            if attempt:
                time.sleep(options.backoff_s * 2 ** (attempt - 1))
            try:
                return _attempt(client, url, options, progress)
            except _Transient as exc:
                last = str(exc)
    tries = f"{attempts} tries" if attempts > 1 else "1 try"
    raise IOFailure(f"download failed after {tries}: {last}: {url}")


_REDIRECTS = {301, 302, 303, 307, 308}
MAX_REDIRECTS = 5


def _redirect_target(url: str, location: str) -> str:
    """Follow a redirect only on the same host and never from https down to http."""
    from urllib.parse import urljoin, urlparse

    target = urljoin(url, location)
    old, new = urlparse(url), urlparse(target)
    if new.hostname != old.hostname or new.port != old.port:
        raise IOFailure(
            f"refusing a redirect to another host ({new.hostname}): {url}; import that URL directly"
        )
    if old.scheme == "https" and new.scheme != "https":
        raise IOFailure(f"refusing a redirect from https to {new.scheme}: {url}")
    return target


def _attempt(client, url: str, options: FetchOptions, progress: ProgressCallback | None) -> bytes:
    import httpx

    started = time.monotonic()
    original = url
    try:
        for _ in range(MAX_REDIRECTS + 1):
            response = client.send(client.build_request("GET", url), stream=True)
            if response.status_code not in _REDIRECTS:
                break
            location = response.headers.get("location", "")
            response.close()
            url = _redirect_target(url, location)
        else:
            raise IOFailure(f"download failed: more than {MAX_REDIRECTS} redirects: {original}")
        try:
            if response.status_code in _TRANSIENT_STATUS:
                raise _Transient(f"HTTP {response.status_code} {response.reason_phrase}")
            if response.status_code >= 400:
                raise IOFailure(
                    f"download failed: HTTP {response.status_code} {response.reason_phrase}: {url}"
                )
            content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
            if content_type in {"text/html", "application/xhtml+xml"}:
                raise BadInputError(f"not a CSV: the server sent {content_type}: {url}")
            declared = response.headers.get("content-length")
            total = int(declared) if declared and declared.isdigit() else None
            if total is not None and total > options.max_bytes:
                raise BadInputError(
                    f"download is {total} bytes, over the {options.max_bytes}-byte limit (--max-bytes): {url}"
                )
            body = bytearray()
            for chunk in response.iter_bytes(_CHUNK):
                body += chunk
                if len(body) > options.max_bytes:
                    raise BadInputError(
                        f"download exceeded the {options.max_bytes}-byte limit (--max-bytes): {url}"
                    )
                if time.monotonic() - started > options.attempt_deadline_s:
                    raise _Transient(f"took longer than {options.attempt_deadline_s:g} s")
                if progress is not None:
                    progress(len(body), total)
            if total is not None and len(body) != total:
                raise _Transient(f"truncated body ({len(body)} of {total} bytes)")
            return bytes(body)
        finally:
            response.close()
    except httpx.TimeoutException as exc:
        raise _Transient(f"timed out ({options.timeout_s:g} s)") from exc
    except httpx.RemoteProtocolError as exc:
        raise _Transient(f"connection broke off, body truncated ({_first_line(exc)})") from exc
    except httpx.UnsupportedProtocol as exc:
        raise IOFailure(f"download failed: unsupported URL: {url}") from exc
    except httpx.TransportError as exc:
        raise _Transient(f"network error ({_first_line(exc)})") from exc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
