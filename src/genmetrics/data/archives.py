"""Safe extraction of downloaded archives (wheels, zips, tarballs) into a folder.

Archives come from package registries and URLs, so their content is not trusted. :func:`unpack`
refuses, before anything is written:

- more than :data:`MAX_MEMBERS` members or more than :data:`MAX_UNPACKED_BYTES` bytes in total,
  as the headers declare them (a decompression bomb would fill the disk);
- a member whose path leaves the destination folder (``../x``, ``/etc/x``), or whose name is
  longer than :data:`MAX_NAME_CHARS` (or a path component than 255 bytes);
- any member that is not a regular file or a folder: symbolic and hard links, devices, FIFOs
  (a chain of links with long names escapes tarfile's ``data`` filter on the Pythons that
  CVE-2025-4517 affects; a dataset or model archive never needs a link), and sparse tar
  members (a sparse member's size is not that of the file it writes).

Headers can lie, so the limits are enforced again while bytes are written: a zip member may not
inflate past its declared size nor the archive past :data:`MAX_UNPACKED_BYTES` (its CRC-32 is
checked too), and tar members go through tarfile's ``data`` filter (no links out of the folder,
no device files, no absolute paths) with a running byte budget. The limits are module globals,
read at each call: raise them for a larger archive. Nothing unpacked is run or imported.
"""

from __future__ import annotations

import shutil
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path

from genmetrics import GenmetricsError

#: moves bytes (fetches, unpacks, loads or logs pinned content) without deciding a value: code
#: digests do not follow it (:data:`genmetrics.provenance.BOUNDARY_MARK`)
CODE_DIGEST_BOUNDARY = True

#: Limits on an archive's unpacked content (header sizes summed, then enforced while writing).
MAX_UNPACKED_BYTES = 20 * 2**30
MAX_MEMBERS = 200_000
#: the longest member name accepted (far below PATH_MAX once joined to the cache folder)
MAX_NAME_CHARS = 1024

_CHUNK = 1 << 20
_ZIP = (".whl", ".zip")
_TAR = (".tar.gz", ".tgz", ".tar", ".tar.bz2")
#: the file endings :func:`unpack` unpacks (any case); other files are copied as they are
ARCHIVE_SUFFIXES = _ZIP + _TAR


def is_archive(name: str) -> bool:
    """Whether :func:`unpack` unpacks a file of this name (endings compared in any case)."""
    return name.lower().endswith(ARCHIVE_SUFFIXES)


def unpack(archive: Path, dest: Path) -> None:
    """Unpack a wheel/zip/tarball into ``dest`` (other files are copied), within the limits.

    Raises :class:`GenmetricsError` naming the archive for a broken or refused archive.
    """
    name = archive.name
    try:
        if name.lower().endswith(_ZIP):
            with zipfile.ZipFile(archive) as z:
                infos = z.infolist()
                _check_limits(archive, len(infos), sum(i.file_size for i in infos))
                for i in infos:
                    if stat.S_IFMT(i.external_attr >> 16) not in (0, stat.S_IFREG, stat.S_IFDIR):
                        raise GenmetricsError(
                            f"{archive.name}: member {i.filename!r} is not a regular file or "
                            "folder (links and devices are refused)"
                        )
                _check_members(archive, [i.filename for i in infos], dest)
                _extract_zip(archive, z, infos, dest)
        elif name.lower().endswith(_TAR):
            with tarfile.open(archive) as t:
                members = t.getmembers()
                for m in members:
                    if not (m.isreg() or m.isdir()) or m.issparse():
                        what = "a sparse member" if m.issparse() else _tar_type(m)
                        raise GenmetricsError(
                            f"{archive.name}: member {m.name!r} is {what}; only regular files "
                            "and folders are unpacked"
                        )
                total = sum(m.size for m in members if m.isreg())
                _check_limits(archive, len(members), total)
                _check_members(archive, [m.name for m in members], dest)
                t.extractall(dest, filter=_tar_budget(archive))
        else:
            shutil.copy2(archive, dest / name)
    except (zipfile.BadZipFile, tarfile.TarError, zlib.error, EOFError) as e:
        raise GenmetricsError(f"{archive.name}: cannot unpack ({type(e).__name__}: {e})") from None


def _check_limits(archive: Path, members: int, total: int) -> None:
    if members > MAX_MEMBERS or total > MAX_UNPACKED_BYTES:
        raise GenmetricsError(
            f"{archive.name}: {members} members, {total} bytes unpacked: over the limit of "
            f"{MAX_MEMBERS} members, {MAX_UNPACKED_BYTES} bytes "
            "(genmetrics.data.archives.MAX_MEMBERS / MAX_UNPACKED_BYTES)"
        )


def _extract_zip(
    archive: Path, z: zipfile.ZipFile, infos: list[zipfile.ZipInfo], dest: Path
) -> None:
    """Stream each member with a byte budget: no member writes more than its declared size,
    the archive no more than :data:`MAX_UNPACKED_BYTES` (a lying header stops here)."""
    budget = MAX_UNPACKED_BYTES
    for info in infos:
        target = dest / info.filename
        if info.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        written = 0
        try:
            with z.open(info) as src, open(target, "wb") as out:
                for block in iter(lambda src=src: src.read(_CHUNK), b""):
                    written += len(block)
                    if written > info.file_size or written > budget:
                        raise GenmetricsError(
                            f"{archive.name}: member {info.filename!r} unpacks to more than its "
                            f"declared {info.file_size} bytes (or the archive's limit)"
                        )
                    out.write(block)
        except (zipfile.BadZipFile, zlib.error, EOFError) as e:
            raise GenmetricsError(
                f"{archive.name}: member {info.filename!r} does not match its header "
                f"(declared size {info.file_size}, CRC-32): {e}"
            ) from None
        budget -= written


def _tar_budget(archive: Path) -> Callable[[tarfile.TarInfo, str], tarfile.TarInfo | None]:
    """tarfile's ``data`` filter plus a running byte budget (tar copies exactly ``size`` bytes)."""
    left = [MAX_UNPACKED_BYTES]

    def keep(member: tarfile.TarInfo, path: str) -> tarfile.TarInfo | None:
        member = tarfile.data_filter(member, path)
        if member is not None and member.isreg():
            left[0] -= member.size
            if left[0] < 0:
                raise GenmetricsError(
                    f"{archive.name}: unpacks to more than {MAX_UNPACKED_BYTES} bytes"
                )
        return member

    return keep


def _tar_type(m: tarfile.TarInfo) -> str:
    if m.issym():
        return f"a symbolic link (to {m.linkname!r})"
    if m.islnk():
        return f"a hard link (to {m.linkname!r})"
    return "a device, FIFO or other special file"


def _check_members(archive: Path, names: list[str], dest: Path) -> None:
    root = dest.resolve()
    for n in names:
        if len(n) > MAX_NAME_CHARS or any(len(c.encode()) > 255 for c in n.split("/")):
            raise GenmetricsError(
                f"{archive.name}: member name of {len(n)} characters starting {n[:60]!r} is too "
                f"long (at most {MAX_NAME_CHARS}, 255 bytes a component)"
            )
        if not (root / n).resolve().is_relative_to(root):
            raise GenmetricsError(f"{archive}: unsafe path {n!r} in archive")
