"""Make an NCCL wheel's libnccl.so.2 carryable to one GPU architecture: zero every fatbin entry that
architecture cannot load, compress, and prove that nothing it loads changed.

NCCL 2.31.2's wheel (``nvidia-nccl-cu13``) holds a 299 MB libnccl.so.2, most of it device code for six
architectures; the GPU machines are H100/H200 (sm_90) and a carried folder holds at most 64 MiB. Zeroed
bytes compress to almost nothing, so the file keeps its size and every offset (no relinking, no section
moved) and only payloads no sm_90 device reads become zeros.

The fatbin layout, read from public parsers (n-eiling/cuda-fatbin-decompression ``fatbin-decompress.h``,
jiegec/fatbinary ``src/lib.rs``), all little-endian:

- a container: ``u32 magic 0xBA55ED50, u16 version (1), u16 header_size (16), u64 fat_size`` (bytes of
  entries after this header);
- then entries, each ``u16 kind (1 PTX, 2 ELF), u16 version, u32 header_size, u64 size (payload bytes
  after the entry header), u32 compressed_size, u32 options_offset, u16 minor, u16 major, u32 arch,
  u32 obj_name_offset, u32 obj_name_len, u64 flags, u64 zero, u64 decompressed_size`` (64 bytes; a PTX
  entry's header is longer, as its header_size says); the next entry starts at
  ``entry + header_size + size``.

The parse checks itself: the entries of every container must chain exactly to the container's end, and
the containers to their section's end (only zero padding between), or the tool stops. A container that
has no ELF for the kept architecture (NCCL's sm_100-only kernels) is left whole: the rule is "zero only
what a device of this architecture would never pick", and the driver picks within a container.

    python benchmarks/nccl_slim.py SRC_LIBNCCL OUT_DIR [--arch 90] [--include DIR] [--preset 9]

writes ``OUT_DIR/lib/libnccl.so.2.xz``, ``OUT_DIR/include/`` (copied from --include) and
``OUT_DIR/slim.json`` (what was zeroed, the checksums, the sizes) and prints that report.
"""

from __future__ import annotations

import argparse
import hashlib
import lzma
import shutil
import struct
import sys
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel, ConfigDict

FATBIN_MAGIC = 0xBA55ED50
CONTAINER = struct.Struct("<IHHQ")
ENTRY = struct.Struct("<HHIQIIHHIIIQQQ")
KIND_PTX, KIND_ELF = 1, 2
# The ELF sections whose contents are fatbin containers: ``.nv_fatbin`` (what the CUDA runtime registers
# and loads) and ``__nv_relfatbin`` (relocatable device code kept for device linking).
FATBIN_SECTIONS = (".nv_fatbin", "__nv_relfatbin")


class SlimError(Exception):
    """The input is not what this tool can slim safely (one line: what, where)."""


class Entry(BaseModel):
    model_config = ConfigDict(frozen=True)

    offset: int
    kind: int
    arch: int
    header_size: int
    size: int
    flags: int

    @property
    def payload(self) -> tuple[int, int]:
        start = self.offset + self.header_size
        return start, start + self.size


class Container(BaseModel):
    model_config = ConfigDict(frozen=True)

    section: str
    offset: int
    end: int
    entries: list[Entry]

    def keeps(self, arch: int) -> bool:
        return any(e.kind == KIND_ELF and e.arch == arch for e in self.entries)


class SectionCount(BaseModel):
    containers: int
    with_kept_elf: int
    entries_zeroed: int
    bytes_zeroed: int


class SlimReport(BaseModel):
    """What one slimming did, and the sizes that decide whether it can be carried."""

    source: str
    arch: int
    original_bytes: int
    original_sha256: str
    slim_sha256: str
    compressed_bytes: int
    compressed_sha256: str
    sections: dict[str, SectionCount]
    kept_entries_identical: int
    nonzero_bytes_by_section: dict[str, int]


