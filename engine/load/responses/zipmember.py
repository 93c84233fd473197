"""Read members of a ZIP archive (inspect_ai ``.eval`` logs), inflated in bounded streams.

Current inspect_ai versions compress ``.eval`` members with zstd (ZIP method 93); older ones used
DEFLATE; a ZIP may also hold stored, bzip2 or LZMA members. Every member is inflated here, not by
:mod:`zipfile` (which inflates a whole member in one call of up to 2 GiB, and allocates a zstd
frame's declared content size up front): its raw bytes are located through the local header, read
1 MiB at a time, and inflated at most 1 MiB per call, so memory stays bounded by what the member
really inflates to. No size a member declares is trusted: a member that inflates past
:data:`~..jsondoc.MAX_DOCUMENT_BYTES` (or past what the run's memory budget has room for) is an
error as soon as it does, and one whose inflated size or CRC differs from what the archive says
is corrupt. An encrypted member, an unknown method, a truncated archive or a corrupt member is a
:class:`DataError` naming ``file:member``. zstd needs the ``zstandard`` package (imported only
when such a member is read).
"""

from __future__ import annotations

import bz2
import lzma
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING

from ...errors import DataError, located
from ..jsondoc import MAX_DOCUMENT_BYTES, too_large

if TYPE_CHECKING:
    from ..budget import ResponseBudget

STORED, DEFLATED, BZIP2, LZMA, ZSTD = 0, 8, 12, 14, 93
METHODS = {STORED: "stored", DEFLATED: "DEFLATE", BZIP2: "bzip2", LZMA: "LZMA", ZSTD: "zstd"}
#: Raw (compressed) bytes read from the archive at a time.
READ_BYTES = 1 << 20
#: Most bytes one decompression call may produce.
INFLATE_BYTES = 1 << 20
#: Largest zstd window accepted (zstd's own default limit for decompression, 128 MiB).
ZSTD_MAX_WINDOW = 1 << 27
#: Largest LZMA dictionary accepted (no member keyaudit reads inflates past 256 MiB).
LZMA_MAX_DICTIONARY = MAX_DOCUMENT_BYTES
#: General-purpose flag bits: 0 traditional encryption, 6 strong encryption.
_ENCRYPTED = 0x1 | 0x40
_LZMA_END_MARKER = 0x2
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


def read_member(
    archive: zipfile.ZipFile, name: str, path: Path, budget: ResponseBudget | None = None
) -> bytearray:
    """The inflated bytes of member ``name``, at most :data:`MAX_DOCUMENT_BYTES` of them (and at
    most half the room ``budget`` has left: the bytes and their text are both held while the
    document is parsed)."""
    where = f"{path}:{name}"
    try:
        info = archive.getinfo(name)
    except KeyError:
        raise DataError(located(where, None, None, "no such member")) from None
    if info.flag_bits & _ENCRYPTED:
        raise DataError(
            located(where, None, None, "encrypted member: keyaudit reads no encrypted logs")
        )
    if info.compress_type not in METHODS:
        raise DataError(
            located(
                where,
                None,
                None,
                f"unsupported compression method {info.compress_type} "
                f"(keyaudit reads {', '.join(METHODS.values())})",
            )
        )
    if info.file_size > MAX_DOCUMENT_BYTES:  # declared too large: not even started
        raise too_large(where, info.file_size)
    room = budget.document_room() if budget is not None else None
    if budget is not None and room is not None and info.file_size > room:
        raise budget.document_over(where, 2 * info.file_size)
    try:
        data = _inflate(archive, info, where, room, budget)
    except DataError:
        raise
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, lzma.LZMAError) as error:
        raise DataError(located(where, None, None, f"corrupt member: {error}")) from None
    if len(data) != info.file_size:
        raise DataError(
            located(
                where,
                None,
                None,
                f"corrupt member: inflates to {len(data):,} bytes, the archive says "
                f"{info.file_size:,}",
            )
        )
    if zlib.crc32(data) != info.CRC:
        raise DataError(located(where, None, None, "corrupt member: checksum mismatch"))
    return data


def _inflate(
    archive: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    where: str,
    room: int | None,
    budget: ResponseBudget | None,
) -> bytearray:
    raw = _RawMember(archive, info, where)
    out = bytearray()
    # An LZMA stream without an end marker (flag bit 1 clear) ends where the archive says.
    cut = info.compress_type == LZMA and not info.flag_bits & _LZMA_END_MARKER
    for piece in _inflater(info.compress_type, where)(raw):
        out += piece
        if cut and len(out) >= info.file_size:
            del out[info.file_size :]
            break
        if len(out) > MAX_DOCUMENT_BYTES:
            raise DataError(
                located(
                    where,
                    None,
                    None,
                    f"member inflates past {MAX_DOCUMENT_BYTES:,} bytes "
                    f"({MAX_DOCUMENT_BYTES // 2**20} MiB), the most keyaudit reads as one JSON "
                    f"document (the archive says {info.file_size:,})",
                )
            )
        if budget is not None and room is not None and len(out) > room:
            raise budget.document_over(where, 2 * len(out))
    return out


