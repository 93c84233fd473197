"""Read members of a ZIP archive whose members may be zstd-compressed (inspect_ai ``.eval`` logs).

Current inspect_ai versions compress ``.eval`` members with zstd (ZIP method 93); older ones used
DEFLATE. Python's :mod:`zipfile` reads zstd members only from 3.14 on, so on earlier versions the
member's raw bytes are located through its local header and decompressed with the ``zstandard``
package (imported only when such a member is read). A truncated archive, an unknown method or a
corrupt member is a :class:`DataError` naming ``file:member``.
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from pathlib import Path

from ...errors import DataError, located
from ..jsondoc import MAX_DOCUMENT_BYTES, too_large

ZSTD = 93
_LOCAL_HEADER = struct.Struct("<4sHHHHHIIIHH")
_LOCAL_SIGNATURE = b"PK\x03\x04"


def open_archive(path: Path) -> zipfile.ZipFile:
    """The archive at ``path``; not a ZIP (or truncated: no central directory) is an error."""
    try:
        return zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise DataError(
            located(path, None, None, "not a ZIP archive (truncated or not an inspect .eval log)")
        ) from None
    except OSError as error:
        raise DataError(located(path, None, None, f"cannot read file: {error}")) from None


def read_member(archive: zipfile.ZipFile, name: str, path: Path) -> bytes:
    """The uncompressed bytes of member ``name``."""
    where = f"{path}:{name}"
    try:
        info = archive.getinfo(name)
    except KeyError:
        raise DataError(located(where, None, None, "no such member")) from None
    if info.file_size > MAX_DOCUMENT_BYTES:  # checked before inflating: a ZIP bomb stops here
        raise too_large(where, info.file_size)
    try:
        if info.compress_type != ZSTD or _zipfile_reads_zstd():
            return archive.read(info)
        return _read_zstd(archive, info, where)
    except DataError:
        raise
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError) as error:
        raise DataError(located(where, None, None, f"corrupt member: {error}")) from None


def _zipfile_reads_zstd() -> bool:
    return hasattr(zipfile, "ZIP_ZSTANDARD")  # Python 3.14+


def _read_zstd(archive: zipfile.ZipFile, info: zipfile.ZipInfo, where: str) -> bytes:
    handle = archive.fp
    if handle is None:
        raise DataError(located(where, None, None, "archive is closed"))
    handle.seek(info.header_offset)
    header = handle.read(_LOCAL_HEADER.size)
    if len(header) != _LOCAL_HEADER.size or header[:4] != _LOCAL_SIGNATURE:
        raise DataError(located(where, None, None, "corrupt member: bad local header"))
    fields = _LOCAL_HEADER.unpack(header)
    name_length, extra_length = fields[9], fields[10]
    handle.seek(info.header_offset + _LOCAL_HEADER.size + name_length + extra_length)
    raw = handle.read(info.compress_size)
    if len(raw) != info.compress_size:
        raise DataError(located(where, None, None, "corrupt member: truncated data"))
    try:
        import zstandard
    except ImportError:  # pragma: no cover - zstandard is a dependency below Python 3.14
        raise DataError(
            located(where, None, None, "zstd member: install the 'zstandard' package")
        ) from None
    try:
        data = zstandard.ZstdDecompressor().decompress(raw, max_output_size=info.file_size)
    except zstandard.ZstdError as error:
        raise DataError(located(where, None, None, f"corrupt member: {error}")) from None
    if len(data) != info.file_size or zlib.crc32(data) != info.CRC:
        raise DataError(located(where, None, None, "corrupt member: checksum mismatch"))
    return data