def elf_sections(data: bytes) -> dict[str, tuple[int, int]]:
    """Section name -> (file offset, size) of a little-endian ELF64 file."""
    if data[:6] != b"\x7fELF\x02\x01":
        raise SlimError("not a little-endian 64-bit ELF file")
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    entsize, count, names_index = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * entsize) for i in range(count)]
    names_at = headers[names_index][4]
    sections = {}
    for name_off, kind, _flags, _addr, offset, size, *_rest in headers:
        start = names_at + name_off
        name = data[start : data.index(b"\0", start)].decode()
        sections[name] = (offset, size if kind != 8 else 0)  # SHT_NOBITS has no bytes in the file
    return sections


def _entries(data: bytes, start: int, end: int) -> Iterator[Entry]:
    pos = start
    while pos < end:
        kind, _ver, header_size, size, _csize, _opts, _minor, _major, arch, *_n, flags, _z, _d = (
            ENTRY.unpack_from(data, pos)
        )
        if header_size < ENTRY.size:
            raise SlimError(f"fatbin entry at offset {pos:#x}: header size {header_size} < {ENTRY.size}")
        yield Entry(offset=pos, kind=kind, arch=arch, header_size=header_size, size=size, flags=flags)
        pos += header_size + size
    if pos != end:
        raise SlimError(f"fatbin entries end at {pos:#x}, not at their container's end {end:#x}")


def containers(data: bytes, section: str, start: int, size: int) -> list[Container]:
    """Every container of one section, parsed and checked to chain exactly to the section's end."""
    found: list[Container] = []
    pos, end = start, start + size
    while pos < end:
        if data[pos] == 0:  # alignment padding between containers
            pos += 1
            continue
        magic, version, header_size, fat_size = CONTAINER.unpack_from(data, pos)
        if magic != FATBIN_MAGIC or version != 1 or header_size != CONTAINER.size:
            raise SlimError(
                f"{section} at offset {pos:#x}: magic {magic:#x} version {version} header {header_size}, "
                f"expected {FATBIN_MAGIC:#x} 1 {CONTAINER.size}"
            )
        body, stop = pos + header_size, pos + header_size + fat_size
        if stop > end:
            raise SlimError(f"{section}: container at {pos:#x} runs past the section's end {end:#x}")
        found.append(
            Container(section=section, offset=pos, end=stop, entries=list(_entries(data, body, stop)))
        )
        pos = stop
    return found


def all_containers(data: bytes) -> list[Container]:
    sections = elf_sections(data)
    missing = [name for name in FATBIN_SECTIONS if name not in sections]
    if len(missing) == len(FATBIN_SECTIONS):
        raise SlimError(f"no fatbin section ({', '.join(FATBIN_SECTIONS)}) in this ELF file")
    return [
        c for name in FATBIN_SECTIONS if name in sections for c in containers(data, name, *sections[name])
    ]


def zero_ranges(found: list[Container], arch: int) -> list[tuple[int, int]]:
    """The payloads to zero: every entry but the kept ELF, in containers that hold the kept ELF."""
    return [
        e.payload
        for c in found
        if c.keeps(arch)
        for e in c.entries
        if not (e.kind == KIND_ELF and e.arch == arch)
    ]


def slim(original: bytes, arch: int) -> tuple[bytearray, list[Container], list[tuple[int, int]]]:
    found = all_containers(original)
    ranges = zero_ranges(found, arch)
    out = bytearray(original)
    for start, stop in ranges:
        out[start:stop] = bytes(stop - start)
    return out, found, ranges


