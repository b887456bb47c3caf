"""The memory guard (replikit._memory): refuse before allocating, name what to reduce."""

import pytest

from replikit._memory import _parse_bytes, available_bytes, check_memory, format_bytes
from replikit.errors import ReplikitError, ResourceLimitError


def test_available_memory_is_probed():
    avail = available_bytes()
    assert avail is None or avail > 0


def test_limit_override_and_message(monkeypatch):
    monkeypatch.setenv("REPLIKIT_MEMORY_LIMIT", "1G")
    assert available_bytes() == 1024**3
    check_memory(0.5 * 1024**3, what="x", reduce="y")  # under 80% of the cap: fine
    with pytest.raises(ResourceLimitError) as info:
        check_memory(2 * 1024**3, what="the kernel matrix", reduce="n_resamples (--resamples)")
    msg = str(info.value)
    assert "the kernel matrix" in msg and "2.0 GiB" in msg and "--resamples" in msg
    assert isinstance(info.value, ReplikitError) and isinstance(info.value, MemoryError)


@pytest.mark.parametrize(("text", "expected"), [("512", 512), ("2K", 2048), ("1.5M", 1572864),
                                                 ("3gb", 3 * 1024**3)])
def test_parse_bytes(text, expected):
    assert _parse_bytes(text) == expected


def test_bad_limit_is_a_clear_error():
    with pytest.raises(ResourceLimitError, match="REPLIKIT_MEMORY_LIMIT"):
        _parse_bytes("lots")


def test_format_bytes():
    assert format_bytes(512) == "512 B"
    assert format_bytes(1536) == "1.5 KiB"
    assert format_bytes(3 * 1024**3) == "3.0 GiB"
