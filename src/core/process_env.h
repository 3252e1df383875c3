// rltrade core: the environment variables that make LibTorch's and OpenBLAS's thread
// pools sleep when idle, defaulted for the rltrade executable without the user's help.
//
// Why: LibTorch's intra-op pool is GNU OpenMP (libgomp). After every parallel region its
// threads spin for ~300,000 iterations (about a millisecond) unless OMP_WAIT_POLICY=PASSIVE;
// on 2 cores those spinning threads starved our environment workers (intraday_ppo.toml at 2
// threads: 12.9k env steps/s, 58k with PASSIVE, 69-77k at 1 thread). OpenBLAS's pthread
// pool likewise keeps polling with sched_yield for 2^28 cycles (~0.1 s) after each threaded
// call unless OPENBLAS_THREAD_TIMEOUT is small. Both libraries read these variables in
// their library constructors, before main() runs, and have no API to change them later:
// setenv() inside main() is too late.
//
// How: setting them from inside the program does not work. setenv() in main() runs after
// the constructors; even a .preinit_array function (which runs before every library
// constructor) is undone, because libc's own initialiser resets `environ` to the array the
// kernel passed (checked with glibc 2.36 / libgomp 12: GOMP_SPINCOUNT stayed 300000).
// Re-executing the program with the variables set works but loads LibTorch twice (measured:
// `rltrade --help` 0.5 s -> 1.0 s CPU). Instead the rltrade executable defines getenv()
// (RLT_THREADING_ENVIRONMENT_DEFAULTS()): the dynamic linker binds every shared library's
// getenv calls to the executable's definition first, so libgomp and OpenBLAS, reading their
// settings in their constructors, see the defaults of ThreadingEnvironment() for variables
// the user has not set. Verified: `OMP_DISPLAY_ENV=VERBOSE rltrade --help` prints
// GOMP_SPINCOUNT = '0' (the cli test checks it).
//
// What is and is not done:
//  - A variable the user has set is returned as set (OMP_WAIT_POLICY=active wins).
//  - Only in executables that use the macro (the rltrade binary); tests keep the
//    libraries' defaults. Not in the Python module (a shared library cannot do this): there
//    the variables must be in the environment before `import torch`.
//  - The environment itself is not changed: child processes that are not rltrade get the
//    libraries' defaults.
#ifndef RLT_CORE_PROCESS_ENV_H_
#define RLT_CORE_PROCESS_ENV_H_

namespace rlt {

// One variable of the threading environment.
struct EnvSetting {
  const char* name;
  const char* value;
};

// The variables the threading model needs, {nullptr, nullptr}-terminated:
// OMP_WAIT_POLICY=PASSIVE and OPENBLAS_THREAD_TIMEOUT=4 (2^4 cycles, the least OpenBLAS
// accepts).
const EnvSetting* ThreadingEnvironment();

// getenv(name) as libc defines it (the value in `environ`, or nullptr), except that a
// variable of ThreadingEnvironment() that is not set yields its default. Uses only libc
// and no state: safe in library constructors, before main(), from any thread that libc's
// getenv is safe from.
char* GetenvWithThreadingDefaults(const char* name);

}  // namespace rlt

// Place once, at namespace scope, in the .cc file that defines main() of an executable:
// defines the executable's getenv() as GetenvWithThreadingDefaults() (see above).
#define RLT_THREADING_ENVIRONMENT_DEFAULTS()           \
  extern "C" char* getenv(const char* name) noexcept { \
    return ::rlt::GetenvWithThreadingDefaults(name);   \
  }

#endif  // RLT_CORE_PROCESS_ENV_H_
