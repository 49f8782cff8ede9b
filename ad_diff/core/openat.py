"""Opening a file or folder of a run folder relative to a descriptor of the folder, no link followed by the
kernel on any component.

Invariant: whatever is opened lies beneath the run folder *at the moment it is opened*. A check by path
followed by an open by path leaves a window: a log, or ``graphs/``, swapped for a link to ``~/.ssh``
between the two is read from outside. Here there is no separate check: :func:`open_beneath` opens the run
folder once (``os.open(root, O_DIRECTORY)``) and walks the path one component at a time with
``os.open(name, O_NOFOLLOW | ..., dir_fd=parent)`` (``O_DIRECTORY`` for folders on the way). A component
that is a link is never followed by the kernel: its target is read (``readlinkat``) and walked the same
way from the folder that holds it, and a target that leaves the run folder (``..`` above it, an absolute
path elsewhere) is refused. So links that stay inside the run folder still work, and a swap at any moment
can only make the open fail, never read from elsewhere. The final file is opened ``O_NONBLOCK`` (a FIFO
swapped in cannot block) and checked with ``fstat`` (regular files only).

Why not ``openat2(RESOLVE_BENEATH)``: Python has no binding for it (only a raw ``syscall`` through ctypes
with a per-architecture number), the kernel would not say which link escaped (one ``EXDEV`` for every
case, where the messages here name the reason), and the walk gives the same guarantee on every POSIX
system. The walk needs ``dir_fd`` support (Linux, macOS, the BSDs).

The refusal words are :mod:`ad_diff.core.safepath`'s; this module raises :class:`Refused` with them and
the callers add the path and what was expected.
"""

from __future__ import annotations

import errno
import os
import stat
from collections import deque
from pathlib import Path

MAX_LINKS = 40
"""Links followed in one path before it is called a loop (the kernel's own limit)."""

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_NOFOLLOW | _CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC
NOT_REGULAR = "is not a regular file (a FIFO, socket or device); refusing to open it"


class Refused(Exception):
    """Why a path may not be opened beneath its run folder (:attr:`why`, without the path)."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def outside(root: Path, place: str, *, named_link: bool, folder: bool = False) -> str:
    """The words for a path that leads out of ``root`` (``named_link``: the path itself is the link)."""
    kind = "folder" if folder else "file"
    how = "is a symbolic link to" if named_link else "resolves to"
    return (f"{how} a {kind} outside {place} {root}; refusing to read it (copy the {kind} into {place} "
            "instead of linking it)")


def _reason(e: OSError) -> str:
    if isinstance(e, PermissionError):
        return "cannot be read (permission denied)"
    return f"cannot be read ({e.strerror or e})"


def _reenter(real_root: str, target: str) -> list[str] | None:
    """The components, relative to the run folder, of ``target`` (an absolute path, or one that climbed
    above the run folder) when it lies lexically inside ``real_root``; ``None`` when it leaves it. The
    components are then walked from the run folder's descriptor like any other, so a link among them is
    resolved the same way."""
    return _below(os.path.normpath(target), real_root)


def _below(path: str, root: str) -> list[str] | None:
    """``Path(path).relative_to(root).parts`` for two absolute paths as :class:`~pathlib.Path` writes them
    (no empty or ``.`` component), ``None`` where ``path`` is not written below ``root``: string work, as
    every file read pays it (``relative_to`` parses both paths anew each time)."""
    if path == root:
        return []
    prefix = root if root.endswith(os.sep) else root + os.sep
    return path[len(prefix):].split(os.sep) if path.startswith(prefix) else None  # noqa: PTH206 (speed)


def _parts(path: Path, root: Path, place: str) -> list[str]:
    """``path``'s components below ``root``: lexically when ``path`` is written below ``root``, else from
    its folder's real path (a file named through a link to its folder), else from its own real path (a
    file named through a link, whose real folder is ``root``). The walk then opens them from ``root``
    without following links, whatever was resolved here."""
    lexical = _below(os.fspath(path.absolute()), os.fspath(root.absolute()))
    if lexical is not None:
        return lexical
    real_root = os.path.realpath(root)
    parts = _reenter(real_root, os.path.realpath(path.parent))
    if parts is not None:
        return [*parts, path.name]
    # a file named through a link, contained in the folder it resolves to (safepath.given_root)
    parts = _reenter(real_root, os.path.realpath(path))
    if parts is None:
        raise Refused(outside(root, place, named_link=path.is_symlink()))
    return parts


class _Walk:
    """One walk from the run folder's descriptor; :meth:`run` returns the opened descriptor."""

    def __init__(self, root: Path, place: str, folder: bool) -> None:
        self.root, self.place, self.folder = root, place, folder
        self.links = 0
        self.named_link = False
        self._real_root: str | None = None
        try:
            self.stack = [os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC)]
        except FileNotFoundError:
            raise Refused("does not exist") from None
        except OSError as e:
            raise Refused(_reason(e)) from None

    @property
    def real_root(self) -> str:
        if self._real_root is None:
            self._real_root = os.path.realpath(self.root)
        return self._real_root

    def close(self) -> None:
        for fd in self.stack:
            os.close(fd)
        self.stack = []

    def _escape(self) -> Refused:
        return Refused(outside(self.root, self.place, named_link=self.named_link, folder=self.folder))

    def _up(self, queue: deque[str]) -> None:
        """``..``: the folder above, or, at the run folder itself, re-enter it or refuse."""
        if len(self.stack) > 1:
            os.close(self.stack.pop())
            return
        target = str(Path(self.real_root).parent.joinpath(*queue))
        rest = _reenter(self.real_root, target)
        if rest is None:
            raise self._missing() if not Path(target).exists() else self._escape()
        queue.clear()
        queue.extend(rest)

    def _link(self, name: str, queue: deque[str]) -> None:
        """Replace the link ``name`` (in the folder on top of the stack) by its target's components."""
        self.links += 1
        if self.links == 1:
            self.named_link = not queue  # the path's own last component is the link
        if self.links > MAX_LINKS:
            raise Refused("is a symbolic link that loops")
        target = os.readlink(name, dir_fd=self.stack[-1])
        if Path(target).is_absolute():
            rest = _reenter(self.real_root, target)
            if rest is None:  # a link out that points nowhere is called broken, as it always was
                raise self._missing() if not Path(target).exists() else self._escape()
            while len(self.stack) > 1:
                os.close(self.stack.pop())
            queue.extendleft(reversed(rest))
        else:
            queue.extendleft(reversed(target.split("/")))

    def _missing(self) -> Refused:
        return Refused("is a broken symbolic link (it points nowhere)" if self.links else "does not exist")

    def run(self, parts: list[str]) -> int:
        queue = deque(parts)
        while queue:
            name = queue.popleft()
            if name in ("", "."):
                continue
            if name == "..":
                self._up(queue)
                continue
            want_dir = self.folder or bool(queue)
            try:
                info = os.stat(name, dir_fd=self.stack[-1], follow_symlinks=False)
                if stat.S_ISLNK(info.st_mode):
                    self._link(name, queue)
                    continue
                if want_dir and not stat.S_ISDIR(info.st_mode):
                    raise Refused("is not a folder" if not queue else "cannot be read (Not a directory)")
                if not want_dir and stat.S_ISDIR(info.st_mode):
                    raise Refused("is a folder, not a file")
                if not want_dir and not stat.S_ISREG(info.st_mode):
                    raise Refused(NOT_REGULAR)  # not even opened: a device's open may have effects
                fd = os.open(name, _DIR_FLAGS if want_dir else _FILE_FLAGS, dir_fd=self.stack[-1])
            except FileNotFoundError:
                raise self._missing() from None
            except OSError as e:
                if e.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):  # swapped for a link since: again
                    self.links += 1
                    if self.links > MAX_LINKS:
                        raise Refused("is a symbolic link that loops") from None
                    queue.appendleft(name)
                    continue
                raise Refused(_reason(e)) from None
            if not queue:
                return fd
            self.stack.append(fd)
        # the path named the run folder itself (or climbed back to it)
        if not self.folder:
            raise Refused("is a folder, not a file")
        return os.dup(self.stack[-1])


