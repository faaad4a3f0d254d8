"""The worker protocol: one JSON object per line, each way.

Parent -> worker: a job ``{"op": <job kind>, "m", "n", "k", ...}`` (see ``plan.job_for``), or
``{"op": "exit"}``. Worker -> parent: ``hello`` once it has a GPU (or ``fatal`` when it cannot
start), then for each job any number of ``progress`` messages and one :class:`Result` or one
``error``. Every job kind answers with the same :class:`Result`; its rows and info are the job
kind's own (the runner hands them to the run's recorder).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, TextIO


@dataclass
class Result:
    """A job's answer: the config it was about, its rows, audit findings and details."""

    m: int
    n: int
    k: int
    rows: list[dict[str, Any]] = field(default_factory=list)
    audit: list = field(default_factory=list)  # (code, detail) pairs
    info: dict[str, Any] = field(default_factory=dict)

    def to_message(self) -> dict[str, Any]:
        return {
            "op": "result",
            "m": self.m,
            "n": self.n,
            "k": self.k,
            "rows": self.rows,
            "audit": self.audit,
            "info": self.info,
        }

    @classmethod
    def from_message(cls, message: dict[str, Any]) -> Result:
        return cls(
            message.get("m", 0),
            message.get("n", 0),
            message.get("k", 0),
            message.get("rows", []),
            message.get("audit", []),
            message.get("info", {}),
        )


def hello(info: dict[str, Any], pid: int) -> dict[str, Any]:
    return {"op": "hello", "info": info, "pid": pid}


def fatal(error: str) -> dict[str, Any]:
    return {"op": "fatal", "error": error}


def progress(job: dict[str, Any], phase: str) -> dict[str, Any]:
    return {"op": "progress", "m": job["m"], "n": job["n"], "k": job["k"], "phase": phase}


def error(job: dict[str, Any], status: str, message: str, traceback: str = "") -> dict[str, Any]:
    """A job that failed: ``status`` is 'crashed' (the CUDA context is gone) or 'error'."""
    return {
        "op": "error",
        "m": job["m"],
        "n": job["n"],
        "k": job["k"],
        "status": status,
        "message": message,
        "traceback": traceback,
    }


def send(channel: TextIO, message: dict[str, Any]) -> None:
    channel.write(json.dumps(message) + "\n")
    channel.flush()
