"""An area too slow to mutate whole runs a seeded sample of its mutants, and the kill rate
comes with the interval that sample size allows."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from cosmic_ray import work_db
from cosmic_ray import work_item as item

from bench.mutation import _parser, sample_work, wilson_interval


def _session(path: Path, mutants: int, skipped: int) -> None:
    with work_db.use_db(str(path)) as db:
        for n in range(mutants):
            spec = item.MutationSpec(
                module_path="m.py", operator_name="core/NumberReplacer", occurrence=n,
                start_pos=(n + 1, 0), end_pos=(n + 1, 1),
            )  # fmt: skip
            db.add_work_item(item.WorkItem.single(f"job-{n:03}", spec))
        for n in range(skipped):  # what cr-filter-operators marks
            db.set_result(f"job-{n:03}", item.WorkResult(worker_outcome="skipped"))


def _pending(path: Path) -> list[str]:
    with sqlite3.connect(path) as db:
        rows = db.execute(
            "SELECT job_id FROM work_items WHERE job_id NOT IN (SELECT job_id FROM work_results)"
        )
        return sorted(row[0] for row in rows)


def test_a_sample_keeps_that_many_mutants_to_run_and_the_same_seed_draws_the_same(
    tmp_path: Path,
) -> None:
    first, again, other = tmp_path / "a.sqlite", tmp_path / "b.sqlite", tmp_path / "c.sqlite"
    for path in (first, again, other):
        _session(path, mutants=40, skipped=10)
    assert sample_work(first, 12, seed=7) == 30  # the filtered ones are not drawn
    sample_work(again, 12, seed=7)
    sample_work(other, 12, seed=8)
    assert len(_pending(first)) == 12
    assert _pending(first) == _pending(again) != _pending(other)
    assert not set(_pending(first)) & {f"job-{n:03}" for n in range(10)}


def test_a_sample_as_big_as_the_area_runs_everything(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    _session(path, mutants=5, skipped=0)
    assert sample_work(path, 50, seed=0) == 5
    assert len(_pending(path)) == 5


def test_the_interval_narrows_with_the_sample_and_holds_the_rate() -> None:
    small, large = wilson_interval(27, 30), wilson_interval(270, 300)
    assert small[0] < large[0] < 0.9 < large[1] < small[1]
    assert wilson_interval(30, 30)[1] == 1.0 and wilson_interval(30, 30)[0] > 0.85
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_sample_and_seed_take_whole_numbers_and_say_so(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = _parser().parse_args(["batch", "--sample", "60", "--seed", "3"])
    assert (args.areas, args.sample, args.seed) == (["batch"], 60, 3)
    args = _parser().parse_args(["sessions"])
    assert (args.areas, args.sample, args.seed) == (["sessions"], None, 0)
    for bad, least in ((["--sample", "0"], 1), (["--seed", "x"], 0)):
        with pytest.raises(SystemExit):
            _parser().parse_args(bad)
        assert f"a whole number of {least} or more" in capsys.readouterr().err


def test_only_survivors_judged_equivalent_or_unreachable_leave_the_kill_rate() -> None:
    from bench.mutation import JUDGED, is_equivalent

    for survivor, why in JUDGED.items():  # every judgement says which of the three it is
        assert why.startswith(("equivalent", "unreachable", "harmless")), survivor
        assert is_equivalent(survivor) == (not why.startswith("harmless")), survivor
    assert not is_equivalent("providers/retry.py:1 NotJudgedYet")
