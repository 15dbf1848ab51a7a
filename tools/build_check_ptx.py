"""Compile the direct engine's check kernels (``src/gpufabric/engines/nccl/kernels/check.cu``) to PTX.

NVRTC needs no GPU, so this runs anywhere: ``pip install nvidia-cuda-nvrtc-cu12==12.0.*`` (into any
environment) and run ``python tools/build_check_ptx.py [--nvrtc PATH/libnvrtc.so.12]``. NVRTC 12.0 for
``compute_70`` gives PTX ISA 8.0, which every driver of CUDA 12.0 or newer JIT-compiles for its own GPU
(Volta and newer), so users need neither NVRTC nor nvcc. The PTX is committed next to the source; a test
checks it was built from the committed source (the source's hash is in the PTX's first line).
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import hashlib
import sys
import sysconfig
from pathlib import Path

KERNELS = Path(__file__).resolve().parents[1] / "src/gpufabric/engines/nccl/kernels"
OPTIONS = [b"--gpu-architecture=compute_70", b"--std=c++11"]


def find_nvrtc(explicit: str | None) -> str:
    if explicit:
        return explicit
    pattern = f"{sysconfig.get_paths()['purelib']}/nvidia/cuda_nvrtc/lib/libnvrtc.so.12"
    found = glob.glob(pattern)
    if not found:
        hint = "pip install 'nvidia-cuda-nvrtc-cu12==12.0.*' or pass --nvrtc PATH"
        sys.exit(f"libnvrtc.so.12 not found at {pattern}; {hint}")
    return found[0]


def compile_ptx(source: bytes, nvrtc_path: str) -> tuple[str, str]:
    """(ptx, nvrtc version) of ``source``; exits with NVRTC's log on a compile error."""
    nvrtc = ctypes.CDLL(nvrtc_path)
    major, minor = ctypes.c_int(), ctypes.c_int()
    nvrtc.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    program = ctypes.c_void_p()
    status = nvrtc.nvrtcCreateProgram(ctypes.byref(program), source, b"check.cu", 0, None, None)
    if status:
        sys.exit(f"nvrtcCreateProgram failed with status {status}")
    options = (ctypes.c_char_p * len(OPTIONS))(*OPTIONS)
    status = nvrtc.nvrtcCompileProgram(program, len(OPTIONS), options)
    log_size = ctypes.c_size_t()
    nvrtc.nvrtcGetProgramLogSize(program, ctypes.byref(log_size))
    log = ctypes.create_string_buffer(log_size.value)
    nvrtc.nvrtcGetProgramLog(program, log)
    if status:
        sys.exit(f"check.cu did not compile (NVRTC status {status}):\n{log.value.decode()}")
    size = ctypes.c_size_t()
    nvrtc.nvrtcGetPTXSize(program, ctypes.byref(size))
    ptx = ctypes.create_string_buffer(size.value)
    nvrtc.nvrtcGetPTX(program, ptx)
    nvrtc.nvrtcDestroyProgram(ctypes.byref(program))
    return ptx.value.decode(), f"{major.value}.{minor.value}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nvrtc", help="libnvrtc.so.12 (default: the nvidia-cuda-nvrtc-cu12 wheel's)")
    args = parser.parse_args()
    source = (KERNELS / "check.cu").read_bytes()
    ptx, version = compile_ptx(source, find_nvrtc(args.nvrtc))
    digest = hashlib.sha256(source).hexdigest()
    header = f"// check.cu sha256 {digest}; NVRTC {version}, {' '.join(o.decode() for o in OPTIONS)}\n"
    (KERNELS / "check.ptx").write_text(header + ptx)
    print(f"wrote {KERNELS / 'check.ptx'} (NVRTC {version})")


if __name__ == "__main__":
    main()
