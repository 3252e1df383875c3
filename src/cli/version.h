// rltrade cli: what `rltrade --version` prints — the version, the commit it was built
// from, the build type and which optional parts the build has.
#ifndef RLT_CLI_VERSION_H_
#define RLT_CLI_VERSION_H_

#include <string>

namespace rlt::cli {

// "rltrade 0.1.0" and the lines after it (see version.cc).
std::string VersionText();

}  // namespace rlt::cli

#endif  // RLT_CLI_VERSION_H_
