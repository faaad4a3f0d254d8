"""Derived views are deterministic: when two layouts of a baseline tie on the median, the spread
of the '-max' (and best-baseline) row comes from the same one every time."""

from cuda_l2_explorer.db.store import Store


def _run_with_tied_layouts(store: Store) -> None:
    store.con.execute("INSERT INTO gpus (gpu, name) VALUES ('h100', 'NVIDIA H100')")
    store.con.execute(
        "INSERT INTO kernel_sets (set_id, name, gpu, accumulator, origin) "
        "VALUES ('ours/h100_F32F16F16F32', 'ours', 'h100', 'F32F16F16F32', 'ours')"
    )
    store.con.execute(
        "INSERT INTO runs (run_id, kind, set_id, gpu, mode, status, tool_version) "
        "VALUES ('r', 'bench', 'ours/h100_F32F16F16F32', 'h100', 'offline', 'complete', 't')"
    )
    rows = [  # implementation, median, p10, p90: nn and tn tie on the median, not on the spread
        ("kernel", 10e-6, 9.8e-6, 10.2e-6),
        ("cuBLAS-nn", 10.5e-6, 9.0e-6, 12.0e-6),  # nn's spread overlaps the kernel's -> 'same'
        ("cuBLAS-tn", 10.5e-6, 10.4e-6, 10.6e-6),  # tn's spread: outside the kernel's -> a win
        # (in this insertion order an unordered pick took tn's spread and said 'win')
    ]
    store.insert_rows(
        "measurements",
        ("run_id", "m", "n", "k", "implementation", "metric", "unit", "median", "p10", "p90", "status"),
        [("r", 64, 64, 64, name, "device_time", "s", med, p10, p90, "ok") for name, med, p10, p90 in rows],
    )


def test_tied_layouts_give_the_same_outcome_every_time(db_path) -> None:
    with Store.open(db_path, with_bundled=False) as store:
        with store.transaction():
            _run_with_tied_layouts(store)
        outcomes = {
            store.scalar("SELECT outcome FROM speedups WHERE baseline = 'cuBLAS-max'") for _ in range(20)
        }
    # Ties are broken by the implementation's name: 'cuBLAS-nn' sorts first, its spread decides.
    assert outcomes == {"same"}
