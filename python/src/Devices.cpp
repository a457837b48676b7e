// Devices: the platform / device / OS kinds, capabilities, HostInfo, DeviceID, get_local_info().
#include "Bindings.h"

#include <vector>

namespace optimium {
namespace python {

using namespace nb::literals;

PyHostInfo hostInfo(const rt::HostInfo &H) {
  PyHostInfo P;
  P.ID = H.ID;
  P.Name = H.Name.str();
  P.Architecture = H.Architecture;
  P.OS = H.OS;
  P.Devices = H.Devices.vec();
  P.Text = H.toString();
  return P;
}

namespace {

nb::object capabilityOf(const rt::DeviceID &D) {
  const rt::Capability &C = D.getCapability();
  switch (C.getKind()) {
  case rt::CapabilityKind::X86: return nb::cast(static_cast<const rt::X86Capability &>(C), nb::rv_policy::copy);
  case rt::CapabilityKind::ARM: return nb::cast(static_cast<const rt::ARMCapability &>(C), nb::rv_policy::copy);
  case rt::CapabilityKind::SPIRV: return nb::cast(static_cast<const rt::SPIRVCapability &>(C), nb::rv_policy::copy);
  case rt::CapabilityKind::CUDA: return nb::cast(static_cast<const rt::CUDACapability &>(C), nb::rv_policy::copy);
  case rt::CapabilityKind::RISCV: return nb::cast(static_cast<const rt::RISCVCapability &>(C), nb::rv_policy::copy);
  case rt::CapabilityKind::Hexagon:
    return nb::cast(static_cast<const rt::HexagonCapability &>(C), nb::rv_policy::copy);
  default: return nb::cast(rt::VoidCapability(), nb::rv_policy::move);
  }
}

} // namespace

void bind_devices(nb::module_ &m) {
  nb::enum_<rt::PlatformKind>(m, "PlatformKind")
      .value("NATIVE", rt::PlatformKind::Native)
      .value("XNNPACK", rt::PlatformKind::XNNPack)
      .value("CUDA", rt::PlatformKind::CUDA)
      .value("VULKAN", rt::PlatformKind::Vulkan)
      .value("OPENCL", rt::PlatformKind::OpenCL)
      .value("SNPE", rt::PlatformKind::SNPE)
      .value("QNN", rt::PlatformKind::QNN)
      .value("SYNAPTICS", rt::PlatformKind::Synaptics)
      .value("HEXAGON", rt::PlatformKind::Hexagon);
  nb::enum_<rt::DeviceKind>(m, "DeviceKind")
      .value("UNSPECIFIED", rt::DeviceKind::Unspecified)
      .value("NEUTRAL", rt::DeviceKind::Neutral)
      .value("X86", rt::DeviceKind::x86)
      .value("X64", rt::DeviceKind::x64)
      .value("ARM", rt::DeviceKind::ARM)
      .value("ARM64", rt::DeviceKind::ARM64)
      .value("RISCV32", rt::DeviceKind::RISCV32)
      .value("RISCV64", rt::DeviceKind::RISCV64)
      .value("ANY_CPU", rt::DeviceKind::AnyCPU)
      .value("NVIDIA", rt::DeviceKind::NVIDIA)
      .value("AMDGPU", rt::DeviceKind::AMDGPU)
      .value("INTEL_GPU", rt::DeviceKind::IntelGPU)
      .value("MALI", rt::DeviceKind::Mali)
      .value("ADRENO", rt::DeviceKind::Adreno)
      .value("ANY_GPU", rt::DeviceKind::AnyGPU)
      .value("HEXAGON", rt::DeviceKind::Hexagon)
      .value("MYRIAD", rt::DeviceKind::Myriad)
      .value("ARA1", rt::DeviceKind::ARA1)
      .value("GOOGLE_TPU", rt::DeviceKind::GoogleTPU)
      .value("CV22", rt::DeviceKind::CV22)
      .value("SYNAP_NPU", rt::DeviceKind::SynapNPU)
      .value("ANY_NPU", rt::DeviceKind::AnyNPU);
  nb::enum_<rt::OSKind>(m, "OSKind")
      .value("LINUX", rt::OSKind::Linux)
      .value("ANDROID", rt::OSKind::Android)
      .value("WINDOWS", rt::OSKind::Windows)
      .value("MACOS", rt::OSKind::MacOS)
      .value("IOS", rt::OSKind::IOS);
  nb::enum_<rt::CapabilityKind>(m, "CapabilityKind")
      .value("VOID", rt::CapabilityKind::Void)
      .value("X86", rt::CapabilityKind::X86)
      .value("ARM", rt::CapabilityKind::ARM)
      .value("SPIRV", rt::CapabilityKind::SPIRV)
      .value("CUDA", rt::CapabilityKind::CUDA)
      .value("RISCV", rt::CapabilityKind::RISCV)
      .value("HEXAGON", rt::CapabilityKind::Hexagon);

  // Devices.
  nb::class_<rt::Capability>(m, "Capability")
      .def_prop_ro("kind", &rt::Capability::getKind)
      .def("__str__", &rt::Capability::toString)
      .def("__repr__", [](const rt::Capability &C) { return "<" + C.toString() + ">"; });
  nb::class_<rt::VoidCapability, rt::Capability>(m, "VoidCapability");
  nb::class_<rt::X86Capability, rt::Capability>(m, "X86Capability")
      .def_ro("SSE2", &rt::X86Capability::SSE2).def_ro("SSE3", &rt::X86Capability::SSE3)
      .def_ro("SSSE3", &rt::X86Capability::SSSE3).def_ro("SSE41", &rt::X86Capability::SSE41)
      .def_ro("SSE42", &rt::X86Capability::SSE42).def_ro("AVX", &rt::X86Capability::AVX)
      .def_ro("AVX2", &rt::X86Capability::AVX2).def_ro("FMA", &rt::X86Capability::FMA)
      .def_ro("F16C", &rt::X86Capability::F16C).def_ro("AVX512F", &rt::X86Capability::AVX512F)
      .def_ro("AVX512BW", &rt::X86Capability::AVX512BW).def_ro("AVX512DQ", &rt::X86Capability::AVX512DQ)
      .def_ro("AVX512VL", &rt::X86Capability::AVX512VL).def_ro("AVX512VNNI", &rt::X86Capability::AVX512VNNI)
      .def_ro("AVX512BF16", &rt::X86Capability::AVX512BF16).def_ro("AVX512FP16", &rt::X86Capability::AVX512FP16)
      .def_ro("AVXVNNI", &rt::X86Capability::AVXVNNI).def_ro("AMXTile", &rt::X86Capability::AMXTile)
      .def_ro("AMXInt8", &rt::X86Capability::AMXInt8).def_ro("AMXBF16", &rt::X86Capability::AMXBF16);
  nb::class_<rt::ARMCapability, rt::Capability>(m, "ARMCapability")
      .def_ro("NEON", &rt::ARMCapability::NEON).def_ro("FP16", &rt::ARMCapability::FP16)
      .def_ro("DotProd", &rt::ARMCapability::DotProd).def_ro("I8MM", &rt::ARMCapability::I8MM)
      .def_ro("BF16", &rt::ARMCapability::BF16).def_ro("SVE", &rt::ARMCapability::SVE)
      .def_ro("SVE2", &rt::ARMCapability::SVE2);
  nb::class_<rt::SPIRVCapability, rt::Capability>(m, "SPIRVCapability")
      .def_ro("version_major", &rt::SPIRVCapability::VersionMajor)
      .def_ro("version_minor", &rt::SPIRVCapability::VersionMinor)
      .def_ro("float16", &rt::SPIRVCapability::Float16).def_ro("int8", &rt::SPIRVCapability::Int8);
  nb::class_<rt::CUDACapability, rt::Capability>(m, "CUDACapability")
      .def_ro("compute_major", &rt::CUDACapability::ComputeMajor)
      .def_ro("compute_minor", &rt::CUDACapability::ComputeMinor);
  nb::class_<rt::RISCVCapability, rt::Capability>(m, "RISCVCapability")
      .def_ro("vector", &rt::RISCVCapability::Vector).def_ro("float16", &rt::RISCVCapability::Float16)
      .def_ro("vector_length", &rt::RISCVCapability::VectorLength);
  nb::class_<rt::HexagonCapability, rt::Capability>(m, "HexagonCapability")
      .def_ro("version", &rt::HexagonCapability::Version).def_ro("hvx", &rt::HexagonCapability::HVX);

  nb::class_<PyHostInfo>(m, "HostInfo")
      .def_ro("id", &PyHostInfo::ID)
      .def_ro("name", &PyHostInfo::Name)
      .def_ro("architecture", &PyHostInfo::Architecture)
      .def_ro("os", &PyHostInfo::OS)
      .def_ro("devices", &PyHostInfo::Devices)
      .def("__str__", [](const PyHostInfo &H) { return H.Text; })
      .def("__repr__", [](const PyHostInfo &H) { return "<optimium.runtime.HostInfo " + H.Name + ">"; });

  nb::class_<rt::DeviceID>(m, "DeviceID")
      .def(nb::init<>())
      .def(
          "__init__",
          [](rt::DeviceID *Self, rt::PlatformKind P, rt::DeviceKind K, unsigned Index, unsigned Host) {
            if (Index > 255 || Host > 255)
              throw nb::value_error("DeviceID: index and host_id must be in 0..255");
            new (Self) rt::DeviceID(rt::DeviceID::from(P, K, (uint8_t)Index, (uint8_t)Host));
          },
          "platform"_a, "device_kind"_a, "index"_a = 0, "host_id"_a = 0)
      .def_prop_ro("platform", &rt::DeviceID::getPlatform)
      .def_prop_ro("device_kind", &rt::DeviceID::getDeviceKind)
      .def_prop_ro("index", &rt::DeviceID::getIndex)
      .def_prop_ro("host_id", &rt::DeviceID::getHostID)
      .def_prop_ro("host_info", [](const rt::DeviceID &D) { return hostInfo(D.getHostInfo()); })
      .def_prop_ro("capability", &capabilityOf)
      .def("__eq__", [](const rt::DeviceID &A, const rt::DeviceID &B) { return A == B; })
      .def("__ne__", [](const rt::DeviceID &A, const rt::DeviceID &B) { return A != B; })
      .def("__hash__", [](const rt::DeviceID &D) {
        return ((size_t)D.getHostID() << 24) | ((size_t)D.getPlatform() << 16) | ((size_t)D.getDeviceKind() << 8) |
               D.getIndex();
      })
      .def("__str__", &rt::DeviceID::toString)
      .def("__repr__", [](const rt::DeviceID &D) { return "<optimium.runtime.DeviceID " + D.toString() + ">"; });
  m.def("get_local_info", [] { return hostInfo(rt::getLocalInfo()); });
  m.def("get_device_property", [](const rt::DeviceID &D, const std::string &Key) { return rt::getDeviceProperty(D, Key); },
        "device"_a, "key"_a,
        "A property its backend reports (hw_type, inference_time_path, memory), '' when none.");
}

} // namespace python
} // namespace optimium
