// rltrade core: LoadPluginSymbol (see plugin.h).
#include "core/plugin.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

namespace rlt {
namespace {

std::string DirOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

// The directory of this executable ("" when /proc is not mounted).
std::string ExecutableDir() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  return DirOf(std::string(buf, static_cast<size_t>(n)));
}

// The directory of the shared object (or executable) holding `address` ("" if unknown).
std::string ObjectDir(const void* address) {
  if (address == nullptr) return "";
  Dl_info info{};
  if (::dladdr(address, &info) == 0 || info.dli_fname == nullptr) return "";
  const std::string dir = DirOf(info.dli_fname);
  return dir.empty() || dir[0] != '/' ? "" : dir;  // a bare name: the executable, found below
}

}  // namespace

Result<void*> LoadPluginSymbol(const PluginRequest& request) {
  std::vector<std::string> tried;
  std::string errors;
  for (const std::string& dir : {ObjectDir(request.anchor), ExecutableDir(), request.build_dir}) {
    if (dir.empty()) continue;
    const std::string path = dir + "/" + request.file;
    if (std::find(tried.begin(), tried.end(), path) != tried.end()) continue;
    tried.push_back(path);
    if (::access(path.c_str(), F_OK) != 0) {
      errors += "\n  " + path + ": no such file";
      continue;
    }
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | (request.global ? RTLD_GLOBAL : RTLD_LOCAL));
    if (handle == nullptr) {
      const char* why = ::dlerror();
      errors += std::string("\n  ") + (why != nullptr ? why : path + ": dlopen failed");
      continue;
    }
    if (void* entry = ::dlsym(handle, request.symbol.c_str())) return entry;
    errors += "\n  " + path + ": no symbol " + request.symbol;
  }
  return Status::NotFound("the plug-in " + request.file + " could not be loaded:" +
                          (errors.empty() ? std::string("\n  no directory to look in") : errors));
}

}  // namespace rlt