class _RawMember:
    """The compressed bytes of one member, read from the archive's file a piece at a time."""

    def __init__(self, archive: zipfile.ZipFile, info: zipfile.ZipInfo, where: str) -> None:
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
        self.handle: IO[bytes] = handle
        self.left = info.compress_size
        self.where = where

    def read(self, size: int = READ_BYTES) -> bytes:
        """Up to ``size`` more raw bytes; ``b""`` at the member's end. An archive that ends
        before the member does is an error."""
        if self.left <= 0:
            return b""
        size = self.left if size < 0 else min(size, self.left)
        data = self.handle.read(size)
        if not data:
            raise DataError(located(self.where, None, None, "corrupt member: truncated data"))
        self.left -= len(data)
        return data

    def chunks(self) -> Iterator[bytes]:
        while chunk := self.read():
            yield chunk


Inflater = Callable[[_RawMember], Iterator[bytes]]


def _inflater(method: int, where: str) -> Inflater:
    if method == STORED:
        return lambda raw: raw.chunks()
    if method == DEFLATED:
        return _deflate
    if method == BZIP2:
        return lambda raw: _bounded(bz2.BZ2Decompressor(), raw.chunks())
    if method == LZMA:
        return lambda raw: _lzma(raw, where)
    return lambda raw: _zstd(raw, where)


def _deflate(raw: _RawMember) -> Iterator[bytes]:
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    for chunk in raw.chunks():
        pending = chunk
        while True:
            piece = inflater.decompress(pending, INFLATE_BYTES)
            if piece:
                yield piece
            pending = inflater.unconsumed_tail
            if inflater.eof or (not pending and len(piece) < INFLATE_BYTES):
                break
        if inflater.eof:
            break


def _bounded(
    inflater: bz2.BZ2Decompressor | lzma.LZMADecompressor, chunks: Iterator[bytes]
) -> Iterator[bytes]:
    """Inflate ``chunks`` with a decompressor that takes ``max_length`` (bzip2, LZMA). A stream
    that ends early inflates to fewer bytes than the archive says: corrupt, found by the caller."""
    for chunk in chunks:
        piece = inflater.decompress(chunk, INFLATE_BYTES)
        yield piece
        while not inflater.eof and not inflater.needs_input:
            yield inflater.decompress(b"", INFLATE_BYTES)
        if inflater.eof:
            break


def _lzma(raw: _RawMember, where: str) -> Iterator[bytes]:
    """A ZIP LZMA member: version (2 bytes), properties size (2), the LZMA1 properties (5: lc,
    lp, pb and the dictionary size), then a raw LZMA1 stream."""
    head = raw.read(4)
    if len(head) < 4:
        raise DataError(located(where, None, None, "corrupt member: truncated LZMA header"))
    (size,) = struct.unpack("<H", head[2:4])
    props = raw.read(size)
    if size != 5 or len(props) != 5 or props[0] >= 9 * 5 * 5:
        raise DataError(located(where, None, None, "corrupt member: bad LZMA properties"))
    (dictionary,) = struct.unpack("<I", props[1:5])
    if dictionary > LZMA_MAX_DICTIONARY:
        raise DataError(
            located(where, None, None, f"corrupt member: LZMA dictionary of {dictionary:,} bytes")
        )
    lc, rest = props[0] % 9, props[0] // 9
    lp, pb = rest % 5, rest // 5
    filters = [
        {"id": lzma.FILTER_LZMA1, "dict_size": max(dictionary, 4096), "lc": lc, "lp": lp, "pb": pb}
    ]
    inflater = lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=filters)
    return _bounded(inflater, raw.chunks())


def _zstd(raw: _RawMember, where: str) -> Iterator[bytes]:
    try:
        import zstandard
    except ImportError:  # pragma: no cover - zstandard is a dependency
        raise DataError(
            located(where, None, None, "zstd member: install the 'zstandard' package")
        ) from None
    decompressor = zstandard.ZstdDecompressor(max_window_size=ZSTD_MAX_WINDOW)
    reader = decompressor.stream_reader(raw, read_size=64 * 1024, read_across_frames=True)
    try:
        while piece := reader.read(INFLATE_BYTES):
            yield piece
    except zstandard.ZstdError as error:
        raise DataError(located(where, None, None, f"corrupt member: {error}")) from None
