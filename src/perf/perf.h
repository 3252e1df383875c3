// rltrade perf: the manual of the measuring subsystem.
//
// What it is. The honest answer to "how fast is this, and where does the time go" on the
// machine at hand. Every figure is measured on the spot, never estimated:
//   machine.h      `rltrade bench machine`: which BLAS and OpenMP libraries are really
//                  mapped into the process, float32 matmul GFLOP/s per thread count, memory
//                  bandwidth, LibTorch's per-operator overhead, available devices.
//   train_bench.h  `rltrade bench train`: the real training loop of a config (built by the
//                  same code as `rltrade train`), end-to-end env steps/s, a measured time
//                  breakdown per phase, the update's GFLOP/s against the matmul peak, peak
//                  resident memory and the projected run time.
// `rltrade bench env` (cli/bench_cmd.cc) times the environment engine alone.
//
// What it is not. Not a test: speed targets are checked here and in the Google Benchmark
// binaries (`*_bench`), never by timed unit tests. Both headers are LibTorch-free; the .cc
// files link LibTorch, so the CLI compiles without its headers.
#ifndef RLT_PERF_PERF_H_
#define RLT_PERF_PERF_H_

#include "perf/machine.h"
#include "perf/train_bench.h"

#endif  // RLT_PERF_PERF_H_
