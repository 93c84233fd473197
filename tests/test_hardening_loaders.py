"""Issue 26, the loader items: archives that lie about their sizes (3), a memory budget for what a
run keeps (4), confined benchmark paths (6), outputs never onto an input (7), symlinked folders
(8), blank-line bombs (9, F13) and the low loader items (10). Each test builds the hostile input;
the heavy ones run the console script in a child process under a memory and CPU cap.
"""

from __future__ import annotations

import bz2
import gzip
import json
import os
import resource
import struct
import subprocess
import sys
import tempfile
import time
import zipfile
import zlib
from pathlib import Path

import pytest
from hostile import MEASURED_ENTRY, Run, assert_one_line_error

MB = 1 << 20
HEADER = {"status": "success", "eval": {"model": "m", "scorers": [{"name": "s"}]}}


def run_capped(
    *args: str, env: dict[str, str] | None = None, memory_mb: int = 1500, cpu_s: int = 60
) -> Run:
    """``keyaudit ARGS`` in a child process with its address space and CPU time capped (a run
    that would exceed them fails with MemoryError / SIGXCPU instead of taking the machine)."""
    environment = dict(os.environ)
    environment.update(env or {})
    handle, peak_file = tempfile.mkstemp(prefix="keyaudit-peak-")
    os.close(handle)
    environment["KEYAUDIT_TEST_PEAK"] = peak_file

    def limit() -> None:
        cap = memory_mb * MB
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s))

    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", MEASURED_ENTRY, *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=environment,
        preexec_fn=limit,
        timeout=cpu_s * 3,
    )
    seconds = time.monotonic() - started
    try:
        peak_kb = int(Path(peak_file).read_text() or 0)
    finally:
        os.unlink(peak_file)
    return Run(
        done.returncode,
        done.stdout.decode("utf-8", "replace"),
        done.stderr.decode("utf-8", "replace"),
        seconds,
        peak_kb / 1024,
    )


def bench(root: Path, n: int = 1) -> Path:
    """A benchmark with keys dom_0001_q5 ... of status 'stable'."""
    (root / "keys").mkdir(parents=True)
    (root / "keys" / "k.jsonl").write_text(
        "".join(
            json.dumps({"id": f"dom_{i:04d}_q5", "answer": "stable"}) + "\n"
            for i in range(1, n + 1)
        ),
        encoding="utf-8",
    )
    return root


def sample(i: int, text: str = "ANSWER: stable") -> dict:
    return {
        "id": f"dom_{i:04d}_q5",
        "epoch": 1,
        "output": {"completion": text},
        "scores": {"s": {"value": "C"}},
    }


# ---- ZIP archives written by hand, so that a member can say what it likes about itself


def write_zip(path: Path, members: list[tuple[str, int, bytes, int, int, int]]) -> None:
    """A ZIP of ``(name, method, raw bytes, declared size, crc, flags)`` members, as given."""
    out = bytearray()
    central = bytearray()
    for name, method, raw, size, crc, flags in members:
        offset = len(out)
        encoded = name.encode()
        out += struct.pack(
            "<4sHHHHHIIIHH",
            b"PK\x03\x04",
            63,
            flags,
            method,
            0,
            0x21,
            crc,
            len(raw),
            size,
            len(encoded),
            0,
        )
        out += encoded + raw
        central += struct.pack(
            "<4sHHHHHHIIIHHHHHII",
            b"PK\x01\x02",
            63,
            63,
            flags,
            method,
            0,
            0x21,
            crc,
            len(raw),
            size,
            len(encoded),
            0,
            0,
            0,
            0,
            0,
            offset,
        )
        central += encoded
    start = len(out)
    out += central
    out += struct.pack(
        "<4sHHHHIIH", b"PK\x05\x06", 0, 0, len(members), len(members), len(central), start, 0
    )
    path.write_bytes(bytes(out))


def stored(name: str, data: bytes, flags: int = 0) -> tuple[str, int, bytes, int, int, int]:
    return (name, 0, data, len(data), zlib.crc32(data), flags)


