// Compiles every public header as C++14 with -Wall -Wextra -Werror -pedantic and uses a few
// things from each, so a C++17-ism or a warning in a public header breaks the build.
// Build with -DOPTIMIUM_CXX14_HEADERS_MAIN to get a linkable program.
#if __cplusplus != 201402L
#error "this translation unit must be compiled as C++14"
#endif

#include <Optimium/Runtime.h>
#include <Optimium/Runtime/Attribute.h>
#include <Optimium/Runtime/Config.h>
#include <Optimium/Runtime/Device.h>
#include <Optimium/Runtime/ElementType.h>
#include <Optimium/Runtime/Exceptions.h>
#include <Optimium/Runtime/Export.h>
#include <Optimium/Runtime/Extension/Backend.h>
#include <Optimium/Runtime/InferRequest.h>
#include <Optimium/Runtime/Logging/AndroidLogWriter.h>
#include <Optimium/Runtime/Logging/ConsoleWriter.h>
#include <Optimium/Runtime/Logging/FileWriter.h>
#include <Optimium/Runtime/Logging/LogSettings.h>
#include <Optimium/Runtime/Logging/LogWriter.h>
#include <Optimium/Runtime/Model.h>
#include <Optimium/Runtime/ModelGroup.h>
#include <Optimium/Runtime/Options.h>
#include <Optimium/Runtime/Profile.h>
#include <Optimium/Runtime/Shape.h>
#include <Optimium/Runtime/Tensor.h>
#include <Optimium/Runtime/TensorInfo.h>
#include <Optimium/Runtime/Types.h>
#include <Optimium/Runtime/Types/BFloat16.h>
#include <Optimium/Runtime/Types/Float16.h>
#include <Optimium/Runtime/Utils/ArrayRef.h>
#include <Optimium/Runtime/Utils/StreamHelper.h>
#include <Optimium/Runtime/Utils/StringRef.h>
#include <Optimium/Runtime/Version.h>

#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace rt = optimium::runtime;

namespace {

class NullWriter : public rt::logging::LogWriter {
public:
  void write(rt::LogLevel, rt::StringRef) override {}
};

} // namespace

int optimiumCxx14HeadersCheck() {
  constexpr rt::Version Compiled = OPTIMIUM_RT_CURRENT_VERSION;
  if (rt::getVersion() != Compiled)
    std::cerr << "warning: runtime/header version mismatch" << std::endl;

  rt::logging::setLogLevel(rt::LogLevel::Warning);
  rt::logging::addLogWriter(std::make_unique<NullWriter>());
  rt::logging::clearLogWriters();
  rt::config::setPrintThreshold(8);

  rt::TypedTensor<float> T = rt::tensor<float>({2, 3});
  T.fill(1.0f);
  rt::TypedTensor<rt::float16> H = rt::tensor<rt::float16>({4});
  H.fill(rt::float16(0.5f));
  const rt::bfloat16 B(2.0f);
  std::cout << rt::Tensor(T) << ' ' << static_cast<float>(B) << ' ' << rt::ElementType::F32 << std::endl;

  rt::TensorShape Shape({rt::Expr("batch"), 3});
  std::cout << Shape << ' ' << rt::TensorShape({1, 2}) << std::endl;

  rt::HostInfo Local = rt::getLocalInfo();
  for (rt::DeviceID ID : Local.Devices)
    std::cout << ID << ' ' << ID.getCapability().toString() << std::endl;
  std::cout << rt::isDeviceCPU(rt::DeviceKind::x64) << rt::PlatformKind::Native << rt::OSKind::Linux << std::endl;

  rt::Attribute A = rt::Attribute::getInt(rt::AttributeKind::I32, 5);
  if (A.isa<rt::I32Attr>())
    std::cout << A.cast<rt::I32Attr>().value() << ' ' << A << std::endl;

  rt::ModelLoadOptions Options;
  Options.Devices = {rt::DeviceID::from(rt::PlatformKind::Native, rt::DeviceKind::x64)};
  Options.Scheduler = rt::SchedulerType::Auto;
  std::cout << Options.Scheduler << ' ' << rt::InferStatus::Ready << ' ' << rt::LogLevel::Info << std::endl;

  std::vector<rt::Tensor> Inputs;
  Inputs.push_back(T);
  rt::ArrayRef<rt::Tensor> Ref = rt::make_array(Inputs);
  rt::StringRef Name("input_0");
  std::map<std::string, rt::Tensor> ByName;
  ByName[Name] = T;

  rt::TensorInfo Info;
  Info.Name = Name;
  Info.Shape = rt::TensorShape({1, 2});
  Info.Type = rt::ElementType::F32;
  std::cout << Info << std::endl;

  rt::ProfileOptions Profile;
  Profile.WarmUpTime = std::chrono::microseconds(1000);
  auto Recorder = std::make_shared<rt::ProfileEventRecorder>(16);
  Recorder->record(rt::ProfileEventKind::QueueBegin);
  for (const rt::ProfileEvent &E : Recorder->events())
    std::cout << rt::toString(E.Kind) << ' ' << Profile.Repeat << std::endl;
  std::cout << rt::summarizeLayerDurations(Recorder->events(), {}).size() << std::endl;

  try {
    T.copyTo(rt::tensor(rt::ElementType::I32, {2, 3}));
  } catch (const rt::TypeError &E) {
    std::cout << E.what() << std::endl;
  } catch (const rt::Exception &E) {
    std::cout << E.what() << std::endl;
  }
  return static_cast<int>(Ref.size() + ByName.size());
}

#if defined(OPTIMIUM_CXX14_HEADERS_MAIN)
int main() { return optimiumCxx14HeadersCheck() == 2 ? 0 : 1; }
#endif
