"""Every write to the store outside the schema's migrations: one function per kind of record.

Callers above ``db`` never write SQL: they pass records here, inside ``Store.transaction()``.
"""

from __future__ import annotations

from dataclasses import dataclass

from cuda_l2_explorer.db.shapes import Shape
from cuda_l2_explorer.db.store import Store

# ---------------------------------------------------------------------------- kernel sets and kernels
# Callers: engine.bench (a SPEC section 4 set it built) and engine.library (our library's sets).


def upsert_kernel_set(
    store: Store,
    set_id: str,
    gpu: str,
    accumulator: str,
    origin: str,
    root: str,
    description: str | None = None,
) -> None:
    """A kernel set, named after ``set_id``'s first part; a set already stored keeps all but its folder."""
    store.con.execute(
        "INSERT INTO main.kernel_sets (set_id, name, gpu, accumulator, origin, root, description) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (set_id) DO UPDATE SET root = excluded.root",
        [set_id, set_id.split("/")[0], gpu, accumulator, origin, root, description],
    )


@dataclass(frozen=True)
class BuiltKernel:
    """A SPEC section 4 file of a set, with its source and how its build went."""

    set_id: str
    shape: Shape
    path: str
    source_sha256: str
    source: str
    pad: tuple[int | None, int | None, int | None] | None  # BM, BN, BK of the padding rule
    build_ok: bool
    build_log: str


def upsert_built_kernel(store: Store, kernel: BuiltKernel) -> None:
    """A fixed-shape kernel of a set; a stored one gets the new path, source and build outcome."""
    s = kernel.shape
    store.con.execute(
        "INSERT INTO main.kernels (kernel_id, set_id, m, n, k, path, source_sha256, source, pad_bm, "
        "pad_bn, pad_bk, runtime_shapes, build_status, build_log) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, false, ?, ?) "
        "ON CONFLICT (kernel_id) DO UPDATE SET path = excluded.path, "
        "source_sha256 = excluded.source_sha256, "
        "source = excluded.source, build_status = excluded.build_status, "
        "build_log = excluded.build_log",
        [
            f"{kernel.set_id}:{s}",
            kernel.set_id,
            s.m,
            s.n,
            s.k,
            kernel.path,
            kernel.source_sha256,
            kernel.source,
            *(kernel.pad or (None, None, None)),
            "ok" if kernel.build_ok else "compile_error",
            kernel.build_log,
        ],
    )


def upsert_library_kernel(
    store: Store, set_id: str, shape: Shape, path: str, family: str, params: str
) -> None:
    """A runtime-shape kernel of our library, stored as its parameters (JSON) rather than a source."""
    store.con.execute(
        "INSERT INTO main.kernels (kernel_id, set_id, m, n, k, path, runtime_shapes, family, params) "
        "VALUES (?, ?, ?, ?, ?, ?, true, ?, ?) ON CONFLICT (kernel_id) DO UPDATE SET "
        "path = excluded.path, family = excluded.family, params = excluded.params",
        [f"{set_id}:{shape}", set_id, shape.m, shape.n, shape.k, path, family, params],
    )
