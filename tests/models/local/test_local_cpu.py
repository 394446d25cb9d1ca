"""The AMX switch: which CPUs load llama.cpp with its extra buffer types, and why.

Plain functions over /proc/cpuinfo texts written here, so they run on any machine: an Intel CPU
with AMX, an AMD or Intel without, an ARM CPU (no ``flags`` line) and an unreadable file.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reactloop.errors import UsageError
from reactloop.models.local.cpu import (
    AMX_FLAGS,
    SETTING_ENV,
    extra_buffer_types_allowed,
    extra_buffer_types_choice,
    features_line,
    read_cpu_flags,
)

AMX_CPU = "processor\t: 0\nflags\t\t: fpu avx avx2 avx512f amx_tile amx_int8 amx_bf16\n"
AVX512_CPU = "processor\t: 0\nflags\t\t: fpu avx avx2 avx512f avx512_vnni\n"
ARM_CPU = "processor\t: 0\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32\n"


@pytest.fixture(autouse=True)
def _no_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SETTING_ENV, raising=False)


def _cpuinfo(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cpuinfo"
    path.write_text(text)
    return path


def test_amx_turns_them_off_and_other_cpus_keep_them(tmp_path: Path) -> None:
    assert extra_buffer_types_allowed(cpuinfo=_cpuinfo(tmp_path, AMX_CPU)) is False
    assert extra_buffer_types_allowed(cpuinfo=_cpuinfo(tmp_path, AVX512_CPU)) is True
    assert extra_buffer_types_allowed("auto", AMX_FLAGS) is False
    # A wheel built on an AMX machine has the AMX kernel in, whatever this CPU is.
    assert extra_buffer_types_allowed("auto", frozenset({"avx2"}), built_with_amx=True) is False


@pytest.mark.parametrize("unreadable", ["missing", "a-directory"])
def test_an_unreadable_cpuinfo_turns_them_off(tmp_path: Path, unreadable: str) -> None:
    path = tmp_path / unreadable
    if unreadable == "a-directory":
        path.mkdir()
    assert read_cpu_flags(path, machine="x86_64") is None
    on, why = extra_buffer_types_choice(cpuinfo=path, machine="x86_64")
    assert on is False and "cannot be read" in why
    assert features_line(None).startswith("(unknown")


def test_an_x86_cpuinfo_without_flags_is_unknown_and_arm_has_no_amx(tmp_path: Path) -> None:
    arm = _cpuinfo(tmp_path, ARM_CPU)
    assert read_cpu_flags(arm, machine="x86_64") is None  # x86 always lists flags: unknown
    assert read_cpu_flags(arm, machine="aarch64") == frozenset()  # ARM has none, and no AMX
    assert read_cpu_flags(tmp_path / "missing", machine="aarch64") == frozenset()
    assert extra_buffer_types_allowed(cpuinfo=arm, machine="aarch64") is True


@pytest.mark.parametrize(("value", "expected"), [("on", True), ("1", True), ("off", False)])
def test_the_environment_overrides_the_setting_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str, expected: bool
) -> None:
    monkeypatch.setenv(SETTING_ENV, value)
    for cpu in (AMX_CPU, AVX512_CPU):
        on, why = extra_buffer_types_choice("auto", cpuinfo=_cpuinfo(tmp_path, cpu))
        assert on is expected
        assert why == f"{'on' if expected else 'off'} ({SETTING_ENV}={value})"


def test_a_bad_setting_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UsageError, match="extra_buffer_types must be auto, on or off"):
        extra_buffer_types_choice("sometimes", frozenset())
    monkeypatch.setenv(SETTING_ENV, "yes")
    with pytest.raises(UsageError, match=rf"\${SETTING_ENV} must be auto, on or off, not 'yes'"):
        extra_buffer_types_choice("auto", frozenset())


PIECES = ["flags", "Features", ":", " ", "\t", "\n", "\r", "amx_tile", "avx2", "é", "\x00"]


@given(st.one_of(st.text(), st.lists(st.sampled_from(PIECES)).map("".join)))
def test_any_cpuinfo_text_reads_as_flags_or_unknown(text: str) -> None:
    # hypothesis gives no tmp_path per example: the file lives in a folder of its own
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "cpuinfo"
        path.write_text(text)
        flags = read_cpu_flags(path, machine="x86_64")
        on, _ = extra_buffer_types_choice(cpuinfo=path, machine="x86_64")
    assert flags is None or isinstance(flags, frozenset)
    assert on is (flags is not None and not flags & AMX_FLAGS)
