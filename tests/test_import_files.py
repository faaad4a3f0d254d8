"""Published CSV import from files: values, idempotence, replacement, and every malformed input."""

import hashlib

import pytest
from conftest import OFFLINE, SERVER, copy_as, read_fixture
from cuda_l2_explorer.db.store import Store

NAME = "cuda_l2_h100_F32F16F16F32_speedup_offline.csv"
HEADER = OFFLINE.read_text().splitlines()[0]
GOOD_ROW = "64_64_64,1,1,1,1,1,1,1,1,1,1"


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_import_stores_every_cell(cli, loaded_db):
    expected = read_fixture(OFFLINE)
    with Store.open(loaded_db, read_only=True) as store:
        rows = store.query(
            "SELECT m, n, k, baseline, speedup FROM all_published_speedups WHERE mode = 'offline'"
        )
        sets = store.query("SELECT set_id, name, gpu, accumulator, origin FROM all_kernel_sets")
        runs = store.query(
            "SELECT kind, mode, source, source_sha256, command_line FROM all_runs ORDER BY mode"
        )
    assert rows.height == len(expected) * 10
    for r in rows.iter_rows(named=True):
        assert r["speedup"] == pytest.approx(expected[(r["m"], r["n"], r["k"])][r["baseline"]])
    assert sets.to_dicts() == [
        {
            "set_id": "cuda-l2/h100_F32F16F16F32",
            "name": "cuda-l2",
            "gpu": "h100",
            "accumulator": "F32F16F16F32",
            "origin": "published",
        }
    ]
    assert runs["mode"].to_list() == ["offline", "server"]
    assert runs["source_sha256"][0] == digest(OFFLINE)
    assert "import-results" in runs["command_line"][0]


def test_reimport_is_idempotent_and_new_content_replaces(cli, loaded_db, tmp_path):
    again = cli("--db", loaded_db, "import-results", OFFLINE, "--json")
    assert again.code == 0
    assert again.json()[0]["action"] == "unchanged"
    changed = copy_as(OFFLINE, tmp_path, NAME)
    changed.write_text(changed.read_text().replace("64_64_64,2.000", "64_64_64,2.500"))
    result = cli("--db", loaded_db, "import-results", changed, "--json")
    assert result.code == 0 and result.json()[0]["action"] == "replaced"
    with Store.open(loaded_db, read_only=True) as store:
        assert store.scalar("SELECT count(*) FROM all_runs WHERE mode = 'offline'") == 1
        assert store.scalar("SELECT count(*) FROM all_published_speedups WHERE mode = 'offline'") == 80
        assert store.scalar(
            "SELECT speedup FROM all_published_speedups WHERE mode='offline' AND m=64 AND n=64 AND k=64 "
            "AND baseline='torch.matmul'"
        ) == pytest.approx(2.5)


def test_labels_from_flags_when_the_name_says_nothing(cli, db_path, tmp_path):
    plain = copy_as(OFFLINE, tmp_path, "results.csv")
    missing = cli("--db", db_path, "import-results", plain)
    assert missing.code == 2 and "--gpu" in missing.err and len(missing.err.strip().splitlines()) == 1
    ok = cli(
        "--db",
        db_path,
        "import-results",
        plain,
        "--gpu",
        "H200",
        "--accumulator",
        "F16F16F16F16",
        "--mode",
        "server",
        "--set-name",
        "mine",
        "--json",
    )
    assert ok.code == 0, ok.err
    assert ok.json()[0]["set_id"] == "mine/h200_F16F16F16F16"
    assert ok.json()[0]["mode"] == "server"


