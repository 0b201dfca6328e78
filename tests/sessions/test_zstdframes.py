"""The zstd frame scanner and the bounded frame decoder."""

from __future__ import annotations

import io
import random
import subprocess
import sys
import textwrap

import pytest
import zstandard

from dshkit.sessions.zstdframes import (
    MAGIC,
    FrameDecoder,
    FrameError,
    FrameTooLarge,
    scan_frames,
)

from ..support.paths import DSH_ZSTD


def dsh_fixture() -> bytes:
    return next(DSH_ZSTD.rglob("session.jsonl.zstd")).read_bytes()


def test_real_dsh_log_frames_and_plaintext() -> None:
    data = dsh_fixture()
    scan = scan_frames(data)
    assert scan.error is None and scan.torn_start is None
    assert [f.start for f in scan.frames] == [0, 139, 472, 11308, 11883, 12480]
    assert scan.end == len(data)
    decoder = FrameDecoder()
    texts = [decoder.decode(data[f.start : f.end], f) for f in scan.frames]
    assert texts[0].startswith(b'{"type":"session","version":0,')
    assert texts[0].count(b"\n") == 1  # the header frame holds the header line alone
    assert all(t.endswith(b"\n") for t in texts)
    # Seed 001 §1.9(e): a one-shot decoder stops after the first frame.
    assert zstandard.ZstdDecompressor().decompressobj().decompress(data) == texts[0]


def test_every_cut_inside_the_last_frame_is_a_torn_tail() -> None:
    data = dsh_fixture()
    last = scan_frames(data).frames[-1]
    for cut in range(last.start + 1, last.end):
        scan = scan_frames(data[:cut])
        assert scan.error is None, cut
        assert scan.torn_start == last.start, cut
        assert scan.end == last.start


@pytest.mark.parametrize(
    ("tail", "reason"),
    [
        (b"\x50\x2a\x4d\x18" + b"\x04\x00\x00\x00abcd", "skippable"),
        (b"garbage!", "do not start a zstd frame"),
        (b"\x28\xb5\x00", "trailing bytes"),
        (b"\x00", "trailing bytes"),
    ],
)
def test_anything_after_the_last_frame_that_is_not_a_frame_is_an_error(
    tail: bytes, reason: str
) -> None:
    data = dsh_fixture()
    scan = scan_frames(data + tail)
    assert len(scan.frames) == 6, "frames before the problem are kept"
    assert scan.error is not None and reason in str(scan.error)
    assert scan.error.offset == len(data)


def test_a_partial_magic_of_fewer_than_four_bytes_is_a_torn_tail() -> None:
    data = dsh_fixture()
    for n in range(1, 4):
        scan = scan_frames(data + MAGIC[:n])
        assert scan.error is None and scan.torn_start == len(data)


def test_reserved_descriptor_bits_and_reserved_block_type_are_errors() -> None:
    frame = bytearray(zstandard.ZstdCompressor().compress(b"hello\n"))
    bad_fhd = bytes(frame[:4]) + bytes([frame[4] | 0x08]) + bytes(frame[5:])
    assert "reserved bits" in str(scan_frames(bad_fhd).error)
    # A frame with no content size and a window byte: block header at offset 6.
    plain = zstandard.ZstdCompressor(write_content_size=False).compress(b"hello\n")
    block = bytearray(plain)
    block[6] |= 0x06  # block type 3
    assert "reserved type 3" in str(scan_frames(bytes(block)).error)


def test_frame_budget_stops_between_frames() -> None:
    data = dsh_fixture()
    scan = scan_frames(data, base=1000, max_frames=2)
    assert [f.start for f in scan.frames] == [1000, 1139]
    assert scan.stopped_at == 1472


