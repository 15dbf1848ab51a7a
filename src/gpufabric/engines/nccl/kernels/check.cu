// --check on the device for the direct engine (gpufabric.engines.nccl.device_check).
//
// Every value --check uses depends on the element index modulo a short period (3 x nranks elements), so
// a segment of a buffer is described by one period of its bytes: `fill_periodic` writes a segment from
// its period (the send data), and `count_wrong` compares a received segment with its period, counting
// the wrong elements and the first one. Only the two counters go back to the host, so an 8 GB check
// costs two kernel launches and 16 bytes of copy instead of an 8 GB download and a host pass.
//
// Compiled to PTX by tools/build_check_ptx.py with NVRTC 12.0 for compute_70, so any driver of CUDA 12.0
// or newer JIT-compiles it for its GPU (Volta and newer); the PTX is committed beside this file.

typedef unsigned long long u64;

extern "C" __global__ void fill_periodic(unsigned char* dst, const unsigned char* period, u64 period_bytes,
                                         u64 nbytes) {
  u64 stride = (u64)gridDim.x * blockDim.x;
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < nbytes; i += stride) {
    dst[i] = period[i % period_bytes];
  }
}

// Decoders for the tolerance mode (floating avg): bit patterns to double, as the host's values.decode.
__device__ double half_to_double(unsigned int h) {
  int exponent = (h >> 10) & 0x1f;
  double mantissa = (double)(h & 0x3ff);
  double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (exponent == 0) return sign * ldexp(mantissa, -24);
  if (exponent == 31) return mantissa == 0.0 ? sign * __longlong_as_double(0x7ff0000000000000ULL)
                                             : __longlong_as_double(0x7ff8000000000000ULL);
  return sign * ldexp(1.0 + mantissa / 1024.0, exponent - 15);
}

__device__ u64 load_word(const unsigned char* p, int width) {
  u64 word = 0;
  for (int b = 0; b < width; b++) word |= (u64)p[b] << (8 * b);  // little endian, any alignment
  return word;
}

// dtype codes of the tolerance mode: 1 half, 2 bfloat16, 3 float, 4 double, 5 fp8 (through `table`).
__device__ double decode(u64 word, int dtype, const double* table) {
  switch (dtype) {
    case 1: return half_to_double((unsigned int)word);
    case 2: return (double)__uint_as_float((unsigned int)word << 16);
    case 3: return (double)__uint_as_float((unsigned int)word);
    case 4: return __longlong_as_double((long long)word);
    default: return table[word & 0xff];
  }
}

// Element i of the segment is wrong when its bytes differ from the period's element (dtype 0), or, in
// the tolerance mode, when |got - expected| > tolerance * max(|expected|, 1) (NaN is wrong).
// `counters[0]` accumulates the wrong elements; `counters[1]` the smallest wrong index + `base`
// (initialised to all ones by the host).
extern "C" __global__ void count_wrong(const unsigned char* got, const unsigned char* period, u64 period_elems,
                                       u64 count, int width, int dtype, double tolerance, const double* table,
                                       u64 base, u64* counters) {
  u64 stride = (u64)gridDim.x * blockDim.x;
  u64 wrong = 0;
  u64 first = ~0ULL;
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
    u64 have = load_word(got + i * width, width);
    u64 want = load_word(period + (i % period_elems) * width, width);
    bool bad;
    if (dtype == 0) {
      bad = have != want;
    } else {
      double g = decode(have, dtype, table), e = decode(want, dtype, table);
      bad = !(fabs(g - e) <= tolerance * fmax(fabs(e), 1.0));
    }
    if (bad) {
      wrong++;
      if (first == ~0ULL) first = base + i;  // the grid-stride loop visits this thread's indices in order
    }
  }
  if (wrong) {
    atomicAdd(&counters[0], wrong);
    atomicMin(&counters[1], first);
  }
}
