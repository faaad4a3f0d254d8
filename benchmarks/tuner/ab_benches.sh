# Sourced by ab_picks.sh and lib_ab.sh: their four benches, old, new, old, new, in one store
# (harness 3: graph replay, cold L2), on the GPU machine (the wheel installed in $PYTHONPATH).
# The runs are named oldpicks and newpicks, so `h100-2026-11-24-s12/picks_ab.py STORE` makes the
# table; a drift between the two rounds shows as old-old or new-new spread.
#   ab_benches OUT_DIR SECONDS CONFIGS BASELINES OLD_SET OLD_LIBRARY NEW_SET NEW_LIBRARY
# OUT_DIR gets picks.duckdb, picks.json, picks.log, device.txt; SECONDS: the four benches in all.
ab_benches() {
  local out=$1 seconds=$2 configs=$3 baselines=$4 old_set=$5 old_lib=$6 new_set=$7 new_lib=$8
  local each=$((seconds / 4)) start=$SECONDS which set lib
  for which in oldpicks newpicks oldpicks newpicks; do
    [ $each -lt 15 ] && break
    if [ $which = oldpicks ]; then set=$old_set lib=$old_lib; else set=$new_set lib=$new_lib; fi
    python3 -m cuda_l2_explorer --no-bundled bench --db "$out/picks.duckdb" --library "$lib" --progress none --json \
      --set "$set" --set-name $which --mnk "$configs" --time-budget $each --baselines "$baselines" \
      >>"$out/picks.json" 2>>"$out/picks.log"
    local rc=$?  # before the echo's $(basename): a command substitution resets $?
    echo "$which ($(basename "$lib")): exit $rc at $((SECONDS - start)) s" | tee -a "$out/device.txt"
  done
}
