// Path confinement for the server's workspace.
#include "remote/server/Workspace.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <sys/stat.h>

#include "Optimium/Runtime/Exceptions.h"

namespace optimium {
namespace remote {

namespace rt = optimium::runtime;

namespace {

bool canonical(const std::string &P, std::string &Out) {
  char *R = ::realpath(P.c_str(), nullptr);
  if (!R)
    return false;
  Out = R;
  std::free(R);
  return true;
}

} // namespace

Workspace::Workspace(const std::string &R) {
  struct stat St;
  if (!canonical(R.empty() ? "." : R, Root) || ::stat(Root.c_str(), &St) != 0 || !S_ISDIR(St.st_mode))
    throw rt::RemoteError("workspace '" + R + "' is not a folder");
}

bool Workspace::inside(const std::string &C) const {
  if (Root == "/")
    return true;
  return C == Root || (C.size() > Root.size() && C.compare(0, Root.size(), Root) == 0 && C[Root.size()] == '/');
}

std::string Workspace::resolve(const std::string &Rel, bool MustExist) const {
  if (Rel.empty())
    throw rt::RemoteError("empty path: name a model inside the server's workspace");
  if (Rel.find('\0') != std::string::npos)
    throw rt::RemoteError("path with a NUL byte is refused");
  if (Rel[0] == '/')
    throw rt::RemoteError("path '" + Rel + "' is outside the server's workspace (absolute paths are refused)");
  size_t Start = 0;
  while (Start <= Rel.size()) {
    size_t End = Rel.find('/', Start);
    if (End == std::string::npos)
      End = Rel.size();
    if (Rel.compare(Start, End - Start, "..") == 0 && End - Start == 2)
      throw rt::RemoteError("path '" + Rel + "' is outside the server's workspace ('..' is refused)");
    Start = End + 1;
  }
  const std::string Joined = Root + "/" + Rel;
  std::string C;
  if (canonical(Joined, C)) {
    if (!inside(C))
      throw rt::RemoteError("path '" + Rel + "' is outside the server's workspace (a symlink leads out of it)");
    return C;
  }
  if (errno != ENOENT && errno != ENOTDIR)
    throw rt::IOError("path '" + Rel + "' in the server's workspace cannot be resolved");
  if (MustExist)
    throw rt::IOError("model path '" + Rel + "' does not exist in the server's workspace");
  // Not there yet (a folder the runtime will create): its deepest existing ancestor decides.
  std::string Up = Joined;
  for (;;) {
    const size_t Slash = Up.find_last_of('/');
    if (Slash == std::string::npos || Slash == 0)
      break;
    Up.resize(Slash);
    if (canonical(Up, C)) {
      if (!inside(C))
        throw rt::RemoteError("path '" + Rel + "' is outside the server's workspace (a symlink leads out of it)");
      return Joined;
    }
  }
  throw rt::RemoteError("path '" + Rel + "' is outside the server's workspace");
}

} // namespace remote
} // namespace optimium
