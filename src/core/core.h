// rltrade core: the manual of the bottom layer.
//
// What it is. The few things every other folder needs and nothing else: error handling,
// deterministic random numbers, option structs bound by name, time arithmetic, a worker
// pool, small binary state files and whole-file I/O. It depends on the C++ standard
// library and pthreads only, and compiles in seconds.
//
// What it is not. No market data, no numerics beyond the RNG, no LibTorch, no JSON/TOML
// (those are config/ and the folders that own a file format).
//
// The parts:
//   status.h       Status and Result<T> for expected failures (bad data, bad config, I/O),
//                  RLT_CHECK / RLT_DCHECK for bugs (abort with file:line).
//   rng.h          xoshiro256++ with our own distributions: the same seed gives the same
//                  numbers with any standard library; state can be saved and restored.
//   options.h      VisitFields(): an options struct lists its fields once; configs,
//                  `--set`, --help texts and the resolved config all come from that list.
//   civil_time.h   proleptic Gregorian calendar arithmetic on UTC seconds (time zones are
//                  market/timezone.h).
//   thread_pool.h  WorkerPool: one task on every worker at once (inline on the caller
//                  when the work is too small for a handoff), for the env engine's hot
//                  loop; AvailableCores(), ResolveThreads() ([run] threads = 0).
//   process_env.h  the rltrade executable's getenv() defaults that make libgomp's and
//                  OpenBLAS's pools sleep when idle.
//   file_io.h      ReadFile(): whole files with one set of rules (regular files only,
//                  bounded size, one Status code per failure kind).
//   state_io.h     StateWriter/StateReader: a tiny, bounds-checked binary format for the
//                  mutable state of environments inside checkpoints.
//
// Conventions every folder follows (docs/ARCHITECTURE.md has the full list): bugs abort,
// failures return a Status whose message says where, what was expected and what to do;
// nothing throws across a folder boundary.
#ifndef RLT_CORE_CORE_H_
#define RLT_CORE_CORE_H_

#include "core/civil_time.h"
#include "core/file_io.h"
#include "core/options.h"
#include "core/rng.h"
#include "core/state_io.h"
#include "core/status.h"
#include "core/thread_pool.h"

#endif  // RLT_CORE_CORE_H_
