// rltrade native: run-time choice of the loop kernels' instruction set in portable builds.
//
// A build with -march=native (RLT_NATIVE=ON, the default) compiles every loop for the
// machine that built it. A portable build (RLT_NATIVE=OFF: the Python wheel, the sanitizer
// build) targets any x86-64 CPU, whose baseline is SSE2 without FMA; measured, that made
// the small-network update 1.4-1.6x slower. With RLT_DISPATCH (the default when
// RLT_NATIVE=OFF on x86-64 with GCC), the functions marked RLT_KERNEL_CLONES are compiled
// three times (x86-64-v4: AVX-512; x86-64-v3: AVX2 + FMA; the baseline) and the dynamic
// loader binds each to the best one the CPU supports, once, when the library is loaded
// (GCC's target_clones: an ifunc resolver reading cpuid). A call costs what any call into a
// shared library costs; nothing is chosen per call.
//
// Results: the clones differ in vector width and in FMA contraction, so a kernel's last bits
// differ between CPUs of different levels, as between two native builds; on one machine the
// choice is fixed, so runs stay reproducible there. KernelLevel() names the level taken
// (`rltrade --version` prints it).
#ifndef RLT_NATIVE_DISPATCH_H_
#define RLT_NATIVE_DISPATCH_H_

#if defined(RLT_DISPATCH) && defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define RLT_KERNEL_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#define RLT_KERNEL_CLONES_ON 1
#else
#define RLT_KERNEL_CLONES
#define RLT_KERNEL_CLONES_ON 0
#endif

namespace rlt::native {

// "x86-64-v4", "x86-64-v3" or "x86-64" (baseline) in a dispatching build; "native" in a
// build compiled for its build machine (-march=native); "portable" in a portable build
// without dispatch.
const char* KernelLevel();

}  // namespace rlt::native

#endif  // RLT_NATIVE_DISPATCH_H_
