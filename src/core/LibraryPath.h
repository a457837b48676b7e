// Where the runtime's own shared library lives: extensions are auto-loaded from its folder and the
// modules it loads on demand (the ONNX importer, the encrypted folders' cryptography) are looked up
// beside it.
#pragma once

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

} // namespace detail
} // namespace runtime
} // namespace optimium
