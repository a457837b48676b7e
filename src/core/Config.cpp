// Process-wide print settings of tensors (read by the stream operators in StreamHelper.cpp).
#include <atomic>
#include <string>

#include "Optimium/Runtime/Config.h"
#include "Optimium/Runtime/Exceptions.h"

namespace optimium {
namespace runtime {
namespace config {

namespace {
std::atomic<int> PrintThreshold{8};
std::atomic<int> PrintPrecision{6};
} // namespace

// Any negative value means unlimited; it is kept as given.
void setPrintThreshold(int Threshold) { PrintThreshold.store(Threshold); }
int getPrintThreshold() { return PrintThreshold.load(); }

void setPrintPrecision(int Precision) {
  if (Precision < 0 || Precision > 15)
    throw InvalidArgumentError("print precision must be between 0 and 15, got " + std::to_string(Precision));
  PrintPrecision.store(Precision);
}
int getPrintPrecision() { return PrintPrecision.load(); }

} // namespace config
} // namespace runtime
} // namespace optimium
