// rltrade native: the instruction-set level the loop kernels run at (see dispatch.h).
#include "native/dispatch.h"

namespace rlt::native {

const char* KernelLevel() {
#if defined(RLT_MARCH_NATIVE)
  return "native";
#elif RLT_KERNEL_CLONES_ON
  // The same test, in the same order, as the loader's resolver for target_clones.
  if (__builtin_cpu_supports("x86-64-v4")) return "x86-64-v4";
  if (__builtin_cpu_supports("x86-64-v3")) return "x86-64-v3";
  return "x86-64";
#else
  return "portable";
#endif
}

}  // namespace rlt::native
