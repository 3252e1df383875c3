// rltrade core: loading a plug-in, a shared object built beside the rltrade binary that
// pulls in a large library (OpenMPI, LibTorch) only for the commands that need it.
//
// Commands that never touch the plug-in never pay for its library: the binary does not
// link it, so starting `rltrade --help` maps a dozen shared objects instead of hundreds.
// Thread-safe (dlopen is); the caller caches what it loads.
#ifndef RLT_CORE_PLUGIN_H_
#define RLT_CORE_PLUGIN_H_

#include <string>

#include "core/status.h"

namespace rlt {

struct PluginRequest {
  std::string file;       // e.g. "librltrade_torch.so"
  std::string symbol;     // the entry point looked up in it
  std::string build_dir;  // the build directory it was built in ("" for none)
  // An address inside the caller's own code: the plug-in is looked for first beside the
  // object holding it (the Python extension module, or the executable), then beside the
  // running executable, then in build_dir (test binaries live in its subdirectories).
  const void* anchor = nullptr;
  bool global = false;  // RTLD_GLOBAL (OpenMPI opens components that need libmpi's symbols)
};

// dlsym(handle, symbol) of the first of those paths that loads; NotFound listing every path
// tried with the loader's reason when none does.
Result<void*> LoadPluginSymbol(const PluginRequest& request);

}  // namespace rlt

#endif  // RLT_CORE_PLUGIN_H_
