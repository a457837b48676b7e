// Where the runtime's own shared library lives: extensions are auto-loaded from its folder and the
// modules it loads on demand (the ONNX importer, the encrypted folders' cryptography) are looked up
// beside it.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace optimium {
namespace runtime {
namespace detail {

/// The path the dynamic loader loaded the library holding this code from (dladdr's dli_fname, as
/// given: a symlink stays a symlink); empty when it cannot be found.
std::string thisLibraryPath();

/// The folder part of Path with a trailing '/' ("./" when Path names no folder).
std::string folderOf(const std::string &Path);

/// Where a module File of this library may be: beside this library as the loader found it, then
/// beside the file that path resolves to (a symlinked runtime, e.g. a folder holding only the
/// runtime); empty when this library's path is unknown.
std::vector<std::string> besideThisLibrary(const std::string &File);

/// Loads the module File from beside this library (besideThisLibrary's candidates, in order;
/// RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE: never unloaded, as what its code makes may outlive any
/// call) and hands its symbol Entry (nullptr when it has none) to Accept, which returns "" when it
/// takes the module, else why not; then the next candidate is tried. True once one is accepted;
/// false with Tried listing every candidate and why it failed ("" when this library's path is
/// unknown).
bool loadModuleBeside(const std::string &File, const char *Entry, const std::function<std::string(void *)> &Accept,
                      std::string &Tried);

} // namespace detail
} // namespace runtime
} // namespace optimium
