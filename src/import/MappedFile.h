// Read-only memory mapping of a file: weights stay in the page cache and are shared, not copied.
#pragma once

#include <memory>
#include <string>

#include "core/Status.h"

namespace optimium {
namespace runtime {
namespace detail {

struct MappedFile {
  const uint8_t *Data = nullptr;
  size_t Size = 0;
  std::string Path;
  ~MappedFile();
  /// IOError naming the path when it does not exist or cannot be read.
  static Result<std::shared_ptr<MappedFile>> open(const std::string &Path);
};

} // namespace detail
} // namespace runtime
} // namespace optimium
