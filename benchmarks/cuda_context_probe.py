"""What a rank's start-up cannot avoid on this GPU host: the floor ``gpufabric bench``'s rank set-up is
compared with (``benchmarks/gpu.sh startup``).

In fresh processes, one per GPU started together (as a job's ranks start), each prints its own times:
the interpreter's start to its first line, ``import cuda.bindings.runtime``, the CUDA context
(``cudaSetDevice`` + ``cudaFree(0)``), and libnccl's load (``ctypes.CDLL``, from ``LD_LIBRARY_PATH``).
A second round does what the direct engine's rank does since its ranks start before their plan
(``engines.nccl.early_device``): the context through the driver's API from the process's first line
(``cuInit`` + ``cuDevicePrimaryCtxRetain`` through ctypes, no cuda-bindings import before it), with
``nvidia-smi -L`` run 0.3 s after those processes start, beside their contexts (as the command's own
listing would run without ``launch.gpu_listing``'s early start). Also ``nvidia-smi -L`` once alone, which
the parent runs to count the GPUs. One JSON line per process, then one for nvidia-smi:

    python benchmarks/cuda_context_probe.py --gpus 4
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

CHILD = r"""
import json, os, sys, time
first = time.time()
import ctypes
t0 = time.perf_counter()
from cuda.bindings import runtime as rt
t1 = time.perf_counter()
status = rt.cudaSetDevice(int(sys.argv[1]))[0]
free = rt.cudaFree(0)[0]
t2 = time.perf_counter()
try:
    ctypes.CDLL("libnccl.so.2", mode=os.RTLD_GLOBAL)
    nccl = round(time.perf_counter() - t2, 3)
except OSError as exc:
    nccl = str(exc)
print(json.dumps({"gpu": int(sys.argv[1]), "interpreter_s": round(first - float(sys.argv[2]), 3),
                  "import_cuda_bindings_s": round(t1 - t0, 3), "cuda_context_s": round(t2 - t1, 3),
                  "status": [int(status), int(free)], "libnccl_load_s": nccl}), flush=True)
"""


DRIVER_CHILD = r"""
import json, sys, time
first = time.time()
import ctypes
t0 = time.perf_counter()
cuda = ctypes.CDLL("libcuda.so.1")
count, device, context = ctypes.c_int(0), ctypes.c_int(0), ctypes.c_void_p()
status = [cuda.cuInit(0), cuda.cuDeviceGetCount(ctypes.byref(count))]
status += [cuda.cuDeviceGet(ctypes.byref(device), int(sys.argv[1]) % max(count.value, 1))]
status += [cuda.cuDevicePrimaryCtxRetain(ctypes.byref(context), device)]
print(json.dumps({"gpu": int(sys.argv[1]), "path": "driver API (ctypes)",
                  "interpreter_s": round(first - float(sys.argv[2]), 3),
                  "cuda_context_s": round(time.perf_counter() - t0, 3), "status": status}), flush=True)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", type=int, default=1, help="processes started together, one per GPU")
    args = parser.parse_args()
    started = time.time()
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, str(i), str(started)], stdout=subprocess.PIPE, text=True
        )
        for i in range(args.gpus)
    ]
    for child in children:
        out, _ = child.communicate(timeout=120)
        print(out.strip() or json.dumps({"exit": child.returncode}))
    started = time.time()
    children = [
        subprocess.Popen(
            [sys.executable, "-c", DRIVER_CHILD, str(i), str(started)], stdout=subprocess.PIPE, text=True
        )
        for i in range(args.gpus)
    ]
    time.sleep(0.3)
    print(json.dumps({"nvidia_smi_L_beside_contexts_s": _listing_seconds()}))
    for child in children:
        out, _ = child.communicate(timeout=120)
        print(out.strip() or json.dumps({"exit": child.returncode}))
    print(json.dumps({"nvidia_smi_L_s": _listing_seconds()}))


def _listing_seconds() -> float | str:
    t0 = time.perf_counter()
    try:
        code = subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=60, check=False).returncode
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    return round(time.perf_counter() - t0, 3) if code == 0 else f"exit {code}"


if __name__ == "__main__":
    main()
