/*
 * fedscore's native kernels, the instruction set of the kernels that choose one themselves (see
 * fedscore_kernels.c): the coalition kernel (coalition_kernels.c) and the narrow products
 * (narrow.c). Each has an AVX-512, an AVX2 + FMA and a portable C version that give the same bits,
 * so the choice changes speed only; the tests force each in turn to check that.
 *
 * setIsa(isa) caps the choice for the whole process: 0 auto (the best the processor has), 1
 * portable C, 2 AVX2, 3 AVX-512; it throws a RangeError when the processor lacks it, and returns
 * the instruction set now in use. src/ml/_blas_kernels.ts calls it with FEDSCORE_NATIVE_ISA
 * (auto, scalar, avx2, avx512), so that a whole test run takes the path of a processor without
 * AVX-512 (or without AVX2) on one that has it.
 *
 * Not covered: the loops marked target_clones (loops.c, layers.c, direct.c, products.c's im2col,
 * the coalition kernel's element-wise loops), which the loader picks per processor. They are
 * element-wise, and the build's -ffp-contract=off keeps every clone to the same operations, so
 * their bits do not depend on the clone. OpenBLAS chooses its own kernels per processor
 * (DYNAMIC_ARCH); OPENBLAS_CORETYPE (e.g. Haswell, Zen, SkylakeX) forces one.
 */
#include "_fedscore.h"

static int isa_cap = ISA_AUTO;

int pick_isa(int asked) {
  __builtin_cpu_init();
  const int has512 = __builtin_cpu_supports("avx512f");
  const int has256 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (asked == ISA_AUTO) asked = isa_cap;
  if (asked == ISA_AVX512) return has512 ? ISA_AVX512 : -1;
  if (asked == ISA_AVX2) return has256 ? ISA_AVX2 : -1;
  if (asked == ISA_SCALAR) return ISA_SCALAR;
  return has512 ? ISA_AVX512 : has256 ? ISA_AVX2 : ISA_SCALAR;
}

/* setIsa(isa): see the module comment. */
napi_value set_isa(napi_env env, napi_callback_info info) {
  ARGS(1)
  int64_t isa;
  if (!dim(env, argv[0], "isa", &isa)) return NULL;
  if (isa > ISA_AVX512) return fail(env, "RangeError", "isa: expected 0 to 3");
  if (isa != ISA_AUTO && pick_isa((int)isa) < 0)
    return fail(env, "RangeError", "isa: not supported by this processor");
  isa_cap = (int)isa;
  napi_value out;
  napi_create_int32(env, pick_isa(ISA_AUTO), &out);
  return out;
}
