// Devices and hosts: what a model can run on. DeviceID is a small value type; the capabilities of
// local devices are detected at initialize() from the real hardware.
#pragma once

#include <cstdint>
#include <string>

#include "Optimium/Runtime/Export.h"
#include "Optimium/Runtime/Utils/ArrayRef.h"
#include "Optimium/Runtime/Utils/StringRef.h"

namespace optimium {
namespace runtime {

enum class PlatformKind : uint8_t { Native = 0, XNNPack, CUDA, Vulkan, OpenCL, SNPE, QNN, Synaptics, Hexagon };

enum class DeviceKind : uint8_t {
  Unspecified = 0,
  Neutral,
  x86,
  x64,
  ARM,
  ARM64,
  RISCV32,
  RISCV64,
  AnyCPU,
  NVIDIA,
  AMDGPU,
  IntelGPU,
  Mali,
  Adreno,
  AnyGPU,
  Hexagon,
  Myriad,
  ARA1,
  GoogleTPU,
  CV22,
  SynapNPU,
  AnyNPU,
};

enum class OSKind : uint8_t { Linux = 0, Android, Windows, MacOS, IOS };

enum class CapabilityKind : uint8_t { Void = 0, X86, ARM, SPIRV, CUDA, RISCV, Hexagon };

OPTIMIUM_RT_API bool isDeviceCPU(DeviceKind Kind);
OPTIMIUM_RT_API bool isDeviceGPU(DeviceKind Kind);
OPTIMIUM_RT_API bool isDeviceNPU(DeviceKind Kind);
OPTIMIUM_RT_API bool isDeviceNeutral(DeviceKind Kind);

OPTIMIUM_RT_API const char *toString(PlatformKind Kind);
OPTIMIUM_RT_API const char *toString(DeviceKind Kind);
OPTIMIUM_RT_API const char *toString(OSKind Kind);

/// Hardware capabilities of a device. Use getKind() (or dynamic_cast) to reach the concrete class.
class OPTIMIUM_RT_API Capability {
public:
  virtual ~Capability();
  virtual CapabilityKind getKind() const = 0;
  virtual std::string toString() const = 0;
};

class OPTIMIUM_RT_API VoidCapability : public Capability {
public:
  CapabilityKind getKind() const override { return CapabilityKind::Void; }
  std::string toString() const override;
};

class OPTIMIUM_RT_API X86Capability : public Capability {
public:
  bool SSE2 = false, SSE3 = false, SSSE3 = false, SSE41 = false, SSE42 = false;
  bool AVX = false, AVX2 = false, FMA = false, F16C = false;
  bool AVX512F = false, AVX512BW = false, AVX512DQ = false, AVX512VL = false;
  bool AVX512VNNI = false, AVX512BF16 = false, AVX512FP16 = false, AVXVNNI = false;
  bool AMXTile = false, AMXInt8 = false, AMXBF16 = false;
  CapabilityKind getKind() const override { return CapabilityKind::X86; }
  std::string toString() const override;
};

class OPTIMIUM_RT_API ARMCapability : public Capability {
public:
  bool NEON = false, FP16 = false, DotProd = false, I8MM = false, BF16 = false, SVE = false, SVE2 = false;
  CapabilityKind getKind() const override { return CapabilityKind::ARM; }
  std::string toString() const override;
};

class OPTIMIUM_RT_API SPIRVCapability : public Capability {
public:
  uint32_t VersionMajor = 0, VersionMinor = 0;
  bool Float16 = false, Int8 = false;
  CapabilityKind getKind() const override { return CapabilityKind::SPIRV; }
  std::string toString() const override;
};

class OPTIMIUM_RT_API CUDACapability : public Capability {
public:
  uint32_t ComputeMajor = 0, ComputeMinor = 0;
  CapabilityKind getKind() const override { return CapabilityKind::CUDA; }
  std::string toString() const override;
};

class OPTIMIUM_RT_API RISCVCapability : public Capability {
public:
  bool Vector = false, Float16 = false;
  uint32_t VectorLength = 0;
  CapabilityKind getKind() const override { return CapabilityKind::RISCV; }
  std::string toString() const override;
};

class OPTIMIUM_RT_API HexagonCapability : public Capability {
public:
  uint32_t Version = 0;
  bool HVX = false;
  CapabilityKind getKind() const override { return CapabilityKind::Hexagon; }
  std::string toString() const override;
};

struct HostInfo;

class OPTIMIUM_RT_API DeviceID {
public:
  DeviceID() : Platform(PlatformKind::Native), Kind(DeviceKind::Unspecified), Index(0), Host(0) {}

  static DeviceID from(PlatformKind Platform, DeviceKind Kind, uint8_t Index = 0, uint8_t Host = 0) {
    DeviceID ID;
    ID.Platform = Platform;
    ID.Kind = Kind;
    ID.Index = Index;
    ID.Host = Host;
    return ID;
  }

  PlatformKind getPlatform() const { return Platform; }
  DeviceKind getDeviceKind() const { return Kind; }
  uint32_t getIndex() const { return Index; }
  uint32_t getHostID() const { return Host; }
  /// Info of the host the device lives on (host 0 is always the local host).
  HostInfo getHostInfo() const;
  /// Capabilities of a device known to this process; VoidCapability for an unknown device.
  const Capability &getCapability() const;
  /// e.g. "Native:x64:0@0"
  std::string toString() const;

  friend bool operator==(const DeviceID &A, const DeviceID &B) {
    return A.Platform == B.Platform && A.Kind == B.Kind && A.Index == B.Index && A.Host == B.Host;
  }
  friend bool operator!=(const DeviceID &A, const DeviceID &B) { return !(A == B); }
  friend bool operator<(const DeviceID &A, const DeviceID &B) { return A.pack() < B.pack(); }

private:
  uint32_t pack() const {
    return (static_cast<uint32_t>(Host) << 24) | (static_cast<uint32_t>(Platform) << 16) |
           (static_cast<uint32_t>(Kind) << 8) | Index;
  }
  PlatformKind Platform;
  DeviceKind Kind;
  uint8_t Index;
  uint8_t Host;
};

struct OPTIMIUM_RT_API HostInfo {
  int ID = 0;                          ///< 0 is always the local host.
  StringRef Name;                      ///< Host name.
  DeviceKind Architecture = DeviceKind::Unspecified;
  OSKind OS = OSKind::Linux;
  ArrayRef<DeviceID> Devices;          ///< Devices available on the host.

  /// e.g. "HostInfo(id: 0, ..., devices: [Native:x64:0@0 (x86: sse2 ...)])": the local host (id 0)
  /// lists each device's capability (extensions report theirs through the backend ABI).
  std::string toString() const;
};

/// Info of the local host; valid after initialize().
OPTIMIUM_RT_API HostInfo getLocalInfo();

} // namespace runtime
} // namespace optimium
