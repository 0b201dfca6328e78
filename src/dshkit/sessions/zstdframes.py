"""Walks zstd frame structure in a multi-frame file and decompresses each frame on its own.

One-shot zstd decoders stop after the first frame (8 frames on disk, 1 decoded:
docs/design/sessions.md#every-frame-is-decoded), so frame boundaries are found here by walking
headers and block headers — never by searching for the magic inside payloads — and each frame
is then decoded by itself.

Output is bounded without trusting the frame: a frame's structural bound (its declared
content size, or the sum of its block bounds) decides whether a fast one-call decode is safe;
anything larger is decoded in chunks and stopped at the limit.
"""

from __future__ import annotations

import os
import sys

from ..errors import Invalid

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the hot path)
if TYPE_CHECKING:
    from typing import Any

MAGIC = b"\x28\xb5\x2f\xfd"  # 0xFD2FB528, little-endian
_SKIPPABLE_LOW, _SKIPPABLE_HIGH = 0x184D2A50, 0x184D2A5F
_BLOCK_MAX = 128 * 1024  # no block regenerates more than this (zstd spec, Block_Maximum_Size)
_DICT_ID_BYTES = (0, 1, 2, 4)

DEFAULT_MAX_WINDOW = 64 * 1024 * 1024
DEFAULT_MAX_FRAME_OUTPUT = 64 * 1024 * 1024


class FrameError(Invalid, ValueError):
    """The bytes are not a well-formed zstd frame sequence (not a torn tail: a real error)."""

    def __init__(self, offset: int, reason: str) -> None:
        super().__init__(f"{reason} at byte {offset}")
        self.offset = offset
        self.reason = reason


class Frame:
    """One complete frame: where it starts and ends (file offsets), the most bytes its blocks
    can regenerate (from block headers alone: the header is never trusted), and the content
    size its header declares, if it declares one. A plain class: built once per frame, so it
    must be cheap, and the hot path imports no `typing`."""

    __slots__ = ("bound", "content_size", "end", "start")

    def __init__(self, start: int, end: int, bound: int, content_size: int | None) -> None:
        self.start, self.end, self.bound, self.content_size = start, end, bound, content_size

    def __repr__(self) -> str:
        return f"Frame({self.start}, {self.end}, {self.bound}, {self.content_size})"


class FrameScan:
    """The complete frames found; where an incomplete last frame starts (a session still
    being written), if any; where scanning stopped because `max_frames` was reached, if it
    was; what is wrong after the last complete frame, when it is neither a frame nor a torn
    tail."""

    __slots__ = ("error", "frames", "stopped_at", "torn_start")

    def __init__(
        self,
        frames: list[Frame],
        torn_start: int | None = None,
        stopped_at: int | None = None,
        error: FrameError | None = None,
    ) -> None:
        self.frames, self.torn_start, self.stopped_at = frames, torn_start, stopped_at
        self.error = error

    @property
    def end(self) -> int | None:
        """End of the last complete frame found, or None when there is none."""
        return self.frames[-1].end if self.frames else None


def scan_frames(buf: bytes, base: int = 0, max_frames: int | None = None) -> FrameScan:
    """Find the complete frames in `buf`, whose first byte is at file offset `base`.

    Only headers are read; no block is decompressed. Offsets in the result are file offsets.
    Frames before a structural error are still returned, with the error beside them.
    """
    frames: list[Frame] = []
    size = len(buf)
    pos = 0
    try:
        while pos < size:
            if max_frames is not None and len(frames) >= max_frames:
                return FrameScan(frames, stopped_at=base + pos)
            if size - pos < 4:
                if buf[pos:] == MAGIC[: size - pos]:
                    return FrameScan(frames, torn_start=base + pos)
                raise FrameError(base + pos, "trailing bytes that are not a zstd frame")
            if not buf.startswith(MAGIC, pos):
                word = int.from_bytes(buf[pos : pos + 4], "little")
                if _SKIPPABLE_LOW <= word <= _SKIPPABLE_HIGH:
                    raise FrameError(base + pos, "skippable zstd frame (DSH never writes one)")
                raise FrameError(base + pos, "bytes that do not start a zstd frame")
            frame = _walk_frame(buf, pos, size, base)
            if frame is None:
                return FrameScan(frames, torn_start=base + pos)
            frames.append(frame)
            pos = frame.end - base
    except FrameError as exc:
        return FrameScan(frames, error=exc)
    return FrameScan(frames)


def frames_to_end(buf: bytes, base: int = 0) -> int | None:
    """The file offset of the first frame in `buf` (the file's last bytes, `buf[0]` at offset
    `base`) from which whole frames run to its end, a torn last one allowed; None when no
    frame starts in it and reaches the end.

    Reading from the end cannot walk from the first frame, so a magic number is only a
    candidate: it is taken where the walk of headers and block headers from it stays whole
    and meets the end, frame after frame (a magic inside a payload would have to chain to a
    real boundary); the decoder's checksum then checks each frame it decodes.
    """
    at = buf.find(MAGIC)
    while at >= 0:
        scan = scan_frames(buf[at:], base + at)
        if scan.error is None and scan.frames:
            return base + at
        at = buf.find(MAGIC, at + 1)
    return None


