// optimium-compile's core (implemented in ModelLoader.cpp, beside the load path it shares).
#pragma once

#include <string>

#include "Optimium/Runtime/Options.h"
#include "core/Status.h"
#include "import/compiled/CompiledModel.h"

namespace optimium {
namespace runtime {
namespace detail {

/// Import + manifest + shape inference + passes for these options, encoded as a compiled model's
/// files (import/compiled/CompiledModel.h). InvalidArgument when Path is a compiled model already.
Result<CompiledFiles> compileModelFiles(const std::string &Path, const ModelLoadOptions &Options);

} // namespace detail
} // namespace runtime
} // namespace optimium
