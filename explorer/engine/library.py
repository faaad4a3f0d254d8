"""Our kernel library as a kernel set: where the compiled library is, its manifest's configs as
harness kernels, and the set's record in the store (``tune`` and ``bench`` of a manifest set)."""

from __future__ import annotations

import json
from pathlib import Path

from cuda_l2_explorer.db import writes
from cuda_l2_explorer.db.errors import NotFoundError
from cuda_l2_explorer.db.shapes import Shape
from cuda_l2_explorer.db.store import Store


def library_path(library: str | None) -> Path:
    """The compiled kernel library: ``library`` if given, else the latest tuner build."""
    from cuda_l2_explorer.tuner.native import default_library

    lib = Path(library).expanduser() if library else default_library()
    if lib is None or not lib.is_file():
        raise NotFoundError(
            "no kernel library: build one with `python -m cuda_l2_explorer.tuner.build` or pass --library / "
            "set CUDA_L2_EXPLORER_TUNER_LIB"
        )
    return lib


def library_entries(manifest: dict, library: Path, shapes: list[Shape] | None = None) -> dict:
    """A KernelEntry per manifest config (run through the compiled library by the tuner's worker)."""
    from cuda_l2_explorer.importer.harness.plan import KernelEntry

    wanted = set(shapes) if shapes is not None else None
    out = {}
    for e in manifest["configs"]:
        shape = Shape(e["m"], e["n"], e["k"])
        if wanted is None or shape in wanted:
            out[shape] = KernelEntry(
                library={"path": str(library), "kernel": e["kernel_name"], "variant": e["variant"]}
            )
    return out


def record_set(store_path: Path | None, root: Path, manifest: dict, library: Path) -> str:
    """The manifest's configs as a kernel set of ours in the store (one transaction)."""
    # The repository's own set (kernels/<device>_<ACC>) is "ours"; a user's tuned set keeps its folder's name.
    parent = root.parent.name or "tuned"
    set_id = f"{'ours' if parent == 'kernels' else parent}/{root.name}"
    with Store.open(store_path, with_bundled=False, views=False) as store, store.transaction():
        writes.upsert_kernel_set(
            store,
            set_id,
            manifest["device"],
            manifest["accumulator"],
            "ours",
            str(root),
            description=f"tuned with {library.name}",
        )
        for e in manifest["configs"]:
            params = {"kernel": e["kernel"], "variant": e["variant"], "kernel_name": e["kernel_name"]}
            if "derived_from" in e:  # the search's pick with another epilogue, taken by an A/B
                params["derived_from"] = e["derived_from"]
            shape = Shape(e["m"], e["n"], e["k"])
            writes.upsert_library_kernel(
                store, set_id, shape, str(root / f"{shape}.cu"), e["kernel"]["family"], json.dumps(params)
            )
    return set_id