def _walk_frame(buf: bytes, start: int, size: int, base: int) -> Frame | None:
    """One frame starting at `start` (magic already checked); None when it runs off the end."""
    p = start + 4
    if p >= size:
        return None
    fhd = buf[p]
    declared: int | None = None
    if fhd == 0x04:  # what DSH writes: checksum, window byte, no dictionary, no content size
        p += 2
        fcs_bytes = 0
    else:
        if fhd & 0x18:
            raise FrameError(base + p, "zstd frame header with reserved bits set")
        single_segment = bool(fhd & 0x20)
        fcs_flag = fhd >> 6
        fcs_bytes = (1 if single_segment else 0) if fcs_flag == 0 else 1 << fcs_flag
        p += 1 + (0 if single_segment else 1) + _DICT_ID_BYTES[fhd & 3]
    if p + fcs_bytes > size:
        return None
    if fcs_bytes:
        declared = int.from_bytes(buf[p : p + fcs_bytes], "little")
        if fcs_bytes == 2:
            declared += 256  # the 2-byte field is stored minus 256
        p += fcs_bytes
    bound = 0
    while True:
        if p + 3 > size:
            return None
        header = buf[p] | (buf[p + 1] << 8) | (buf[p + 2] << 16)
        block_type = (header >> 1) & 3
        block_size = header >> 3
        if block_type == 3:
            raise FrameError(base + p, "zstd block of reserved type 3")
        if block_type == 1:  # RLE: one byte on disk, block_size bytes out
            p += 4
            bound += block_size
        else:
            p += 3 + block_size
            bound += block_size if block_type == 0 else _BLOCK_MAX
        if p > size:
            return None
        if header & 1:
            break
    if fhd & 0x04:
        p += 4
        if p > size:
            return None
    return Frame(start + base, p + base, bound, declared)


def zstandard_module() -> Any:
    """The zstandard bindings the decoder uses: the package where it is loaded already; else
    its C backend alone, loaded from the package's directory without running the package's
    `__init__` (which imports `platform` and `typing`: ~13 ms of a hook's time, measured, for
    names the backend holds itself), and registered as `zstandard.backend_c`, where the
    package, imported later, takes it from. The package is imported where its import policy
    asks for another backend, or the C one is not there."""
    loaded = sys.modules.get("zstandard") or sys.modules.get("zstandard.backend_c")
    if loaded is not None:
        return loaded
    if os.environ.get("PYTHON_ZSTANDARD_IMPORT_POLICY", "default").strip() in ("default", "cext"):
        # importlib.machinery's names from where it takes them (the import system's own
        # modules, always loaded): importing `importlib` loads `warnings` too, ~0.5 ms.
        import _imp

        external: Any = sys.modules.get("_frozen_importlib_external")
        bootstrap: Any = sys.modules.get("_frozen_importlib")
        if external is None or bootstrap is None:  # (another interpreter)
            import importlib.machinery

            external = bootstrap = importlib.machinery
        ExtensionFileLoader, ModuleSpec = external.ExtensionFileLoader, bootstrap.ModuleSpec
        package = external.PathFinder.find_spec("zstandard")
        for folder in (package and package.submodule_search_locations) or ():
            for suffix in _imp.extension_suffixes():
                path = os.path.join(folder, "backend_c" + suffix)
                if os.path.isfile(path):
                    name = "zstandard.backend_c"
                    loader = ExtensionFileLoader(name, path)
                    backend = loader.create_module(ModuleSpec(name, loader, origin=path))
                    loader.exec_module(backend)
                    sys.modules[name] = backend
                    return backend
    import zstandard

    return zstandard


class FrameTooLarge(Invalid, ValueError):
    """A frame would decode to more than the configured output limit (a decompression bomb)."""


class FrameDecoder:
    """Decodes single frames with a bounded window and a bounded output size."""

    def __init__(
        self,
        max_window: int = DEFAULT_MAX_WINDOW,
        max_output: int = DEFAULT_MAX_FRAME_OUTPUT,
    ) -> None:
        self.max_output = max_output
        self.max_window = max_window
        self._made: Any = None  # (zstandard.ZstdDecompressor, made at the first frame)

    @property
    def _dctx(self) -> Any:
        """The decompressor, made (and zstandard loaded) at the first frame: reading a plain
        log, as the hooks do on every tool call, never needs it."""
        if self._made is None:
            zstandard = zstandard_module()
            self._made = zstandard.ZstdDecompressor(max_window_size=self.max_window)
        return self._made

    def decode(self, data: bytes, frame: Frame) -> bytes:
        """The plaintext of one complete frame, `data` being exactly its bytes."""
        zstandard = zstandard_module()  # at the first frame only (see `_dctx`)

        if frame.content_size is not None and frame.content_size > self.max_output:
            raise FrameTooLarge(
                f"zstd frame at byte {frame.start} declares {frame.content_size} bytes of "
                f"content, over the {self.max_output}-byte per-frame limit"
            )
        if frame.bound <= self.max_output:
            # Structurally cannot exceed the limit: one call, no chunk bookkeeping.
            obj = self._dctx.decompressobj()
            try:
                out: bytes = obj.decompress(data)
            except zstandard.ZstdError as exc:
                raise FrameError(frame.start, f"corrupt zstd frame ({exc})") from exc
            if not obj.eof or obj.unused_data:
                raise FrameError(frame.start, "zstd frame does not end where its blocks end")
            return out
        return self._decode_chunked(data, frame)

    def _decode_chunked(self, data: bytes, frame: Frame) -> bytes:
        zstandard = zstandard_module()

        chunks: list[bytes] = []
        total = 0
        try:
            with self._dctx.stream_reader(data, read_across_frames=False) as reader:
                while True:
                    chunk = reader.read(_BLOCK_MAX * 8)
                    if not chunk:
                        break
                    total += len(chunk)
                    if total > self.max_output:
                        raise FrameTooLarge(
                            f"zstd frame at byte {frame.start} decodes to more than the "
                            f"{self.max_output}-byte per-frame limit"
                        )
                    chunks.append(chunk)
        except zstandard.ZstdError as exc:
            raise FrameError(frame.start, f"corrupt zstd frame ({exc})") from exc
        return b"".join(chunks)
