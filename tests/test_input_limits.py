"""Inputs that a size from stat or a per-read timeout cannot hold (issue 19 items 2-4): a device
that never ends, a pipe longer than the limit, a FIFO nobody writes to, a server that trickles
its body or its headers, and a gzip body whose Content-Length counts the compressed bytes."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler

import pytest
from conftest import OFFLINE, loopback_server
from cuda_l2_explorer.db.store import Store

LABELS = ["--gpu", "h100", "--accumulator", "F32F16F16F32", "--mode", "offline"]
TRICKLE_FOR_S = 8.0  # a trickling server gives up after this, so an unfixed client fails, not hangs


def _one_line(result, code: int, *words: str) -> None:
    assert result.code == code, (result.code, result.err)
    assert len(result.err.strip().splitlines()) == 1, result.err
    for word in words:
        assert word in result.err, result.err


# ------------------------------------------------------------------------------ local inputs


def test_a_device_without_end_is_cut_at_the_limit(cli, db_path):
    started = time.monotonic()
    result = cli("--db", db_path, "import-results", "/dev/zero", *LABELS, "--max-bytes", "1000000")
    _one_line(result, 3, "limit")
    assert time.monotonic() - started < 10
    assert not db_path.exists()


def test_a_pipe_longer_than_the_limit_is_cut_at_the_limit(db_path):
    """200 MB through a pipe: stat says 0 bytes, so only a capped read stops it at 64 MiB."""
    script = (
        f"yes 'x' | head -c 200000000 | {sys.executable} -m cuda_l2_explorer --db {db_path} "
        f"import-results /dev/stdin {' '.join(LABELS)}"
    )
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 3, done.stderr
    assert "67108864-byte limit" in done.stderr


def test_a_fifo_without_writer_times_out(tmp_path, db_path):
    fifo = tmp_path / "input.csv"
    os.mkfifo(fifo)
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "cuda_l2_explorer", "--db", str(db_path), "import-results", str(fifo),
         *LABELS, "--timeout", "0.5"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 5, done.stderr
    assert "took longer than 0.5 s" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert time.monotonic() - started < 30


def test_a_fifo_with_a_late_writer_is_read(cli, tmp_path, db_path):
    """Pipes stay usable: a writer that opens the FIFO after the reader is waited for."""
    fifo = tmp_path / "input.csv"
    os.mkfifo(fifo)

    def write_later() -> None:
        time.sleep(0.3)
        with open(fifo, "wb") as fh:
            fh.write(OFFLINE.read_bytes())

    writer = threading.Thread(target=write_later)
    writer.start()
    result = cli("--db", db_path, "import-results", fifo, *LABELS, "--timeout", "20", "--json")
    writer.join()
    assert result.code == 0, result.err
    assert result.json()[0]["configs"] == 8


def test_a_directory_is_an_io_failure(cli, tmp_path, db_path):
    _one_line(cli("--db", db_path, "import-results", tmp_path, *LABELS), 5, "directory")


def test_a_fifo_as_a_kernel_manifest_is_refused_at_once(tmp_path):
    """`export --manifest` reads a local file too: a FIFO there used to block for ever."""
    fifo = tmp_path / "manifest.json"
    os.mkfifo(fifo)
    done = subprocess.run(
        [sys.executable, "-m", "cuda_l2_explorer", "--db", str(tmp_path / "s.duckdb"), "export", "64", "64",
         "64", "--format", "cuda-l2", "--out", str(tmp_path / "out"), "--manifest", str(fifo)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 5, done.stderr
    assert "not a regular file" in done.stderr and not (tmp_path / "out").exists()


# ------------------------------------------------------------------------------ URLs

GZIPPED = gzip.compress(OFFLINE.read_bytes())
BOMB = gzip.compress(b"0" * 4_000_000)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _trickle(self, data: bytes, every_s: float) -> None:
        ends = time.monotonic() + TRICKLE_FOR_S
        for byte in data:
            if time.monotonic() > ends:
                return
            self.wfile.write(bytes([byte]))
            self.wfile.flush()
            time.sleep(every_s)

    def do_GET(self):
        route = self.path.strip("/").split("/")[0]
        body = OFFLINE.read_bytes()
        if route == "trickle-body":
            self.send_response(200)
            self.send_header("Content-Type", "text/csv")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self._trickle(body, 0.02)
        elif route == "trickle-headers":
            self.wfile.write(b"HTTP/1.1 200 OK\r\n")
            self._trickle(b"X-Slow: " + b"a" * 10_000 + b"\r\n\r\n", 0.02)
        elif route in ("gzip", "bomb"):
            data = GZIPPED if route == "gzip" else BOMB
            self.send_response(200)
            self.send_header("Content-Type", "text/csv")
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        self.close_connection = True


@pytest.fixture
def server():
    with loopback_server(_Handler) as url:
        yield url


@pytest.mark.parametrize("route", ["trickle-body", "trickle-headers"])
def test_one_deadline_per_attempt_holds_against_a_trickling_server(cli, db_path, server, route):
    """A byte every 20 ms keeps each read far under any read timeout; the attempt still ends at
    --timeout, and each retry gets its own."""
    started = time.monotonic()
    result = cli(
        "--db", db_path, "import-results", f"{server}/{route}/{OFFLINE.name}",
        "--timeout", "0.6", "--retries", "1",
    )  # fmt: skip
    elapsed = time.monotonic() - started
    _one_line(result, 5, "timed out", "0.6 s", "2 tries")
    assert elapsed < 1.2 + 0.5 + 3, elapsed  # two attempts, the backoff, and slack for a slow machine
    assert not db_path.exists()


def test_a_gzip_body_with_a_content_length_is_accepted(cli, db_path, server):
    """Content-Length counts the compressed bytes on the wire, not the decoded ones."""
    result = cli("--db", db_path, "import-results", f"{server}/gzip/{OFFLINE.name}", "--json")
    assert result.code == 0, result.err
    assert result.json()[0]["configs"] == 8
    with Store.open(db_path, read_only=True, with_bundled=False) as store:
        assert store.scalar("SELECT count(*) FROM all_published_speedups") == 80


def test_the_limit_is_on_the_decoded_body(cli, db_path, server):
    """A 4 KB gzip body that decodes to 4 MB trips a 1 MB limit: the cap is on what is kept."""
    result = cli("--db", db_path, "import-results", f"{server}/bomb/{OFFLINE.name}", "--max-bytes", "1000000")
    _one_line(result, 3, "limit")
