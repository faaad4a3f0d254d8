#!/usr/bin/env bash
# A device call sends the whole working tree, tracked files included, within 64 MiB with what it
# carries; the committed evidence archives (~32 MB of stores and logs under benchmarks/) leave too
# little room for duckdb (16 MB) and a library. No device script reads them, so they step aside
# for the call: `device_trim.sh out` moves every file over 200 KB under benchmarks/ that git tracks
# or would (a session's evidence not committed yet: it travels too), and the bundled dataset's
# search log (5.7 MB; the device runs read no bundled data: --no-bundled), to /tmp/l2x-trim (paths
# kept), `device_trim.sh back` restores them. Never commit between the two: `out` installs a
# pre-commit hook that refuses while the files are away (session 36 committed with -a between
# the two and dropped 124 evidence files from the tree). (Session 33's grid resume, carrying its
# store, was refused at 66 MB until the search log stepped aside.)
set -euo pipefail
cd "$(dirname "$0")/.."
AWAY=${L2X_TRIM_DIR:-/tmp/l2x-trim}
MARK=$(git rev-parse --git-path l2x-trimmed)
HOOK=$(git rev-parse --git-path hooks)/pre-commit
case "${1:-}" in
out)
  if [ ! -f "$HOOK" ]; then
    mkdir -p "$(dirname "$HOOK")"
    printf '%s\n' '#!/bin/sh' "# installed by benchmarks/device_trim.sh" \
      "[ -f \"$MARK\" ] || exit 0" \
      "echo \"device_trim.sh out is in effect (files in \$(cat \"$MARK\")): run device_trim.sh back first\" >&2" \
      'exit 1' >"$HOOK"
    chmod +x "$HOOK"
  fi
  echo "$AWAY" >"$MARK"
  { git ls-files -z benchmarks && git ls-files -z --others --exclude-standard benchmarks &&
    printf 'db/bundled/search_log.parquet\0'; } | while IFS= read -r -d '' f; do
    if [ -f "$f" ] && [ "$(stat -c %s "$f")" -gt 200000 ]; then
      mkdir -p "$AWAY/$(dirname "$f")" && mv "$f" "$AWAY/$f"
    fi
  done
  echo "moved $(find "$AWAY" -type f | wc -l) files to $AWAY"
  ;;
back)
  [ -d "$AWAY" ] || { rm -f "$MARK"; echo "nothing to restore"; exit 0; }
  (cd "$AWAY" && find . -type f -print0) | while IFS= read -r -d '' f; do
    mkdir -p "$(dirname "$f")" && mv "$AWAY/$f" "$f"
  done
  find "$AWAY" -depth -type d -empty -delete
  rm -f "$MARK"
  if git status --short benchmarks db | grep '^ D'; then echo "still missing (above)"; exit 1; fi
  echo "restored"
  ;;
*) echo "usage: $0 out|back" >&2; exit 2 ;;
esac