def compressed(method: str, megabytes: int) -> tuple[int, bytes, int]:
    """``megabytes`` MiB of spaces compressed with ``method``: (ZIP method, raw bytes, flags)."""
    chunk = b" " * MB
    if method == "zstd":
        import zstandard

        writer = zstandard.ZstdCompressor(level=3).compressobj()
        raw = b"".join(writer.compress(chunk) for _ in range(megabytes)) + writer.flush()
        return 93, raw, 0
    if method == "lzma":
        compressor = zipfile.LZMACompressor()  # the ZIP LZMA header, then a raw LZMA1 stream
        raw = b"".join(compressor.compress(chunk) for _ in range(megabytes)) + compressor.flush()
        return 14, raw, 0x2
    if method == "bzip2":
        compressor = bz2.BZ2Compressor(9)
        raw = b"".join(compressor.compress(chunk) for _ in range(megabytes)) + compressor.flush()
        return 12, raw, 0
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    raw = b"".join(compressor.compress(chunk) for _ in range(megabytes)) + compressor.flush()
    return 8, raw, 0


def lying_eval(path: Path, method: str, megabytes: int) -> Path:
    """An .eval whose sample member says it holds 1,000 bytes and inflates to ``megabytes``."""
    code, raw, flags = compressed(method, megabytes)
    write_zip(
        path,
        [
            stored("header.json", json.dumps(HEADER).encode()),
            ("samples/1_epoch_1.json", code, raw, 1000, 0, flags),
        ],
    )
    return path


# ---- item 3: archive members that lie about their size


@pytest.mark.parametrize("method", ["deflate", "bzip2", "lzma", "zstd"])
def test_a_member_lying_about_its_size_is_inflated_in_bounded_memory(
    tmp_path: Path, method: str
) -> None:
    log = lying_eval(tmp_path / "run.eval", method, 48)
    assert log.stat().st_size < 200_000
    run = run_capped(
        "flag",
        "--bench",
        str(bench(tmp_path / "b")),
        "--responses",
        str(log),
        env={"KEYAUDIT_RESPONSE_MEMORY": "64"},
        memory_mb=1000,
    )
    # the 64 MiB budget has room for 32 MiB of inflated bytes: the member stops there
    assert_one_line_error(run.err, run.code, "run.eval:samples/1_epoch_1.json:", "memory budget")
    assert run.peak_mb < 200, run.peak_mb


def test_a_member_inflating_past_the_document_limit_stops_there(tmp_path: Path) -> None:
    log = lying_eval(tmp_path / "run.eval", "deflate", 300)  # 0.3 MB on disk, says 1,000 bytes
    run = run_capped("flag", "--bench", str(bench(tmp_path / "b")), "--responses", str(log))
    assert_one_line_error(
        run.err, run.code, "run.eval:samples/1_epoch_1.json:", "inflates past 268,435,456 bytes"
    )
    assert run.peak_mb < 450, run.peak_mb  # the limit and a 1 MiB step, not zipfile's 2 GiB call


def test_a_zstd_frame_claiming_100_gb_is_not_allocated(tmp_path: Path) -> None:
    window = bytes([10 << 3])  # a 1 MiB window (not single-segment)
    content = struct.pack("<Q", 100 * 2**30)  # Frame_Content_Size: 100 GiB
    block = (1 | 1 << 1 | (128 * 1024) << 3).to_bytes(3, "little") + b" "  # one last RLE block
    frame = b"\x28\xb5\x2f\xfd" + bytes([0b11000000]) + window + content + block
    assert len(frame) < 30
    log = tmp_path / "run.eval"
    write_zip(
        log,
        [
            stored("header.json", json.dumps(HEADER).encode()),
            ("samples/1_epoch_1.json", 93, frame, 1000, 0, 0),
        ],
    )
    run = run_capped("flag", "--bench", str(bench(tmp_path / "b")), "--responses", str(log))
    assert_one_line_error(run.err, run.code, "run.eval:samples/1_epoch_1.json:", "corrupt member")
    assert run.peak_mb < 300, run.peak_mb


def _pack(code: int, data: bytes) -> bytes:
    if code == 8:
        return zlib.compress(data)[2:-4]  # the raw DEFLATE stream
    if code == 12:
        return bz2.compress(data)
    if code == 14:
        compressor = zipfile.LZMACompressor()
        return compressor.compress(data) + compressor.flush()
    import zstandard

    return zstandard.ZstdCompressor().compress(data)