MALFORMED = {
    "missing column": HEADER.rsplit(",", 1)[0] + "\n" + GOOD_ROW.rsplit(",", 1)[0] + "\n",
    "extra column": HEADER + ",bonus\n" + GOOD_ROW + ",1\n",
    "non-numeric cell": HEADER + "\n" + GOOD_ROW.replace(",1,1,1,1,1", ",1,abc,1,1,1", 1) + "\n",
    "negative cell": HEADER + "\n" + GOOD_ROW.replace(",1,1,1,1,1", ",1,-1.2,1,1,1", 1) + "\n",
    "zero cell": HEADER + "\n" + GOOD_ROW.replace(",1,1,1,1,1", ",1,0,1,1,1", 1) + "\n",
    "nan cell": HEADER + "\n" + GOOD_ROW.replace(",1,1,1,1,1", ",1,nan,1,1,1", 1) + "\n",
    "infinite cell": HEADER + "\n" + GOOD_ROW.replace(",1,1,1,1,1", ",1,inf,1,1,1", 1) + "\n",
    "duplicate shapes": HEADER + "\n" + GOOD_ROW + "\n" + GOOD_ROW + "\n",
    "wrong mnk separator": HEADER + "\n" + GOOD_ROW.replace("64_64_64", "64x64x64") + "\n",
    "zero dimension": HEADER + "\n" + GOOD_ROW.replace("64_64_64", "0_64_64") + "\n",
    "two dimensions": HEADER + "\n" + GOOD_ROW.replace("64_64_64", "64_64") + "\n",
    "short row": HEADER + "\n" + GOOD_ROW.rsplit(",", 2)[0] + "\n",
    "empty file": "",
    "whitespace only": "\n \n",
    "header only": HEADER + "\n",
    "not a csv at all": "<html><body>Not found</body></html>\n",
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_csv_is_refused_and_store_unchanged(cli, loaded_db, tmp_path, case):
    bad = tmp_path / NAME
    bad.write_text(MALFORMED[case])
    before = digest(loaded_db)
    result = cli("--db", loaded_db, "import-results", bad)
    assert result.code == 3, (case, result.err)
    assert result.out == ""
    assert len(result.err.strip().splitlines()) == 1, result.err
    assert digest(loaded_db) == before


def test_binary_file_is_refused(cli, loaded_db, tmp_path):
    bad = tmp_path / NAME
    bad.write_bytes(bytes(range(256)) * 64)
    before = digest(loaded_db)
    result = cli("--db", loaded_db, "import-results", bad)
    assert result.code == 3 and "binary" in result.err
    assert digest(loaded_db) == before


def test_one_bad_file_means_nothing_is_written(cli, db_path, tmp_path):
    bad = tmp_path / "cuda_l2_a100_F32F16F16F32_speedup_offline.csv"
    bad.write_text(MALFORMED["negative cell"])
    result = cli("--db", db_path, "import-results", OFFLINE, SERVER, bad)
    assert result.code == 3
    with Store.open(db_path, read_only=True) as store:
        assert store.scalar("SELECT count(*) FROM all_published_speedups") == 0


def test_missing_file_and_directory(cli, db_path, tmp_path):
    result = cli(
        "--db", db_path, "import-results", tmp_path / "cuda_l2_h100_F32F16F16F32_speedup_offline.csv"
    )
    assert result.code == 5 and "no such file" in result.err
    result = cli(
        "--db",
        db_path,
        "import-results",
        tmp_path,
        "--gpu",
        "h100",
        "--accumulator",
        "F32F16F16F32",
        "--mode",
        "offline",
    )
    assert result.code == 5


def test_size_limit_applies_to_files(cli, db_path):
    result = cli("--db", db_path, "import-results", OFFLINE, "--max-bytes", "100")
    assert result.code == 3 and "limit" in result.err


def test_inconsistent_max_column_is_imported_with_a_warning(cli, db_path, tmp_path):
    odd = tmp_path / NAME
    odd.write_text(HEADER + "\n" + "64_64_64,1,1.2,1.3,1.5,1,1,1,1,1,1\n")
    result = cli("--db", db_path, "import-results", odd)
    assert result.code == 0
    assert "warning" in result.err and "-max" in result.err
