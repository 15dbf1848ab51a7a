#!/usr/bin/env bash
# The nccl-tests engine on virtual nodes through our mpirun driver, on a lent one-GPU machine:
# builds nccl-tests (NCCL from torch's wheel, MPI=1), then runs the gpu-marked tests of
# tests/launch/test_nccl_tests_engine.py (2 and 4 processes on 2 virtual nodes, MPS on, every *_perf
# binary, two sweeps with bfloat16/max/root 1/--check and float/sum/--graph, -J on and off).
# Needs .whl/ (pydantic, typer, rich ... wheels for Python 3.12) and .gpurun/nccl-tests (NVIDIA/nccl-tests
# source), both carried. pytest's temporary directories go under $OUT, so the real run directories
# (result.json, nccl-tests' -J output, rank 0's log, NCCL's logs) come back with it.
set -u
OUT="${OUT:-/tmp/gpufabric-out}"
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
timeout 120 python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl >"$OUT/pip.log" 2>&1
export PYTHONPATH="/tmp/site:$PWD/src"
NCCL_DIR=$(python3 -c "import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__) if nvidia.nccl.__file__ else list(nvidia.nccl.__path__)[0])")
export LD_LIBRARY_PATH="$NCCL_DIR/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
NT=.gpurun/nccl-tests
mkdir -p /tmp/ncclhome/lib && ln -sf "$NCCL_DIR/include" /tmp/ncclhome/include \
  && ln -sf "$NCCL_DIR/lib/libnccl.so.2" /tmp/ncclhome/lib/libnccl.so.2 \
  && ln -sf libnccl.so.2 /tmp/ncclhome/lib/libnccl.so
( cd $NT && timeout 300 make -j16 MPI=1 MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi NCCL_HOME=/tmp/ncclhome \
     CUDA_HOME=/usr/local/cuda NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" \
     CPPFLAGS="-I/usr/lib/x86_64-linux-gnu/openmpi/include" ) >"$OUT/nccl-tests-build.log" 2>&1
echo "build: exit $? ($(ls $NT/build/*_perf 2>/dev/null | wc -l) binaries)"
export GPUFABRIC_NCCL_TESTS_DIR="$PWD/$NT/build" PATH="$PWD/$NT/build:$PATH"
timeout "${PYTEST_TIMEOUT:-420}" python3 -m pytest -m gpu -v -p no:cacheprovider -o addopts="-ra" \
  --basetemp="$OUT/pt" --durations=0 tests/launch/test_nccl_tests_engine.py -k "${K:-virtual or without_json}" \
  >"$OUT/pytest-gpu.log" 2>&1
echo "pytest: exit $?"
tail -40 "$OUT/pytest-gpu.log"
# Few files come back from the device: the run directories travel as one archive.
tar -czf "$OUT/pt.tgz" -C "$OUT" pt 2>/dev/null && rm -rf "$OUT/pt"
