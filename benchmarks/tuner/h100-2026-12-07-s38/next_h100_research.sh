#!/usr/bin/env bash
# Planned in session 38 (issue 15), one call a part, on an H100, after next_h100_call1.sh's merges
# and grid: an H100 search of the configs outside the band whose H100 pick loses, with every kernel
# the library has now. The H100 set's picks date mostly from the 2026-11-22/24 searches (557 of
# 1000), before the wgmma family's wide, K = 2048 and four-stage tiles and the tiny family's
# tensor-fed kernels; session 38's band search found 47 of its 55 band merges ~4% faster than the
# H100 set's picks. Parts (research_h100_partN.txt, from call2/merged_manifest.json's figures):
#   1: tiny and small-K configs under 1.0 (83);  2: skinny under 1.0 (120);
#   3: large under 0.98 (126; their ceiling is ~1.02 from K = 1024 up, if the H200's holds here).
# Each: search (--limit 48, SEARCH_S), A/B against the set's picks (AB_S), merge into a copy of the
# set's manifest (search_ab_merge.sh); then here copy OUT/merged_manifest.json into kernels/ and
# measure it in a grid before it ships (tests/test_kernel_set.py).
#   run(command="bash benchmarks/tuner/h100-2026-12-07-s38/next_h100_research.sh 1", carry=[".whl", ".carry"])
set -u
part=${1:?part 1, 2 or 3}
S=benchmarks/tuner/h100-2026-12-07-s38
OUT=$OUT bash benchmarks/tuner/search_ab_merge.sh $S/research_h100_part$part.txt "--limit 48" \
  "${SEARCH_S:-240}" "${AB_S:-200}" kernels/h100_F32F16F16F32