def test_every_method_reads_back_an_honest_member(tmp_path: Path, run_cli) -> None:
    members = [stored("header.json", json.dumps(HEADER).encode())]
    for number, code in enumerate((0, 8, 12, 14, 93), start=1):
        data = json.dumps(sample(number)).encode()
        raw = data if code == 0 else _pack(code, data)
        flags = 0x2 if code == 14 else 0
        members.append(
            (f"samples/{number}_epoch_1.json", code, raw, len(data), zlib.crc32(data), flags)
        )
    log = tmp_path / "run.eval"
    write_zip(log, members)
    result = run_cli("flag", "--bench", str(bench(tmp_path / "b", 5)), "--responses", str(log))
    assert result.code == 0, result.err


def test_an_encrypted_member_is_a_one_line_error(tmp_path: Path, run_cli) -> None:
    log = tmp_path / "run.eval"
    write_zip(
        log,
        [
            stored("header.json", json.dumps(HEADER).encode()),
            stored("samples/1_epoch_1.json", json.dumps(sample(1)).encode(), flags=0x1),
        ],
    )
    result = run_cli("flag", "--bench", str(bench(tmp_path / "b")), "--responses", str(log))
    assert_one_line_error(result.err, result.code, "run.eval:samples/1_epoch_1.json:", "encrypted")


# ---- item 4: a memory budget for what a run keeps


