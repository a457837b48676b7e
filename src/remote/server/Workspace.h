// The server's workspace folder: every model path a client names resolves inside it. Absolute
// paths, '..' components and symlinks that lead outside are refused (RemoteError naming the path).
#pragma once

#include <string>

namespace optimium {
namespace remote {

class Workspace {
public:
  /// Root must be an existing folder (RemoteError otherwise); it is canonicalized once.
  explicit Workspace(const std::string &Root);
  const std::string &root() const { return Root; }
  /// The canonical path of Rel inside the workspace. MustExist: IOError when it does not exist;
  /// otherwise its deepest existing ancestor must lie inside (for paths the runtime will create).
  std::string resolve(const std::string &Rel, bool MustExist) const;

private:
  bool inside(const std::string &Canonical) const;
  std::string Root;
};

} // namespace remote
} // namespace optimium
