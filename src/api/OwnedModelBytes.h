// Loading a model from bytes the model itself owns: for front ends (the Python bindings) whose
// caller's buffer may die right after the call. The public loadModel(Data, Size) borrows the
// buffer, as the spec says; this one keeps Bytes alive as long as the Model and its requests.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "Optimium/Runtime/Model.h"
#include "Optimium/Runtime/ModelGroup.h"

namespace optimium {
namespace runtime {
namespace detail {

Model loadModelOwningBytes(std::shared_ptr<const std::vector<uint8_t>> Bytes, const ModelLoadOptions &Options);
/// ModelGroup::add from bytes the member owns (api/ModelGroup.cpp).
GroupMember addOwningBytes(ModelGroup &Group, std::shared_ptr<const std::vector<uint8_t>> Bytes,
                           const GroupMemberOptions &Options);
/// InvalidStateError naming What unless initialize() has run (api/Runtime.cpp).
void requireRuntimeInitialized(const char *What);

} // namespace detail
} // namespace runtime
} // namespace optimium