def verify(original: bytes, slimmed: bytes, arch: int, ranges: list[tuple[int, int]]) -> int:
    """Re-parse the slim copy; returns how many kept entries are byte-identical (all, or SlimError)."""
    if len(slimmed) != len(original):
        raise SlimError(f"slim copy is {len(slimmed)} bytes, the original {len(original)}")
    before, after = all_containers(original), all_containers(slimmed)
    if [(c.offset, c.end, c.entries) for c in before] != [(c.offset, c.end, c.entries) for c in after]:
        raise SlimError("the slim copy's fatbin headers differ from the original's")
    kept = 0
    for container in after:
        if not container.keeps(arch):
            continue
        for e in container.entries:
            if e.kind == KIND_ELF and e.arch == arch:
                start, stop = e.offset, e.payload[1]
                if slimmed[start:stop] != original[start:stop]:
                    raise SlimError(f"kept sm_{arch} entry at {start:#x} changed")
                kept += 1
    pos = 0
    for start, stop in sorted(ranges):  # outside the zeroed payloads, every byte is the original's
        if slimmed[pos:start] != original[pos:start] or slimmed[start:stop].count(0) != stop - start:
            raise SlimError(f"bytes around the zeroed payload at {start:#x} are not as intended")
        pos = stop
    if slimmed[pos:] != original[pos:]:
        raise SlimError("bytes after the last zeroed payload changed")
    return kept


def nonzero_by_section(data: bytes) -> dict[str, int]:
    """Non-zero bytes left per section (what the compressed size is made of), largest first."""
    counts = {
        name: size - data[off : off + size].count(0) for name, (off, size) in elf_sections(data).items()
    }
    return dict(sorted(((n, c) for n, c in counts.items() if c > 0), key=lambda nc: -nc[1]))


def run(source: Path, out_dir: Path, arch: int, include: Path | None, preset: int) -> SlimReport:
    original = source.read_bytes()
    slimmed, found, ranges = slim(original, arch)
    kept = verify(original, bytes(slimmed), arch, ranges)
    if kept == 0:
        raise SlimError(f"{source}: no sm_{arch} ELF entry in any fatbin container; choose another --arch")
    packed = lzma.compress(slimmed, preset=preset | lzma.PRESET_EXTREME)
    if hashlib.sha256(lzma.decompress(packed)).digest() != hashlib.sha256(slimmed).digest():
        raise SlimError("xz round trip of the slim copy does not give it back")
    (out_dir / "lib").mkdir(parents=True, exist_ok=True)
    (out_dir / "lib" / f"{source.name}.xz").write_bytes(packed)
    if include is not None:
        shutil.copytree(include, out_dir / "include", dirs_exist_ok=True)
    counts: dict[str, SectionCount] = {}
    zeroed = set(ranges)
    for name in FATBIN_SECTIONS:
        mine = [c for c in found if c.section == name]
        gone = [e for c in mine for e in c.entries if e.payload in zeroed]
        counts[name] = SectionCount(
            containers=len(mine),
            with_kept_elf=sum(c.keeps(arch) for c in mine),
            entries_zeroed=len(gone),
            bytes_zeroed=sum(e.size for e in gone),
        )
    report = SlimReport(
        source=str(source),
        arch=arch,
        original_bytes=len(original),
        original_sha256=hashlib.sha256(original).hexdigest(),
        slim_sha256=hashlib.sha256(slimmed).hexdigest(),
        compressed_bytes=len(packed),
        compressed_sha256=hashlib.sha256(packed).hexdigest(),
        sections=counts,
        kept_entries_identical=kept,
        nonzero_bytes_by_section=nonzero_by_section(bytes(slimmed)),
    )
    (out_dir / "slim.json").write_text(report.model_dump_json(indent=1) + "\n")
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="libnccl.so.2 to slim (read only)")
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--arch", type=int, default=90, help="the SM to keep (90: H100/H200)")
    parser.add_argument("--include", type=Path, help="NCCL's include/ folder, copied beside lib/")
    parser.add_argument("--preset", type=int, default=9, choices=range(10), help="xz preset (extreme)")
    args = parser.parse_args(argv)
    try:
        report = run(args.source, args.out_dir, args.arch, args.include, args.preset)
    except (SlimError, OSError) as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    print(report.model_dump_json(indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
