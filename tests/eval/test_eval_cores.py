"""``--workers auto``: the usable cores (affinity cut to the cgroup v2 and v1 CPU quotas, read
from fake cgroup trees: a pure v2 one and a hybrid v1+v2 one, both tested on any machine),
the rule that keeps a small eval in one process, and an auto eval's results equal to one
process's."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_eval_workers import TASKS, deterministic

from helpers import invoke
from reactloop.eval import EvalConfig, Rung, run_eval
from reactloop.eval.run import cores as cores_module
from reactloop.eval.run.cores import (
    CONCURRENCY_PER_WORKER,
    EPISODES_PER_WORKER,
    cgroup_quota,
    usable_cores,
    worker_count,
)
from reactloop.eval.run.oracle import OracleFactory

TEA = Path(__file__).resolve().parents[2] / "examples" / "tea" / "script.json"


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n", encoding="utf-8")


def pure_v2(root: Path, leaf: str, parent: str = "max 100000") -> Path:
    """A pure cgroup v2 tree (as on most current distributions), the process in /eval/job."""
    write(root / "cgroup.controllers", "cpuset cpu io memory pids")
    write(root / "eval" / "cpu.max", parent)
    write(root / "eval" / "job" / "cpu.max", leaf)
    proc = root.parent / "proc-cgroup"
    write(proc, "0::/eval/job")
    return proc


def hybrid(root: Path, quota: str, period: str = "100000", path: str = "/") -> Path:
    """A hybrid tree (as on this machine): v1 controllers, v2 in unified/ without cpu.max."""
    write(root / "unified" / "cgroup.controllers", "")
    write(root / "cpu,cpuacct" / "cpu.cfs_quota_us", quota)
    write(root / "cpu,cpuacct" / "cpu.cfs_period_us", period)
    write(root / "memory" / "memory.limit_in_bytes", "9223372036854771712")
    proc = root.parent / "proc-cgroup"
    write(proc, f"9:name=systemd:/\n4:memory:/x\n1:cpu,cpuacct:{path}\n0::/")
    return proc


def test_cgroup_v2_quota_is_the_tightest_on_the_way_to_the_root(tmp_path: Path) -> None:
    root = tmp_path / "cg"
    proc = pure_v2(root, leaf="max 100000", parent="150000 100000")
    assert cgroup_quota(root, proc) == 1.5  # the parent's, the leaf sets none
    proc = pure_v2(root, leaf="50000 100000", parent="150000 100000")
    assert cgroup_quota(root, proc) == 0.5
    assert usable_cores(root, proc) == 1  # half a core still runs one worker


def test_cgroup_v1_quota_in_a_hybrid_tree(tmp_path: Path) -> None:
    root = tmp_path / "cg"
    proc = hybrid(root, "250000")
    assert cgroup_quota(root, proc) == 2.5
    affinity = len(os.sched_getaffinity(0))
    assert usable_cores(root, proc) == min(affinity, 3)  # 2.5 cores: rounded up


def test_a_container_path_missing_under_the_mount_reads_the_mount_root(tmp_path: Path) -> None:
    root = tmp_path / "cg"
    proc = hybrid(root, "100000", path="/docker/0123abcd")  # no such folder: a cgroup namespace
    assert cgroup_quota(root, proc) == 1.0


@pytest.mark.parametrize(
    ("v1_quota", "v2_max", "expected"),
    [("-1", "max 100000", None), ("300000", "200000 100000", 2.0), ("-1", "bad", None)],
)
def test_both_hierarchies_are_read_and_no_quota_is_none(
    tmp_path: Path, v1_quota: str, v2_max: str, expected: float | None
) -> None:
    root = tmp_path / "cg"
    write(root / "cgroup.controllers", "cpu")
    write(root / "cpu.max", v2_max)
    write(root / "cpu" / "cpu.cfs_quota_us", v1_quota)
    write(root / "cpu" / "cpu.cfs_period_us", "100000")
    proc = tmp_path / "proc-cgroup"
    write(proc, "1:cpu:/\n0::/")
    assert cgroup_quota(root, proc) == expected
    assert cgroup_quota(tmp_path / "none", tmp_path / "none") is None  # no cgroups at all


def test_the_rule_never_runs_more_workers_than_the_eval_can_use() -> None:
    many, wide = 100 * EPISODES_PER_WORKER, 100 * CONCURRENCY_PER_WORKER
    assert worker_count(None, episodes=many, concurrency=wide, cores=8) == 8  # every core
    small = 2 * EPISODES_PER_WORKER - 1
    assert worker_count(None, episodes=small, concurrency=wide, cores=8) == 1
    assert worker_count(None, episodes=2 * EPISODES_PER_WORKER, concurrency=wide, cores=8) == 2
    narrow = 3 * CONCURRENCY_PER_WORKER
    assert worker_count(None, episodes=many, concurrency=narrow, cores=8) == 3
    assert worker_count(None, episodes=many, concurrency=4, cores=8) == 1  # the CLI's default
    assert worker_count(4, episodes=2, concurrency=64, cores=1) == 2  # asked: at most the work
    assert worker_count(1, episodes=many, concurrency=wide, cores=8) == 1


def test_auto_workers_take_the_cgroup_limited_count_with_one_process_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Eight cores of affinity, a v2 quota of three: three workers, one process's results."""
    root = tmp_path / "cg"
    monkeypatch.setattr(cores_module, "CGROUP_ROOT", root)
    monkeypatch.setattr(cores_module, "PROC_CGROUP", pure_v2(root, leaf="300000 100000"))
    monkeypatch.setattr(cores_module, "EPISODES_PER_WORKER", 2)
    monkeypatch.setattr(cores_module, "CONCURRENCY_PER_WORKER", 1)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)), raising=False)
    rung = Rung(label="o", spec="oracle", factory=OracleFactory(frozenset({("arith-02", 1)})))

    def config(out: str, workers: int | None) -> EvalConfig:
        return EvalConfig(
            suite="arithmetic",
            rungs=(rung,),
            out=tmp_path / out,
            repeats=2,
            tasks=TASKS,
            concurrency=4,
            workers=workers,
            fsync=False,
            report=False,
        )

    auto = run_eval(config("auto", None))
    one = run_eval(config("one", 1))
    assert (auto.workers, one.workers) == (3, 1)
    assert len(auto.records) == 8
    assert deterministic(auto.records) == deterministic(one.records)


def test_the_cli_takes_auto_or_a_count_and_the_progress_line_says_which(tmp_path: Path) -> None:
    args = ["--suite", "notes", "--model", f"scripted:{TEA}", "--protocol", "text"]
    code, _, stderr = invoke("eval", *args, "--out", str(tmp_path / "x"), "--workers", "0")
    assert code == 2 and "'0' is not auto or a count from 1 to 256" in stderr
    args += ["--limit", "2", "--repeats", "1"]
    code, _, stderr = invoke("eval", *args, "--out", str(tmp_path / "a"), "--progress")
    assert code == 0, stderr
    assert "eval · 1 process" in stderr  # two episodes: auto keeps them in this process
    code, _, stderr = invoke(
        "eval", *args, "--out", str(tmp_path / "b"), "--workers", "2", "--progress"
    )
    assert code == 0, stderr
    assert "eval · 2 workers" in stderr
