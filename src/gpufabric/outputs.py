"""Writing an output file the way a user expects, with secrets scrubbed from what is written.

``write_output(path, text)`` (and ``write_files(directory, contents)``, each file the same way):

- ``-`` is standard output;
- a symlink is written *through* (its target changes, the link stays), as ``tee`` and a shell's ``>``
  do, also when it dangles (the target is created); a symlink loop is refused (``ELOOP``), never replaced;
- a regular file (or a new name) is replaced atomically (``atomic_write_text``: a temporary file beside
  the real target, fsynced, then a rename), so a reader never sees half a document and a full disk leaves
  the old file and no temporary behind; the old file's permission bits are kept;
- a device, FIFO or socket (``/dev/null``, ``/dev/stdout``, a named pipe) is opened and written in place,
  never replaced;
- a directory is refused with ``IsADirectoryError``, and a path under a regular file with
  ``NotADirectoryError`` naming that file.

Every failure is an ``OSError`` whose ``strerror`` reads as one line; ``describe_write_error`` words it for
a flag. The text goes through ``redact.scrub_known`` first (``gpufabric.redact``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from gpufabric.errors import OutputError
from gpufabric.redact import scrub_known

STDOUT = "-"


def is_stdout(path: Path | str) -> bool:
    return str(path) == STDOUT


def real_target(path: Path) -> Path:
    """Where writing ``path`` lands: symlinks followed (also dangling ones), relative to the link."""
    return Path(os.path.realpath(path))


def is_symlink_loop(path: Path) -> bool:
    """True when ``path`` is a symlink that never reaches a file or a dangling end (``ELOOP``)."""
    if not path.is_symlink():
        return False
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


def check_output_path(path: Path | str) -> None:
    """Raise the ``OSError`` that writing ``path`` would meet for its *kind*: a directory, a path under a
    regular file, a missing parent directory that cannot be created. Touches nothing."""
    if is_stdout(path):
        return
    path = Path(path)
    if is_symlink_loop(path):  # as tee(1) refuses it; replacing the link would lose it
        message = f"{path} is a symbolic link loop; remove the link or name another path"
        raise OSError(errno.ELOOP, message, str(path))
    target = real_target(path)
    if target.is_dir():
        raise IsADirectoryError(errno.EISDIR, f"{path} is a directory", str(path))
    for start in (path, target):  # name the culprit as the user wrote it, when it is on that path
        ancestor = start.parent
        while not ancestor.exists() and ancestor != ancestor.parent:
            ancestor = ancestor.parent
        if not ancestor.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, f"{ancestor} is a file, not a directory", str(ancestor))


def is_special(path: Path) -> bool:
    """A device, FIFO or socket: written in place, never replaced."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def write_output(path: Path | str, text: str) -> None:
    """Write ``text`` (secrets scrubbed) to ``path`` as the module docstring says."""
    text = scrub_known(text)
    if is_stdout(path):
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    path = Path(path)
    check_output_path(path)
    target = real_target(path)
    if is_special(target):
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(text)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(target, text)


def write_files(directory: Path, contents: Mapping[str, str], *, executable: tuple[str, ...] = ()) -> None:
    """Each ``name: text`` of ``contents`` as ``directory/name`` through ``write_output``; ``directory`` is
    made if missing, and names ending in one of ``executable`` get mode 0755 (scripts to run)."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in contents.items():
        path = directory / name
        write_output(path, text)
        if name.endswith(executable) and executable:
            path.chmod(0o755)


def atomic_write_text(target: Path, text: str, *, durable: bool = True) -> None:
    """Replace ``target`` with ``text`` so that no reader, and no full disk, ever leaves half of it: a
    temporary file beside it is written and fsynced, then renamed over it (the old file's permission bits
    kept). On any failure the temporary file is removed and ``target`` is as it was; the ``OSError``
    names ``target`` (a full disk: ``ENOSPC``, see ``full_disk_error``). Secrets are the caller's
    business (``write_output`` scrubs). ``durable=False`` skips the fsync, for files that need only
    outlive the process, not the machine (a rank's stage file: written at every stage of every rank)."""
    try:
        mode: int | None = stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        mode = None
    tmp_name: str | None = None
    try:
        fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())  # a full disk can refuse the data only now, not at rename
        if mode is not None:
            os.chmod(tmp_name, mode)
        else:  # mkstemp makes 0600; a new output gets the usual 0666 & ~umask
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp_name, 0o666 & ~umask)
        os.replace(tmp_name, target)
    except BaseException as exc:
        if tmp_name is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp_name)
        if isinstance(exc, OSError) and exc.filename is None:
            exc.filename = str(target)
        raise


FULL_DISK_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def free_space(path: Path) -> str:
    """``"12 KiB free"`` on the file system that holds ``path`` (its nearest existing ancestor)."""
    probe = Path(path).absolute()
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        free = float(shutil.disk_usage(probe).free)
    except OSError:
        return "free space unknown"
    if free < 1024:
        return f"{free:.0f} B free"
    units = ["KiB", "MiB", "GiB"]
    free /= 1024
    while free >= 1024 and len(units) > 1:
        free /= 1024
        units.pop(0)
    return f"{free:.1f} {units[0]} free"


def full_disk_error(path: Path | str, exc: OSError, *, fix: str) -> OutputError:
    """The one line a write that met a full disk (or quota) becomes: the path, the cause, the free space
    left there and ``fix``."""
    where = Path(str(exc.filename)) if exc.filename else Path(path)
    return OutputError(f"{where}: {exc.strerror or exc} ({free_space(where)} there); {fix}")


def describe_write_error(path: Path | str, exc: OSError) -> str:
    """The cause of a failed write, one line: ``it is a directory``, ``out is a file, not a directory``,
    ``No space left on device``, ``Permission denied (/x)``."""
    if isinstance(exc, IsADirectoryError) or (not is_stdout(path) and Path(path).is_dir()):
        return "it is a directory"
    if isinstance(exc, NotADirectoryError) and exc.filename:
        return f"{exc.filename} is a file, not a directory"
    if isinstance(exc, FileExistsError) and exc.filename:
        return f"{exc.filename} is a file, not a directory"  # mkdir met a file where a directory goes
    culprit = f" ({exc.filename})" if exc.filename and Path(str(exc.filename)) != Path(path) else ""
    return f"{exc.strerror or type(exc).__name__}{culprit}"
