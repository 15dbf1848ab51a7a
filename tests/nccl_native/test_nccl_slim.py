"""benchmarks/nccl_slim.py: one architecture's fatbin entries kept, every other payload zeroed, nothing moved.

The synthetic library is an ELF64 file built here by the documented layouts (ELF's section headers; the
fatbin container and entry headers as n-eiling/cuda-fatbin-decompression and jiegec/fatbinary read them),
so every expectation below follows from bytes this test wrote. The real NCCL 2.31.2 library is checked
where it lies on this machine (``pip download --no-deps nvidia-nccl-cu13==2.31.2``, unpacked).
"""

from __future__ import annotations

import hashlib
import importlib.util
import lzma
import os
import struct
import sys
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location(
    "nccl_slim", Path(__file__).parents[2] / "benchmarks" / "nccl_slim.py"
)
assert _SPEC is not None and _SPEC.loader is not None
slim_tool = importlib.util.module_from_spec(_SPEC)
sys.modules["nccl_slim"] = slim_tool  # pydantic resolves the models' annotations through it
_SPEC.loader.exec_module(slim_tool)

PTX, ELF = 1, 2


def entry(kind: int, arch: int, payload: bytes, header_size: int = 64) -> bytes:
    """One fatbin entry: its 64-byte header (a PTX entry's may be longer) and its payload."""
    head = struct.pack(
        "<HHIQIIHHIIIQQQ", kind, 0x0101, header_size, len(payload), 0, 0, 8, 1, arch, 0, 0, 0x11, 0, 0
    )
    return head + bytes(header_size - 64) + payload


def container(*entries: bytes) -> bytes:
    body = b"".join(entries)
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body


def elf_with(sections: dict[str, bytes]) -> bytes:
    """A little-endian ELF64 file holding ``sections`` (PROGBITS) and a .shstrtab, headers at the end."""
    names = b"\0" + b"".join(n.encode() + b"\0" for n in [*sections, ".shstrtab"])
    body, headers, offset = b"", [bytes(64)], 64
    for name, data in [*sections.items(), (".shstrtab", names)]:
        name_at = names.index(name.encode() + b"\0")
        headers.append(struct.pack("<IIQQQQIIQQ", name_at, 1 if name != ".shstrtab" else 3, 0, 0,
                                   offset + len(body), len(data), 0, 0, 8, 0))  # fmt: skip
        body += data
    shoff = 64 + len(body)
    ident = b"\x7fELF\x02\x01\x01" + bytes(9)
    header = ident + struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, 0, shoff, 0, 64, 0, 0, 64,
                                 len(headers), len(headers) - 1)  # fmt: skip
    return header + body + b"".join(headers)


SM90 = b"\x7fELF-sm90-kernels" * 8
BOTH = container(
    entry(PTX, 120, b"ptx for compute_120" * 4, header_size=72),
    entry(ELF, 75, b"sm75" * 16),
    entry(ELF, 90, SM90),
    entry(ELF, 100, b"sm100" * 16),
)
ONLY_100 = container(entry(ELF, 100, b"sm100a-only" * 8))
LIBRARY = elf_with({".text": b"\x90" * 40, ".nv_fatbin": BOTH + bytes(8) + ONLY_100, "__nv_relfatbin": BOTH})


def test_every_payload_but_sm90_is_zeroed_in_containers_that_have_sm90() -> None:
    slimmed, found, ranges = slim_tool.slim(LIBRARY, 90)
    assert len(slimmed) == len(LIBRARY)
    assert [(c.section, len(c.entries), c.keeps(90)) for c in found] == [
        (".nv_fatbin", 4, True), (".nv_fatbin", 1, False), ("__nv_relfatbin", 4, True),
    ]  # fmt: skip
    assert len(ranges) == 6  # PTX, sm_75, sm_100 in each of the two containers that keep sm_90
    assert bytes(slimmed).count(SM90) == 2
    assert b"sm100a-only" in slimmed  # a container without sm_90 is left whole
    assert b"sm75" not in slimmed and b"compute_120" not in slimmed and b"sm100sm100" not in slimmed
    assert slim_tool.verify(LIBRARY, bytes(slimmed), 90, ranges) == 2


def test_verify_refuses_a_copy_whose_kept_entry_changed() -> None:
    slimmed, _, ranges = slim_tool.slim(LIBRARY, 90)
    at = bytes(slimmed).index(SM90)
    slimmed[at] ^= 0xFF
    with pytest.raises(slim_tool.SlimError, match="kept sm_90 entry"):
        slim_tool.verify(LIBRARY, bytes(slimmed), 90, ranges)


def test_entries_that_do_not_chain_to_the_container_end_stop_the_tool() -> None:
    broken = bytearray(BOTH)
    struct.pack_into("<Q", broken, 16 + 8, 5)  # the first entry's payload size, 5 bytes instead of 76
    with pytest.raises(slim_tool.SlimError, match=r"not at their container's end|magic"):
        slim_tool.slim(elf_with({".nv_fatbin": bytes(broken)}), 90)


def test_run_writes_the_xz_the_include_copy_and_a_report(tmp_path: Path) -> None:
    source = tmp_path / "libnccl.so.2"
    source.write_bytes(LIBRARY)
    include = tmp_path / "inc"
    include.mkdir()
    (include / "nccl.h").write_text("#define NCCL_MAJOR 2\n")
    out = tmp_path / "out"
    assert slim_tool.main([str(source), str(out), "--include", str(include), "--preset", "1"]) == 0
    report = slim_tool.SlimReport.model_validate_json((out / "slim.json").read_text())
    unpacked = lzma.decompress((out / "lib" / "libnccl.so.2.xz").read_bytes())
    assert hashlib.sha256(unpacked).hexdigest() == report.slim_sha256
    assert report.original_sha256 == hashlib.sha256(LIBRARY).hexdigest()
    assert report.sections[".nv_fatbin"].entries_zeroed == 3
    assert report.sections["__nv_relfatbin"].with_kept_elf == 1
    assert report.kept_entries_identical == 2
    assert (out / "include" / "nccl.h").is_file()


def test_an_architecture_no_container_has_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "libnccl.so.2"
    source.write_bytes(LIBRARY)
    assert slim_tool.main([str(source), str(tmp_path / "out"), "--arch", "80", "--preset", "1"]) == 1


REAL = Path(os.environ.get("NCCL_SLIM_SOURCE", "/tmp/n13/nvidia/nccl/lib/libnccl.so.2"))
REAL_SHA256 = "78103983bb558aef7277a0c05a9a5963e619a69f6e77ece3c449fb045a3368d4"  # nvidia-nccl-cu13 2.31.2


@pytest.mark.skipif(not REAL.is_file(), reason=f"NCCL 2.31.2's libnccl.so.2 is not unpacked at {REAL}")
def test_the_real_nccl_2_31_2_library_parses_to_its_container_counts() -> None:
    data = REAL.read_bytes()
    if hashlib.sha256(data).hexdigest() != REAL_SHA256:
        pytest.skip(f"{REAL} is not the nvidia-nccl-cu13 2.31.2 wheel's libnccl.so.2")
    found = slim_tool.all_containers(data)
    by_section = {
        name: (sum(c.section == name for c in found), sum(c.section == name and c.keeps(90) for c in found))
        for name in slim_tool.FATBIN_SECTIONS
    }
    # counted from the file itself: the 20 containers without sm_90 hold sm_100-only kernels
    assert by_section == {".nv_fatbin": (76, 56), "__nv_relfatbin": (129, 129)}