def test_a_document_of_empty_objects_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    """250 MiB of ``[{},{},...]`` in one member: 6 GB once parsed, within every per-item limit."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    chunk = b"{}," * (MB // 3)
    parts, size, crc = [compressor.compress(b"[")], 1, zlib.crc32(b"[")
    while size < 250 * MB:
        parts.append(compressor.compress(chunk))
        size, crc = size + len(chunk), zlib.crc32(chunk, crc)
    parts += [compressor.compress(b"{}]"), compressor.flush()]
    size, crc = size + 3, zlib.crc32(b"{}]", crc)
    log = tmp_path / "run.eval"
    write_zip(
        log,
        [
            stored("header.json", json.dumps(HEADER).encode()),
            ("samples/1_epoch_1.json", 8, b"".join(parts), size, crc, 0),
        ],
    )
    assert log.stat().st_size < 1_000_000
    run = run_capped("flag", "--bench", str(bench(tmp_path / "b")), "--responses", str(log))
    line = assert_one_line_error(
        run.err, run.code, "run.eval:samples/1_epoch_1.json:", "memory budget of 2,048 MiB"
    )
    assert "KEYAUDIT_RESPONSE_MEMORY" in line
    assert run.peak_mb < 800, run.peak_mb  # its bytes and its text, never its objects


def test_many_large_samples_stop_at_the_budget(tmp_path: Path) -> None:
    """20 samples of 200 MiB each, scaled down with the budget: 20 samples of 8 MiB, 64 MiB
    (each its own text: equal texts are kept once)."""
    log = tmp_path / "run.eval"
    with zipfile.ZipFile(log, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps(HEADER))
        for i in range(1, 21):
            text = f"{i:02d}" + "x" * 8 * MB
            archive.writestr(f"samples/{i:02d}_epoch_1.json", json.dumps(sample(i, text)))
    run = run_capped(
        "flag",
        "--bench",
        str(bench(tmp_path / "b", 20)),
        "--responses",
        str(log),
        env={"KEYAUDIT_RESPONSE_MEMORY": "64"},
    )
    assert_one_line_error(run.err, run.code, "run.eval:samples/", "memory budget of 64 MiB")
    assert run.peak_mb < 250, run.peak_mb


def test_many_long_lines_stop_at_the_budget(tmp_path: Path) -> None:
    """200 lines of 15 MiB in a .jsonl.gz, scaled down: 40 lines of 4 MiB against 64 MiB (each
    its own text: equal texts are kept once)."""
    path = tmp_path / "r.jsonl.gz"
    with gzip.open(path, "wb") as out:
        for i in range(1, 41):
            row = {"id": f"dom_{i:04d}_q5", "model": "m", "response": f"{i:02d}" + "x" * 4 * MB}
            out.write(json.dumps(row).encode() + b"\n")
    run = run_capped(
        "flag",
        "--bench",
        str(bench(tmp_path / "b", 40)),
        "--responses",
        str(path),
        env={"KEYAUDIT_RESPONSE_MEMORY": "64"},
    )
    line = assert_one_line_error(run.err, run.code, "r.jsonl.gz:", "memory budget of 64 MiB")
    assert line.split("r.jsonl.gz:")[1].split(":")[0].isdigit()  # file:line
    assert run.peak_mb < 250, run.peak_mb


def test_lm_eval_repeats_count_against_the_budget(tmp_path: Path, run_cli, monkeypatch) -> None:
    folder = tmp_path / "lm"
    folder.mkdir()
    results = {
        "model_name": "m",
        "results": {},
        "configs": {"t": {"filter_list": [{"name": "f"}]}},
    }
    (folder / "results_2024.json").write_text(json.dumps(results), encoding="utf-8")
    line = {
        "doc_id": 0,
        "doc": {"id": "dom_0001_q5"},
        "filter": "f",
        "metrics": ["exact_match"],
        "exact_match": 1,
        # 20,000 repeats of one document, each its own text (equal texts are kept once)
        "resps": [[f"ANSWER: stable {n:05d} " + "x" * 200 for n in range(20_000)]],
    }
    (folder / "samples_t_2024.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    monkeypatch.setenv("KEYAUDIT_RESPONSE_MEMORY", "4")
    result = run_cli("flag", "--bench", str(bench(tmp_path / "b")), "--responses", str(folder))
    assert_one_line_error(result.err, result.code, "samples_t_2024.jsonl:1:", "memory budget")
    monkeypatch.setenv("KEYAUDIT_RESPONSE_MEMORY", "64")
    result = run_cli("flag", "--bench", str(bench(tmp_path / "c")), "--responses", str(folder))
    assert result.code == 0, result.err


@pytest.mark.parametrize("value", ["0", "-5", "1.5", "lots", "\u0661\u0662", str(2**40)])
def test_a_bad_budget_setting_is_a_usage_error(tmp_path: Path, run_cli, monkeypatch, value) -> None:
    monkeypatch.setenv("KEYAUDIT_RESPONSE_MEMORY", value)
    result = run_cli("flag", "--bench", str(bench(tmp_path / "b")))
    assert_one_line_error(result.err, result.code, "KEYAUDIT_RESPONSE_MEMORY")


def test_the_example_keeps_a_small_part_of_the_budget() -> None:
    from keyaudit.engine.load.benchmark import load_benchmark
    from keyaudit.engine.load.budget import DEFAULT_MIB, RESPONSE_OVERHEAD
    from keyaudit.engine.load.locate import example_benchmark_dir

    loaded = load_benchmark(example_benchmark_dir())
    texts = {r.text for r in loaded.responses}  # equal texts are kept (and charged) once
    kept = sum(map(sys.getsizeof, texts)) + RESPONSE_OVERHEAD * len(loaded.responses)
    assert kept < 16 * MB  # README: about 5 MiB
    # the scale benchmark (2,480,000 responses of the same generator): about 350 MiB
    per_response = kept / len(loaded.responses)
    assert 2_480_000 * per_response < DEFAULT_MIB * MB * 0.55


def test_readme_states_the_loader_limits() -> None:
    from keyaudit.engine.load import budget
    from keyaudit.engine.load.responses import zipmember

    page = Path(__file__).resolve().parent.parent / "docs" / "security-and-limits.md"
    readme = page.read_text(encoding="utf-8")
    table = readme[readme.index("### Every limit, and what happens at it") :]
    table = table[: table.index("\n\n", table.index("| what |"))]
    for fragment in (
        f"{budget.DEFAULT_MIB:,} MiB (`{budget.ENVIRONMENT}`",
        f"counts {budget.RESPONSE_OVERHEAD} bytes",
        f"{budget.BYTES_PER_SEPARATOR} bytes per",
        f"zstd windows up to {zipmember.ZSTD_MAX_WINDOW >> 20} MiB",
        f"LZMA dictionaries up to {zipmember.LZMA_MAX_DICTIONARY >> 20} MiB",
        f"inflated at most {zipmember.INFLATE_BYTES >> 20} MiB at a time",
    ):
        assert fragment in table, fragment


# ---- item 9, F13: a gzip of 256 MiB of newlines


def test_a_gzip_of_256_mib_of_newlines_ends_in_seconds(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl.gz"
    with gzip.open(path, "wb", compresslevel=6) as out:
        for _ in range(256):
            out.write(b"\n" * MB)
    assert path.stat().st_size < 2 * MB
    # blank lines were skipped one readline at a time: over 120 s of CPU; the cap is 40 s
    run = run_capped(
        "flag", "--bench", str(bench(tmp_path / "b")), "--responses", str(path), cpu_s=40
    )
    assert run.code == 0, (run.code, run.err)
    assert run.seconds < 40, run.seconds


def test_blank_lines_skipped_in_bulk_keep_line_numbers(tmp_path: Path, run_cli) -> None:
    root = bench(tmp_path / "b")
    path = tmp_path / "r.jsonl.gz"
    blank = b"\n" * 300_000 + b"  \r\n\t\n" * 50_000  # 400,000 blank lines
    row = json.dumps({"id": "dom_0001_q5", "model": "m", "response": "ANSWER: stable"}).encode()
    path.write_bytes(gzip.compress(blank + row + b"\n" + blank + b"{oops\n"))
    result = run_cli("flag", "--bench", str(root), "--responses", str(path))
    assert_one_line_error(result.err, result.code, "r.jsonl.gz:800002:2:", "malformed JSON")
    plain = tmp_path / "r.jsonl"
    plain.write_bytes(blank + row + b"\n" + b"\x0c\n")  # a form feed is not JSON whitespace
    result = run_cli("flag", "--bench", str(root), "--responses", str(plain))
    assert_one_line_error(result.err, result.code, "r.jsonl:400002:", "malformed JSON")


# ---- item 6: paths in benchmark.toml stay in the benchmark folder


def own_responses(path: Path, n: int = 1, model: str = "m") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(
            json.dumps({"id": f"dom_{i:04d}_q5", "model": model, "response": "ANSWER: stable"})
            + "\n"
            for i in range(1, n + 1)
        ),
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize(
    "kind, fragment",
    [
        ("absolute", "is absolute"),
        ("root", "is absolute"),
        ("dotdot", "climbs out of the benchmark folder with '..'"),
        ("link", "leads out of the benchmark folder through a symbolic link"),
    ],
)
def test_a_responses_path_outside_the_benchmark_is_refused(
    tmp_path: Path, run_cli, kind: str, fragment: str
) -> None:
    root = bench(tmp_path / "b")
    outside = own_responses(tmp_path / "elsewhere" / "m.jsonl")
    value = {
        "absolute": str(outside),
        "root": "/",
        "dotdot": "../elsewhere/m.jsonl",
        "link": "logs",
    }[kind]
    if kind == "link":
        (root / "logs").symlink_to(outside.parent)
    own_responses(root / "responses" / "n.jsonl", model="n")
    (root / "benchmark.toml").write_text(
        f'name = "b"\n[[responses]]\npath = "responses"\n\n[[responses]]\n  path = {json.dumps(value)}\n',
        encoding="utf-8",
    )
    result = run_cli("flag", "--bench", str(root))
    line = assert_one_line_error(
        result.err, result.code, "benchmark.toml:6:", f"[[responses]] path {fragment}"
    )
    assert "--responses" in line
    # given on the command line, the same file is the user's choice
    result = run_cli("flag", "--bench", str(bench(tmp_path / "c")), "--responses", str(outside))
    assert result.code == 0, result.err


def test_the_first_responses_table_without_a_path_is_still_an_error(
    tmp_path: Path, run_cli
) -> None:
    root = bench(tmp_path / "b")
    (root / "benchmark.toml").write_text('[[responses]]\nformat = "jsonl"\n', encoding="utf-8")
    result = run_cli("flag", "--bench", str(root))
    assert_one_line_error(result.err, result.code, "needs a 'path'")


@pytest.mark.parametrize("kind", ["absolute", "dotdot", "link"])
def test_a_keys_path_outside_the_benchmark_is_refused(tmp_path: Path, run_cli, kind) -> None:
    root = tmp_path / "b"
    root.mkdir()
    keys = bench(tmp_path / "elsewhere") / "keys"
    value = {"absolute": str(keys), "dotdot": "../elsewhere/keys", "link": "k"}[kind]
    if kind == "link":
        (root / "k").symlink_to(keys)
    (root / "benchmark.toml").write_text(
        f'[keys]\nformat = "jsonl"\npath = {json.dumps(value)}\n', encoding="utf-8"
    )
    result = run_cli("flag", "--bench", str(root))
    assert_one_line_error(result.err, result.code, "benchmark.toml:3:", "[keys] path")


def test_paths_and_links_inside_the_benchmark_are_read(tmp_path: Path, run_cli) -> None:
    root = bench(tmp_path / "b", 2)
    own_responses(root / "logs" / "real" / "m.jsonl", 2)
    (root / "logs" / "here").symlink_to(root / "logs" / "real")  # a link that stays inside
    (root / "benchmark.toml").write_text(
        '[keys]\npath = "./keys/../keys"\n[[responses]]\npath = "logs/here"\n', encoding="utf-8"
    )
    result = run_cli("flag", "--bench", str(root))
    assert result.code == 0, result.err


# ---- item 8: symbolic links to folders inside a responses folder


def test_a_symlinked_sub_folder_is_read(tmp_path: Path, run_cli) -> None:
    root = bench(tmp_path / "b", 2)
    own_responses(root / "runs" / "one" / "m.jsonl", 2, model="m")
    (root / "responses").mkdir()
    own_responses(root / "responses" / "n.jsonl", 2, model="n")
    (root / "responses" / "linked").symlink_to(root / "runs" / "one")
    from keyaudit.engine.load.benchmark import load_benchmark

    assert load_benchmark(root).models == ("m", "n")  # m was skipped without a word
    result = run_cli("flag", "--bench", str(root))
    assert result.code == 0, result.err


def test_a_symlinked_sub_folder_outside_the_benchmark_is_refused(tmp_path: Path, run_cli) -> None:
    root = bench(tmp_path / "b", 2)
    own_responses(tmp_path / "elsewhere" / "m.jsonl", 2)
    (root / "responses").mkdir()
    (root / "responses" / "linked").symlink_to(tmp_path / "elsewhere")
    result = run_cli("flag", "--bench", str(root))
    assert_one_line_error(result.err, result.code, "responses/linked:", "outside the benchmark")
    # named on the command line, a folder holding the same link is followed
    result = run_cli("flag", "--bench", str(root), "--responses", str(root / "responses"))
    assert result.code == 0, result.err


@pytest.mark.parametrize("target", ["self", "parent", "sibling"])
def test_a_symlink_loop_among_response_folders_is_an_error(
    tmp_path: Path, run_cli, target: str
) -> None:
    root = bench(tmp_path / "b", 2)
    folder = root / "responses" / "run"
    own_responses(folder / "m.jsonl", 2)
    link = folder / "again"
    link.symlink_to({"self": folder, "parent": root / "responses", "sibling": folder}[target])
    if target == "sibling":
        link.unlink()
        (root / "responses" / "latest").symlink_to(folder)  # the same files a second way
    result = run_cli("flag", "--bench", str(root))
    assert_one_line_error(result.err, result.code, "the same folder as", "symbolic link")


# ---- item 7: no output onto a file the run reads


@pytest.mark.parametrize("how", ["symlink", "hardlink"])
@pytest.mark.parametrize("which", ["response", "key"])
def test_an_output_onto_a_file_the_benchmark_reads_from_elsewhere_is_refused(
    tmp_path: Path, run_cli, how: str, which: str
) -> None:
    """A key or response file of the benchmark that lives outside it (a link to it, a hard link,
    as git-annex and DVC data do): the folder check alone let --json overwrite it, exit 0."""
    root = bench(tmp_path / "b")
    outside = tmp_path / "store"
    outside.mkdir()
    if which == "key":
        real = outside / "k.jsonl"
        (root / "keys" / "k.jsonl").rename(real)
        inside = root / "keys" / "k.jsonl"
    else:
        real = own_responses(outside / "m.jsonl")
        (root / "responses").mkdir()
        inside = root / "responses" / "m.jsonl"
    if how == "symlink":
        inside.symlink_to(real)
    else:
        os.link(real, inside)
    before = real.read_bytes()
    result = run_cli("flag", "--bench", str(root), "--json", str(real))
    assert_one_line_error(result.err, result.code, "--json", "keyaudit only reads")
    result = run_cli("keys", "--bench", str(root), "--json", str(real))
    assert_one_line_error(result.err, result.code, "--json", "keyaudit only reads")
    assert real.read_bytes() == before


def test_an_output_onto_a_rule_grammar_is_refused(tmp_path: Path, run_cli) -> None:
    from keyaudit.engine.load.locate import resolve_rule_path

    bundled = resolve_rule_path("physical_stability")
    folder = tmp_path / "rule"
    folder.mkdir()
    rule = folder / "ps.toml"
    rule.write_text(bundled.read_text(encoding="utf-8"), encoding="utf-8")
    grammar = folder / "notes.lark"  # any grammar beside the rule may be %import-ed by it
    grammar.write_text("// notes\n", encoding="utf-8")
    for option in ("--json", "--markdown"):
        result = run_cli("check", str(rule), option, str(grammar))
        assert_one_line_error(result.err, result.code, option, "keyaudit only reads")
    assert grammar.read_text(encoding="utf-8") == "// notes\n"


# ---- item 10: the low loader items


@pytest.mark.parametrize(
    "header, fragment",
    [
        ({**HEADER, "results": "done"}, "'results' must be an object, got a string"),
        ({**HEADER, "results": {"scores": 5}}, "'results.scores' must be a list, got a number"),
        (
            {"status": "success", "eval": {"model": "m", "scorers": {"name": "s"}}},
            "'eval.scorers' must be a list, got an object",
        ),
        ({"status": "success", "eval": ["m"]}, "'eval' must be an object, got a list"),
        ({**HEADER, "status": ["x" * 1000]}, "run status is a list, not 'success'"),
    ],
)
def test_a_wrong_typed_inspect_header_is_a_one_line_error(
    tmp_path: Path, run_cli, header: dict, fragment: str
) -> None:
    log = tmp_path / "run.eval"
    with zipfile.ZipFile(log, "w") as archive:
        archive.writestr("header.json", json.dumps(header))
        archive.writestr("samples/1_epoch_1.json", json.dumps(sample(1)))
    result = run_cli("flag", "--bench", str(bench(tmp_path / "b")), "--responses", str(log))
    line = assert_one_line_error(result.err, result.code, "run.eval:header.json:", fragment)
    assert "xxxx" not in line  # the log's content is not echoed
    as_json = tmp_path / "run.json"  # the same header in a --log-format json log
    as_json.write_text(json.dumps({**header, "samples": [sample(1)]}), encoding="utf-8")
    result = run_cli("flag", "--bench", str(bench(tmp_path / "c")), "--responses", str(as_json))
    assert_one_line_error(result.err, result.code, "run.json:", fragment)


@pytest.mark.parametrize(
    "configs, fragment",
    [
        ([], "'configs' must be an object, got a list"),
        ({"t": ["f"]}, "'configs.t' must be an object, got a list"),
        ({"t": {"filter_list": "f"}}, "'configs.t.filter_list' must be a list, got a string"),
    ],
)
def test_a_wrong_typed_lm_eval_config_is_a_one_line_error(
    tmp_path: Path, run_cli, configs, fragment: str
) -> None:
    folder = tmp_path / "lm"
    folder.mkdir()
    results = {"model_name": "m", "results": {}, "configs": configs}
    (folder / "results_2024.json").write_text(json.dumps(results), encoding="utf-8")
    line = {
        "doc_id": 0,
        "doc": {"id": "dom_0001_q5"},
        "filter": "f",
        "metrics": ["exact_match"],
        "exact_match": 1,
        "resps": [["ANSWER: stable"]],
    }
    (folder / "samples_t_2024.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    result = run_cli("flag", "--bench", str(bench(tmp_path / "b")), "--responses", str(folder))
    assert_one_line_error(result.err, result.code, "results_2024.json:", fragment)


def test_a_second_header_json_is_an_error(tmp_path: Path, run_cli) -> None:
    log = tmp_path / "run.eval"
    with zipfile.ZipFile(log, "w") as archive:
        archive.writestr("header.json", json.dumps({**HEADER, "status": "error"}))
        archive.writestr("samples/1_epoch_1.json", json.dumps(sample(1)))
        with pytest.warns(UserWarning, match="Duplicate name"):
            archive.writestr("header.json", json.dumps(HEADER))  # zipfile read this one alone
    result = run_cli("flag", "--bench", str(bench(tmp_path / "b")), "--responses", str(log))
    assert_one_line_error(result.err, result.code, "run.eval:header.json:", "twice")


@pytest.mark.parametrize("column", ["id", "model", "response", "correct"])
def test_a_duplicated_column_of_a_responses_csv_is_an_error(
    tmp_path: Path, run_cli, column: str
) -> None:
    header = ["id", "model", "response", "correct", column]
    values = {"id": "dom_0001_q5", "model": "m", "response": "ANSWER: stable", "correct": "true"}
    other = {"id": "dom_0002_q5", "model": "n", "response": "ANSWER: unstable", "correct": "no"}
    path = tmp_path / "r.csv"
    path.write_text(
        ",".join(header) + "\n" + ",".join([*values.values(), other[column]]) + "\n",
        encoding="utf-8",
    )
    result = run_cli("flag", "--bench", str(bench(tmp_path / "b", 2)), "--responses", str(path))
    assert_one_line_error(result.err, result.code, "r.csv:1:", f"column '{column}' appears 2")


@pytest.mark.parametrize("column", ["question_id", "groundtruth", "answer"])
def test_a_duplicated_column_of_a_key_csv_is_an_error(tmp_path: Path, run_cli, column) -> None:
    root = tmp_path / "b"
    (root / "keys").mkdir(parents=True)
    header = "question_id,groundtruth" if column != "answer" else "id,answer"
    row = "dom_0001_q5,stable" if column != "answer" else "dom_0001_q5,stable"
    (root / "keys" / "k.csv").write_text(
        f"{header},{column}\n{row},dom_0002_q5\n", encoding="utf-8"
    )
    result = run_cli("flag", "--bench", str(root))
    assert_one_line_error(result.err, result.code, "k.csv:1:", f"column '{column}' appears 2")


@pytest.mark.parametrize("where", ["inspect-json", "lm-eval-results"])
def test_a_json_file_of_empty_objects_is_refused_before_it_is_parsed(
    tmp_path: Path, run_cli, monkeypatch, where: str
) -> None:
    """The same document shape as a --log-format json log or an lm-eval results file, against a
    16 MiB budget: 4 MiB of ``{},`` would take about 100 MiB parsed."""
    filler = "[" + "{}," * (4 * MB // 3) + "{}]"
    monkeypatch.setenv("KEYAUDIT_RESPONSE_MEMORY", "16")
    if where == "inspect-json":
        path = tmp_path / "run.json"
        path.write_text(
            json.dumps({**HEADER, "samples": [sample(1)]})[:-1] + ', "x": ' + filler + "}",
            encoding="utf-8",
        )
        name = "run.json:"
    else:
        path = tmp_path / "lm"
        path.mkdir()
        results = {"model_name": "m", "results": {}, "configs": {"t": {"filter_list": []}}}
        (path / "results_2024.json").write_text(
            json.dumps(results)[:-1] + ', "x": ' + filler + "}", encoding="utf-8"
        )
        (path / "samples_t_2024.jsonl").write_text(
            json.dumps({"doc_id": 0, "doc": {"id": "dom_0001_q5"}, "filter": "f", "resps": []})
            + "\n",
            encoding="utf-8",
        )
        name = "results_2024.json:"
    result = run_cli("flag", "--bench", str(bench(tmp_path / "b")), "--responses", str(path))
    assert_one_line_error(result.err, result.code, name, "memory budget of 16 MiB")
