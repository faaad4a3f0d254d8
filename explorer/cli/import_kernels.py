"""``import-kernels``: kernel sets (SPEC §4) from a folder, an archive, a URL or a GitHub
repository into the store, ready for ``bench --set SET_ID``."""

from __future__ import annotations

import argparse
from dataclasses import asdict

from cuda_l2_explorer.cli.bench import UNTRUSTED
from cuda_l2_explorer.cli.common import (
    add_download_options,
    add_format,
    download_options,
    feedback,
    say,
    store_path,
)
from cuda_l2_explorer.importer.set_limits import DEFAULT_DOWNLOAD_TIMEOUT_S, DEFAULT_MAX_DOWNLOAD

NAME = "import-kernels"
HELP = "store kernel sets (SPEC §4) from a folder, an archive, a URL or a GitHub repository"
SOURCES = """\
SOURCE is one of:
  a folder holding <device>_<ACC>/M_N_K.cu folders (at any depth), or one such folder
  https://github.com/OWNER/REPO                 the default branch (downloaded as GitHub's tarball)
  https://github.com/OWNER/REPO/tree/REF/PATH   a branch, tag or commit, and a folder in it
  https://HOST/PATH/set.tar.gz                  a tar (gz, bz2, xz) or zip archive; '#PATH' picks a folder
  ./set.tar.gz                                  the same, as a local file
An archive is unpacked once per content into $CUDA_L2_EXPLORER_SET_CACHE (default
~/.cache/cuda-l2-explorer/sets): regular files only, nothing outside that folder. Every set found
is stored as NAME/<device>_<ACC> with its folder; nothing is compiled or run until `bench`."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    p = parser
    p.description = f"{HELP}\n\n{SOURCES}\n\n{UNTRUSTED}"
    p.add_argument("source", metavar="SOURCE", help="folder, archive, archive URL or GitHub repository URL")
    p.add_argument(
        "--set-name",
        default=None,
        help="name to store the sets under (default: a GitHub repository's name, else the set "
        "folder's parent, else the archive's name)",
    )
    add_download_options(p, timeout_s=DEFAULT_DOWNLOAD_TIMEOUT_S, max_bytes=DEFAULT_MAX_DOWNLOAD)
    add_format(p)


def run(args: argparse.Namespace) -> int:
    from cuda_l2_explorer.cli.output import emit
    from cuda_l2_explorer.engine.imports import import_kernel_sets

    imported = import_kernel_sets(
        store_path(args), args.source, args.set_name, download_options(args), feedback(args)
    )
    for s in imported:
        say(args, f"stored {s.set_id}: {s.kernels} kernel file{'' if s.kernels == 1 else 's'} in {s.folder}")
    which = imported[0].set_id if len(imported) == 1 else "SET_ID"
    say(args, f"measure it with: cuda-l2-explorer bench --set {which} --grid --mode offline")
    if len(imported) > 1:
        say(args, "(SET_ID: the set above for your GPU and accumulator)")
    emit([{k: v for k, v in asdict(s).items() if k != "source"} for s in imported], args.fmt)
    return 0