_opened: dict[tuple[int, int], Path] = {}
"""Every file this process opened for reading, by ``(st_dev, st_ino)``: what the outputs are checked
against (:mod:`ad_diff.core.outfile`), whatever name or hard link the run reached it by."""


def opened() -> dict[tuple[int, int], Path]:
    """The files opened so far (see :data:`_opened`): ``(st_dev, st_ino)`` -> the path it was opened as."""
    return _opened


def note_opened(fd: int, path: Path) -> None:
    """Record the file open on ``fd`` as read by this process (readers that open files of their own, a
    source tree or a file named on the command line, call it; :func:`open_beneath` does for every file)."""
    info = os.fstat(fd)
    if stat.S_ISREG(info.st_mode):
        _opened.setdefault((info.st_dev, info.st_ino), path)


def open_beneath(path: Path, root: Path, place: str = "the run folder", folder: bool = False) -> int:
    """A descriptor of ``path`` opened beneath ``root`` (see the module docstring): a regular file, or a
    folder when ``folder``. Raises :class:`Refused` saying why not; never blocks on a FIFO. Every file
    opened is recorded (:func:`opened`): no output may later be written over it."""
    walk = _Walk(root, place, folder)
    try:
        fd = walk.run(_parts(path, root, place))
    finally:
        walk.close()
    info = os.fstat(fd)
    ok = stat.S_ISDIR(info.st_mode) if folder else stat.S_ISREG(info.st_mode)
    if not ok:  # swapped for something else between the lstat and the open
        os.close(fd)
        raise Refused("is not a folder" if folder else NOT_REGULAR)
    if not folder:
        _opened.setdefault((info.st_dev, info.st_ino), path)
    return fd


def list_beneath(folder: Path, root: Path, place: str = "the run folder") -> list[str]:
    """The names in ``folder`` (a folder beneath ``root``), sorted, listed through a descriptor opened by
    :func:`open_beneath`: a folder swapped for a link is refused, not listed."""
    fd = open_beneath(folder, root, place, folder=True)
    try:
        return sorted(os.listdir(fd))  # noqa: PTH208 - a descriptor, which Path cannot list
    finally:
        os.close(fd)


__all__ = ["MAX_LINKS", "NOT_REGULAR", "Refused", "list_beneath", "note_opened", "open_beneath", "opened",
           "outside"]
