// rltrade python: the C++ side of the Python parity test (python/tests/test_parity.py).
//
//   rlt_python_parity ENV_ID NUM_ENVS SEED STEPS ACTIONS OUT [section.key=value ...]
//
// Builds the environments as make_vec does (vec_env_setup.h), resets with SEED, steps
// STEPS times with the float32 actions in ACTIONS (STEPS x NUM_ENVS x action dim, raw),
// and writes to OUT, raw, after the reset: the observations; after every step: the
// observations, rewards (float32), terminated and truncated (uint8) and the terminal
// observations (float32, every row; rows of envs that did not finish are unspecified).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "python/vec_env_setup.h"

namespace {

template <typename T>
void Write(std::ofstream& out, const T* data, size_t n) {
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(n * sizeof(T)));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 7) {
    std::fprintf(stderr,
                 "usage: %s ENV_ID NUM_ENVS SEED STEPS ACTIONS OUT [section.key=value ...]\n",
                 argv[0]);
    return 2;
  }
  const std::string id = argv[1];
  const int n = std::atoi(argv[2]);
  const uint64_t seed = std::strtoull(argv[3], nullptr, 10);
  const int steps = std::atoi(argv[4]);
  std::vector<rlt::python::Setting> settings;
  for (int k = 7; k < argc; ++k) {
    const std::string a = argv[k];
    const size_t dot = a.find('.'), eq = a.find('=');
    if (dot == std::string::npos || eq == std::string::npos || dot > eq) {
      std::fprintf(stderr, "bad setting '%s': expected section.key=value\n", a.c_str());
      return 2;
    }
    settings.emplace_back(a.substr(0, dot), a.substr(dot + 1, eq - dot - 1), a.substr(eq + 1));
  }
  auto vec = rlt::python::MakeVecEnv(id, n, 1, settings);
  if (!vec.ok()) {
    std::fprintf(stderr, "%s\n", vec.status().message().c_str());
    return 1;
  }
  rlt::env::VecEnv& v = **vec;
  const size_t per_step = static_cast<size_t>(n) * v.act_dim();
  std::vector<float> actions(per_step * steps);
  std::ifstream in(argv[5], std::ios::binary);
  in.read(reinterpret_cast<char*>(actions.data()),
          static_cast<std::streamsize>(actions.size() * sizeof(float)));
  if (!in) {
    std::fprintf(stderr, "%s: expected %zu float32 actions\n", argv[5], actions.size());
    return 1;
  }
  std::ofstream out(argv[6], std::ios::binary);
  const size_t obs = static_cast<size_t>(n) * v.obs_dim();
  v.Reset(seed);
  Write(out, v.observations(), obs);
  for (int t = 0; t < steps; ++t) {
    v.Step(&actions[t * per_step]);
    Write(out, v.observations(), obs);
    Write(out, v.rewards(), static_cast<size_t>(n));
    Write(out, v.terminated(), static_cast<size_t>(n));
    Write(out, v.truncated(), static_cast<size_t>(n));
    Write(out, v.terminal_observations(), obs);
  }
  return out ? 0 : 1;
}
