"""Output paths: checked before any work, never replaced unless asked, written atomically.

Every command that writes files calls :func:`check_output_file` or :func:`check_output_dir` for
*all* its outputs before it reads data or fits anything, so a refusal costs the user nothing.
A path is refused (:class:`~replikit.errors.OutputExistsError`, exit code 2 on the command line)
when a file replikit would write already exists, unless ``overwrite``; files replikit would not
write are never touched, whatever ``overwrite`` says. :func:`write_text_atomic` writes through a
temporary file in the same directory and renames it, so an interrupted run never leaves half a
report behind.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from .errors import OutputError, OutputExistsError

__all__ = ["check_output_file", "check_output_dir", "check_distinct", "write_text_atomic",
           "write_csv_atomic", "replace_hint"]


def replace_hint(overwrite_option: str | None) -> str:
    return (f"pass {overwrite_option} to replace it" if overwrite_option
            else "choose another path")


def _writable_parent(path: Path, option: str) -> None:
    """The nearest existing ancestor of ``path`` is a directory we may write into."""
    parent = path.parent if str(path.parent) else Path(".")
    probe = parent
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        raise OutputError(f"`{option}`: cannot create {str(path)!r}: {str(probe)!r} is a file, "
                          "not a directory.")
    if not _can_create_in(probe):
        raise OutputError(f"`{option}`: cannot write {str(path)!r}: directory {str(probe)!r} "
                          "is not writable.")


def _can_create_in(directory: Path) -> bool:
    """Whether a file can be created in ``directory`` — tried, not inferred from permission
    bits (which say nothing for root, read-only mounts or /proc)."""
    try:
        with tempfile.TemporaryFile(dir=directory):
            return True
    except OSError:
        return False


def check_output_file(path: str | os.PathLike, *, option: str = "out", overwrite: bool = False,
                      overwrite_option: str | None = "--overwrite",
                      suffixes: Iterable[str] | None = None) -> Path:
    """Check that ``path`` can be written as a new file (or replaced, with ``overwrite``).

    Parameters
    ----------
    path : path-like
    option : str
        The parameter or flag named in messages (``'--out'``).
    overwrite : bool
        Allow replacing an existing *file* (never a directory).
    overwrite_option : str or None
        How the user says ``overwrite`` (``'--overwrite'``; ``'overwrite=True'`` in Python).
    suffixes : iterable of str, optional
        Allowed file extensions (lower case, with the dot).

    Raises
    ------
    OutputExistsError
        The file exists and ``overwrite`` is false.
    OutputError
        The path is a directory, its extension is not allowed, or its directory is not writable.
    """
    p = Path(path).expanduser()
    if suffixes is not None:
        allowed = tuple(suffixes)
        if p.suffix.lower() not in allowed:
            raise OutputError(f"`{option}`: {str(p)!r} must end in one of {', '.join(allowed)}; "
                              f"got {p.suffix or 'no extension'!r}.")
    if p.is_dir():
        raise OutputError(f"`{option}`: {str(p)!r} is a directory; expected a file path.")
    if p.exists() or p.is_symlink():
        if not overwrite:
            raise OutputExistsError(f"`{option}`: {str(p)!r} already exists; "
                                    f"{replace_hint(overwrite_option)}.")
        if not os.access(p, os.W_OK):
            raise OutputError(f"`{option}`: {str(p)!r} exists and is not writable.")
    _writable_parent(p, option)
    return p


def check_output_dir(path: str | os.PathLike, names: Iterable[str], *, option: str = "out",
                     overwrite: bool = False,
                     overwrite_option: str | None = "--overwrite") -> Path:
    """Check that directory ``path`` can receive the files ``names``.

    The directory may exist and hold other files (they are never touched); it is refused when it
    is a file, is not writable, or already holds one of ``names`` and ``overwrite`` is false.
    A name may be a glob pattern (``'forest_*.svg'``) for files whose names depend on the data.
    """
    d = Path(path).expanduser()
    if d.exists() and not d.is_dir():
        raise OutputError(f"`{option}`: {str(d)!r} is a file; expected a directory.")
    if d.is_dir():
        if not _can_create_in(d):
            raise OutputError(f"`{option}`: directory {str(d)!r} is not writable.")
        clash = _existing(d, names)
        dirs = [n for n in clash if (d / n).is_dir()]
        if dirs:
            raise OutputError(f"`{option}`: {str(d / dirs[0])!r} is a directory where replikit "
                              "writes a file.")
        if clash and not overwrite:
            shown = ", ".join(clash[:4]) + (f" and {len(clash) - 4} more" if len(clash) > 4
                                            else "")
            raise OutputExistsError(
                f"`{option}`: {str(d)!r} already holds {shown}; "
                f"{replace_hint(overwrite_option).replace(' it', ' them')} or choose another "
                "directory.")
    else:
        _writable_parent(d / "x", option)
    return d


def _existing(d: Path, names: Iterable[str]) -> list[str]:
    found: set[str] = set()
    for n in names:
        if any(ch in n for ch in "*?["):
            found.update(p.name for p in d.glob(n))
        elif (d / n).exists() or (d / n).is_symlink():
            found.add(n)
    return sorted(found)


def write_csv_atomic(path: str | os.PathLike, frame) -> Path:
    """Write a DataFrame as CSV (no index) through :func:`write_text_atomic`."""
    return write_text_atomic(path, frame.to_csv(index=False))


def check_distinct(paths: dict[str, str | os.PathLike | None]) -> None:
    """Two output flags must not name the same file (one would silently replace the other)."""
    seen: dict[Path, str] = {}
    for option, path in paths.items():
        if path is None:
            continue
        key = Path(path).expanduser().resolve()
        if key in seen:
            raise OutputError(f"`{option}` and `{seen[key]}` name the same file {str(path)!r}; "
                              "give each output its own path.")
        seen[key] = option


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file and an atomic rename."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes the file private; give it the usual mode
        os.replace(tmp, p)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return p
