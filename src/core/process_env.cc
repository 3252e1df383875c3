// rltrade core: GetenvWithThreadingDefaults() (see process_env.h).
#include "core/process_env.h"

#include <unistd.h>

#include <cstring>

namespace rlt {

const EnvSetting* ThreadingEnvironment() {
  static const EnvSetting kSettings[] = {
      {"OMP_WAIT_POLICY", "PASSIVE"}, {"OPENBLAS_THREAD_TIMEOUT", "4"}, {nullptr, nullptr}};
  return kSettings;
}

char* GetenvWithThreadingDefaults(const char* name) {
  if (name == nullptr) return nullptr;
  const size_t n = std::strlen(name);
  // The same lookup as libc's getenv: the first "NAME=" entry of environ.
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (std::strncmp(*e, name, n) == 0 && (*e)[n] == '=') return *e + n + 1;
  }
  for (const EnvSetting* s = ThreadingEnvironment(); s->name != nullptr; ++s) {
    if (std::strcmp(s->name, name) == 0) return const_cast<char*>(s->value);
  }
  return nullptr;
}

}  // namespace rlt