def _frame(rng: random.Random) -> bytes:
    """One random frame, in any of the shapes the format allows."""
    size = rng.choice((0, 1, 10, 300, 5000, 70_000, 300_000))
    kind = rng.random()
    if kind < 0.3:
        payload = rng.randbytes(size)  # incompressible: raw blocks
    elif kind < 0.5:
        payload = bytes([rng.randrange(256)]) * size  # runs: RLE blocks
    else:
        words = [b"frame", b"seq", b"\xe6\x97\xa5\xe5\xbf\x97", b"{}", b"\n"]
        payload = b" ".join(rng.choices(words, k=size // 4 + 1))[:size]
    compressor = zstandard.ZstdCompressor(
        level=rng.choice((1, 3, 9, 19)) if size <= 5000 else rng.choice((1, 3)),
        write_checksum=rng.random() < 0.5,
        write_content_size=rng.random() < 0.5,
    )
    if rng.random() < 0.5:
        return compressor.compress(payload)  # single-segment when the size is known
    out = io.BytesIO()  # streamed: no content size, not single-segment, often multi-block
    with compressor.stream_writer(out, closefd=False) as writer:
        for i in range(0, len(payload), 4096):
            writer.write(payload[i : i + 4096])
    return out.getvalue()


def oracle(data: bytes) -> tuple[list[tuple[int, int]], int | None]:
    """Frame boundaries found by zstandard's streaming decoder alone, and where a torn tail
    starts: it stops at each frame's end and hands back the unused bytes."""
    bounds: list[tuple[int, int]] = []
    position = 0
    while position < len(data):
        obj = zstandard.ZstdDecompressor().decompressobj()
        try:
            obj.decompress(data[position:])
        except zstandard.ZstdError:
            return bounds, position
        if not obj.eof:
            return bounds, position
        end = len(data) - len(obj.unused_data)
        bounds.append((position, end))
        position = end
    return bounds, None


def test_differential_against_the_zstandard_decoder() -> None:
    rng = random.Random(20261130)
    pool = [_frame(rng) for _ in range(400)]
    for frame in pool:  # the structural bound really bounds what each frame decodes to
        found = scan_frames(frame).frames[0]
        assert found.bound >= len(zstandard.ZstdDecompressor().decompressobj().decompress(frame))
    files = checked_frames = cut_files = torn_files = 0
    for _ in range(2500):
        data = b"".join(rng.choices(pool, k=rng.randint(1, 6)))
        if rng.random() < 0.6:
            data = data[: rng.randrange(1, len(data) + 1)]  # cut at a random point
            cut_files += 1
        expected, torn = oracle(data)
        scan = scan_frames(data)
        assert scan.error is None, (files, scan.error)
        assert [(f.start, f.end) for f in scan.frames] == expected, files
        assert scan.torn_start == torn, files
        files += 1
        checked_frames += len(expected)
        torn_files += torn is not None
    # The oracle must really have found frames and tails: guard against a vacuous comparison.
    assert files == 2500 and checked_frames > 4000 and cut_files > 1000 and torn_files > 1000


def test_decoder_refuses_a_declared_bomb_without_decoding() -> None:
    bomb = zstandard.ZstdCompressor(level=1).compress(b"\0" * (64 << 20))
    frame = scan_frames(bomb).frames[0]
    assert frame.content_size == 64 << 20
    with pytest.raises(FrameTooLarge, match="over the 1048576-byte per-frame limit"):
        FrameDecoder(max_output=1 << 20).decode(bomb, frame)


@pytest.mark.process
def test_decoder_stops_an_undeclared_bomb_at_the_limit_with_little_memory() -> None:
    # In a child process, so its peak memory is its own: a 4 GiB zero frame, 64 MiB limit. The
    # peak is read from /proc (VmHWM, reset at exec) where there is one: ru_maxrss carries the
    # parent's figure across exec, so a big test process made a small child look big.
    script = textwrap.dedent(
        """
        import io, resource, zstandard
        from dshkit.sessions.zstdframes import FrameDecoder, FrameTooLarge, scan_frames
        out = io.BytesIO()
        zero = bytes(1 << 20)
        with zstandard.ZstdCompressor(level=1).stream_writer(out, closefd=False) as writer:
            for _ in range(4096):
                writer.write(zero)
        bomb = out.getvalue()
        frame = scan_frames(bomb).frames[0]
        assert frame.content_size is None and frame.bound >= 4 << 30
        try:
            FrameDecoder(max_output=64 << 20).decode(bomb, frame)
        except FrameTooLarge as exc:
            print("refused:", exc)
        try:
            with open("/proc/self/status") as status:
                peak = next(int(l.split()[1]) for l in status if l.startswith("VmHWM:"))
        except OSError:
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print("maxrss_kib", peak)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    assert "refused: zstd frame at byte 0 decodes to more than the 67108864-byte" in result.stdout
    maxrss_mib = int(result.stdout.split("maxrss_kib")[1]) / 1024
    assert maxrss_mib < 400, f"peak memory {maxrss_mib:.0f} MiB for a 64 MiB limit"


def test_decoder_window_limit() -> None:
    # Streamed with no size given: the frame header carries the 128 MiB window itself.
    big_window = zstandard.ZstdCompressor(
        compression_params=zstandard.ZstdCompressionParameters(window_log=27)
    )
    out = io.BytesIO()
    with big_window.stream_writer(out, closefd=False) as writer:
        writer.write(random.Random(1).randbytes(1 << 20))
    data = out.getvalue()
    frame = scan_frames(data).frames[0]
    with pytest.raises(FrameError, match="corrupt zstd frame"):
        FrameDecoder(max_window=1 << 20).decode(data, frame)


@pytest.mark.process
def test_the_c_backend_is_loaded_alone_and_the_package_takes_it_later() -> None:
    # In a fresh interpreter (a hook's): the decoder decodes with the C backend alone, without
    # the package's imports; the package imported after it runs on the same backend.
    script = textwrap.dedent(
        f"""
        import sys
        from dshkit.sessions.zstdframes import FrameDecoder, scan_frames, zstandard_module
        data = open({str(next(DSH_ZSTD.rglob("session.jsonl.zstd")))!r}, "rb").read()
        frames = scan_frames(data).frames
        text = FrameDecoder().decode(data[frames[0].start : frames[0].end], frames[0])
        print(text.startswith(b'{{"type":"session"'), "zstandard" in sys.modules,
              "typing" in sys.modules, "platform" in sys.modules)
        backend = zstandard_module()
        import zstandard
        print(sys.modules["zstandard.backend_c"] is backend, zstandard.ZstdError is
              backend.ZstdError)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.splitlines() == ["True False False False", "True True"]
