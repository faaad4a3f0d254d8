"""URL imports against a real HTTP server on loopback, started by the test."""

import time
from http.server import BaseHTTPRequestHandler
from typing import ClassVar

import pytest
from conftest import OFFLINE, SERVER, loopback_server
from cuda_l2_explorer.db.store import Store
from cuda_l2_explorer.importer.published import UPSTREAM_FILES

BODY = OFFLINE.read_bytes()
NAME = OFFLINE.name


class _Handler(BaseHTTPRequestHandler):
    hits: ClassVar[dict[str, int]] = {}

    def log_message(self, *args):  # keep pytest output clean
        pass

    def _send(self, status, body=b"", ctype="text/csv", length=None):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body) if length is None else length))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        route, _, name = self.path.lstrip("/").partition("/")
        self.hits[route] = self.hits.get(route, 0) + 1
        if route == "ok":
            self._send(200, SERVER.read_bytes() if "server" in name else BODY)
        elif route == "upstream" and name in UPSTREAM_FILES:
            self._send(200, SERVER.read_bytes() if "server" in name else BODY)
        elif route == "slow":
            time.sleep(2.0)
            self._send(200, BODY)
        elif route == "truncated":
            self._send(200, BODY[:200], length=len(BODY))
            self.close_connection = True
        elif route == "huge-declared":
            self._send(200, BODY[:100], length=500 * 1024 * 1024)
            self.close_connection = True
        elif route == "huge-streamed":
            # No Content-Length: the limit must trip while streaming.
            self.send_response(200)
            self.send_header("Content-Type", "text/csv")
            self.send_header("Connection", "close")
            self.end_headers()
            for _ in range(64):
                self.wfile.write(b"x" * 65536)
            self.close_connection = True
        elif route == "flaky":
            if self.hits[route] == 1:
                self._send(503, b"try later", ctype="text/plain")
            else:
                self._send(200, BODY)
        elif route == "html":
            self._send(200, b"<html>login</html>", ctype="text/html; charset=utf-8")
        elif route == "offsite":
            self.send_response(302)
            self.send_header("Location", f"http://localhost:{self.server.server_address[1]}/ok/{name}")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif route == "loop":
            self.send_response(302)
            self.send_header("Location", f"/loop/{name}")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif route == "redirect":
            self.send_response(302)
            self.send_header("Location", f"/ok/{name}")
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self._send(404, b"not found", ctype="text/plain")


@pytest.fixture
def server():
    _Handler.hits = {}
    with loopback_server(_Handler) as url:
        yield url


def test_200_imports(cli, db_path, server):
    result = cli("--db", db_path, "import-results", f"{server}/ok/{NAME}", "--json")
    assert result.code == 0, result.err
    assert result.json()[0]["configs"] == 8
    with Store.open(db_path, read_only=True) as store:
        assert store.scalar("SELECT source FROM all_runs") == f"{server}/ok/{NAME}"


def test_redirect_is_followed(cli, db_path, server):
    assert cli("--db", db_path, "import-results", f"{server}/redirect/{NAME}").code == 0


def _fails(cli, db_path, url, code, words, *extra):
    result = cli("--db", db_path, "import-results", url, *extra)
    assert result.code == code, result.err
    assert len(result.err.strip().splitlines()) == 1, result.err
    for word in words:
        assert word in result.err
    assert not db_path.exists()  # validation failed before the store was opened
    return result


def test_404_is_one_line_and_not_retried(cli, db_path, server):
    _fails(cli, db_path, f"{server}/nowhere/{NAME}", 5, ["404"])
    assert _Handler.hits["nowhere"] == 1


def test_slow_server_times_out(cli, db_path, server):
    started = time.monotonic()
    _fails(cli, db_path, f"{server}/slow/{NAME}", 5, ["timed out"], "--timeout", "0.3", "--retries", "1")
    assert time.monotonic() - started < 6
    assert _Handler.hits["slow"] == 2


def test_truncated_body_is_retried_then_reported(cli, db_path, server):
    _fails(cli, db_path, f"{server}/truncated/{NAME}", 5, ["truncat"], "--retries", "2")
    assert _Handler.hits["truncated"] == 3


def test_huge_declared_body_is_refused_at_once(cli, db_path, server):
    _fails(cli, db_path, f"{server}/huge-declared/{NAME}", 3, ["limit"])
    assert _Handler.hits["huge-declared"] == 1


def test_huge_streamed_body_trips_the_limit(cli, db_path, server):
    _fails(cli, db_path, f"{server}/huge-streamed/{NAME}", 3, ["limit"], "--max-bytes", "100000")


def test_transient_503_is_retried(cli, db_path, server):
    result = cli("--db", db_path, "import-results", f"{server}/flaky/{NAME}")
    assert result.code == 0, result.err
    assert _Handler.hits["flaky"] == 2


def test_html_is_not_a_csv(cli, db_path, server):
    _fails(cli, db_path, f"{server}/html/{NAME}", 3, ["not a CSV"])


def test_refused_connection(cli, db_path):
    _fails(cli, db_path, f"http://127.0.0.1:9/{NAME}", 5, ["network error"], "--retries", "0")


def test_upstream_imports_every_published_file(cli, db_path, server):
    result = cli(
        "--db", db_path, "import-results", "--upstream", "--upstream-base", f"{server}/upstream/", "--json"
    )
    assert result.code == 0, result.err
    imported = result.json()
    assert len(imported) == len(UPSTREAM_FILES) == 8
    assert {(r["gpu"], r["accumulator"], r["mode"]) for r in imported} >= {
        ("a100", "F16F16F16F16", "offline"),
        ("h100", "F32F16F16F32", "server"),
    }
    with Store.open(db_path, read_only=True) as store:
        assert store.scalar("SELECT count(*) FROM all_kernel_sets") == 4
        assert store.scalar("SELECT count(*) FROM all_runs") == 8


def test_upstream_with_one_missing_file_writes_nothing(cli, db_path, server):
    # Base points where only /ok/ files exist under other names: every upstream name 404s.
    result = cli("--db", db_path, "import-results", "--upstream", "--upstream-base", f"{server}/nothing")
    assert result.code == 5
    assert not db_path.exists()


def test_progress_bar_draws_on_stderr(capsys):
    from cuda_l2_explorer.cli.progress import ProgressBar

    bar = ProgressBar("downloading x", enabled=True)
    bar.bytes(2_000_000, 4_000_000)
    bar.bytes(4_000_000, 4_000_000)
    bar.close()
    err = capsys.readouterr().err
    assert "downloading x" in err and "4.0/4.0 MB" in err and err.endswith("\n")


def test_redirect_to_another_host_is_refused(cli, db_path, server):
    _fails(cli, db_path, f"{server}/offsite/{NAME}", 5, ["another host", "localhost"])
    assert "ok" not in _Handler.hits


def test_redirect_loop_is_refused(cli, db_path, server):
    _fails(cli, db_path, f"{server}/loop/{NAME}", 5, ["redirects"])
    assert _Handler.hits["loop"] == 6
