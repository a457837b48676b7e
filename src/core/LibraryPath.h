// Where the runtime's own shared library lives: extensions are auto-loaded from its folder and the
// ONNX importer module is looked up beside it.
#pragma once

#include <string>

namespace optimium {
namespace runtime {
namespace detail {

/// The path the dynamic loader loaded the library holding this code from (dladdr's dli_fname, as
/// given: a symlink stays a symlink); empty when it cannot be found.
std::string thisLibraryPath();

/// The folder part of Path with a trailing '/' ("./" when Path names no folder).
std::string folderOf(const std::string &Path);

} // namespace detail
} // namespace runtime
} // namespace optimium
