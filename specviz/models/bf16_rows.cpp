// y = x W^T (+ bias) for a few rows of x, with W stored in bfloat16, on an x86 CPU with AVX2 + FMA.
//
// Built by specviz/models/bf16_rows.py with the system's C++ compiler and called through ctypes.
// Each weight row is read from memory once per group of up to ROWS_PER_PASS input rows and
// widened to float32 in registers (exact: a bfloat16 is the upper half of a float32), so a product
// over 6 rows costs little more than over 1: the memory traffic is the weights, as speculative
// verification needs. Every output element sums its products in the same order (8 lanes over K,
// then the lanes) whatever the number of rows, so a row's result does not depend on how many rows
// were multiplied with it. The output is rounded to bfloat16 to nearest even, as torch rounds.
//
// The parallel loop uses OpenMP; inside a torch process libgomp.so.1 resolves to the copy torch
// already loaded, so this loop and torch's own share one thread pool and one thread count.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace {

constexpr int64_t ROWS_PER_PASS = 6;  // 2 weight rows x 6 input rows = 12 accumulators + 3 in use

inline __m256 widen(const uint16_t* p) {
  const __m128i half = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(half), 16));
}

inline float lanes_sum(__m256 v) {
  __m128 low = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  __m128 high = _mm_movehdup_ps(low);
  __m128 sums = _mm_add_ps(low, high);
  high = _mm_movehl_ps(high, sums);
  return _mm_cvtss_f32(_mm_add_ss(sums, high));
}

inline float from_bf16(uint16_t value) {
  const uint32_t bits = static_cast<uint32_t>(value) << 16;
  float out;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

inline uint16_t to_bf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);  // NaN
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

// Output columns n and n + 1 (when `pair`) for ROWS input rows starting at x.
template <int ROWS>
inline void columns(const float* x, int64_t in, const uint16_t* w0, const uint16_t* w1,
                    const uint16_t* bias, uint16_t* y, int64_t out, int64_t n, bool pair) {
  __m256 first[ROWS], second[ROWS];
  for (int r = 0; r < ROWS; ++r) {
    first[r] = _mm256_setzero_ps();
    second[r] = _mm256_setzero_ps();
  }
  for (int64_t k = 0; k < in; k += 8) {
    const __m256 u = widen(w0 + k);
    const __m256 v = widen(w1 + k);
    for (int r = 0; r < ROWS; ++r) {
      const __m256 xs = _mm256_loadu_ps(x + r * in + k);
      first[r] = _mm256_fmadd_ps(u, xs, first[r]);
      second[r] = _mm256_fmadd_ps(v, xs, second[r]);
    }
  }
  const float b0 = bias ? from_bf16(bias[n]) : 0.0f;
  const float b1 = bias && pair ? from_bf16(bias[n + 1]) : 0.0f;
  for (int r = 0; r < ROWS; ++r) {
    y[r * out + n] = to_bf16(lanes_sum(first[r]) + b0);
    if (pair) y[r * out + n + 1] = to_bf16(lanes_sum(second[r]) + b1);
  }
}

}  // namespace

// x: (rows, in) float32; w: (out, in) bfloat16 bits; bias: (out,) bfloat16 bits or null;
// y: (rows, out) bfloat16 bits. in must be a multiple of 8; all arrays contiguous. threads: torch's
// thread count, passed because OpenMP's own count is per calling thread (the app decodes in
// worker threads that never called torch.set_num_threads).
extern "C" void specviz_bf16_rows(const float* x, const uint16_t* w, const uint16_t* bias,
                                  uint16_t* y, int64_t rows, int64_t in, int64_t out,
                                  int threads) {
  const int64_t pairs = (out + 1) / 2;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t p = 0; p < pairs; ++p) {
    const int64_t n = 2 * p;
    const bool pair = n + 1 < out;
    const uint16_t* w0 = w + n * in;
    const uint16_t* w1 = pair ? w0 + in : w0;
    for (int64_t r = 0; r < rows; r += ROWS_PER_PASS) {
      const float* xr = x + r * in;
      uint16_t* yr = y + r * out;
      switch (std::min(ROWS_PER_PASS, rows - r)) {
        case 6: columns<6>(xr, in, w0, w1, bias, yr, out, n, pair); break;
        case 5: columns<5>(xr, in, w0, w1, bias, yr, out, n, pair); break;
        case 4: columns<4>(xr, in, w0, w1, bias, yr, out, n, pair); break;
        case 3: columns<3>(xr, in, w0, w1, bias, yr, out, n, pair); break;
        case 2: columns<2>(xr, in, w0, w1, bias, yr, out, n, pair); break;
        default: columns<1>(xr, in, w0, w1, bias, yr, out, n, pair); break;
      }
    }
  }
}
