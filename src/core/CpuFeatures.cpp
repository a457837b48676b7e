// Detection of the host CPU's features (see CpuFeatures.h).
#include "core/CpuFeatureMask.h"

#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <utility>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "core/Log.h"

namespace optimium {
namespace runtime {
namespace detail {

namespace {

#if defined(__x86_64__) || defined(__i386__)
uint64_t readXCR0() {
  uint32_t Lo = 0, Hi = 0;
  // xgetbv by opcode-free asm: needs no -mxsave; only called when OSXSAVE says it is available.
  __asm__ volatile("xgetbv" : "=a"(Lo), "=d"(Hi) : "c"(0));
  return (static_cast<uint64_t>(Hi) << 32) | Lo;
}

CpuFeatures detectX86() {
  CpuFeatures F;
  CpuFeatures *C = &F;
  unsigned Eax = 0, Ebx = 0, Ecx = 0, Edx = 0;
  const unsigned MaxLeaf = __get_cpuid_max(0, nullptr);
  if (MaxLeaf < 1 || !__get_cpuid(1, &Eax, &Ebx, &Ecx, &Edx))
    return F;
  const auto Bit = [](unsigned Reg, int B) { return ((Reg >> B) & 1u) != 0; };
  C->SSE2 = Bit(Edx, 26);
  C->SSE3 = Bit(Ecx, 0);
  C->SSSE3 = Bit(Ecx, 9);
  C->SSE41 = Bit(Ecx, 19);
  C->SSE42 = Bit(Ecx, 20);
  const bool CpuFMA = Bit(Ecx, 12), CpuAVX = Bit(Ecx, 28), CpuF16C = Bit(Ecx, 29);

  // The OS must save the wider register state, or the instructions fault (XCR0).
  const bool OSXSave = Bit(Ecx, 27);
  const uint64_t XCR0 = OSXSave ? readXCR0() : 0;
  const bool OSAvx = (XCR0 & 0x6) == 0x6;                // XMM | YMM
  const bool OSAvx512 = OSAvx && (XCR0 & 0xe0) == 0xe0;  // opmask | ZMM_Hi256 | Hi16_ZMM
  const bool OSAmx = (XCR0 & 0x60000) == 0x60000;        // XTILECFG | XTILEDATA

  C->AVX = CpuAVX && OSAvx;
  C->FMA = CpuFMA && OSAvx;
  C->F16C = CpuF16C && OSAvx;

  if (MaxLeaf >= 7) {
    __cpuid_count(7, 0, Eax, Ebx, Ecx, Edx);
    const unsigned MaxSub7 = Eax;
    C->AVX2 = Bit(Ebx, 5) && OSAvx;
    C->AVX512F = Bit(Ebx, 16) && OSAvx512;
    C->AVX512DQ = Bit(Ebx, 17) && OSAvx512;
    C->AVX512BW = Bit(Ebx, 30) && OSAvx512;
    C->AVX512VL = Bit(Ebx, 31) && OSAvx512;
    C->AVX512VNNI = Bit(Ecx, 11) && OSAvx512;
    C->AVX512FP16 = Bit(Edx, 23) && OSAvx512;
    // AMX also needs a per-process permission on Linux (arch_prctl ARCH_REQ_XCOMP_PERM), requested
    // by the kernels that use it; here we report what the CPU and the OS support.
    C->AMXBF16 = Bit(Edx, 22) && OSAmx;
    C->AMXTile = Bit(Edx, 24) && OSAmx;
    C->AMXInt8 = Bit(Edx, 25) && OSAmx;
    if (MaxSub7 >= 1) {
      __cpuid_count(7, 1, Eax, Ebx, Ecx, Edx);
      C->AVXVNNI = Bit(Eax, 4) && OSAvx;
      C->AVX512BF16 = Bit(Eax, 5) && OSAvx512;
    }
  }
  return F;
}
#endif

/// Every feature with its printed name, in toString() order.
std::vector<std::pair<const char *, bool CpuFeatures::*>> featureTable() {
  return {{"sse2", &CpuFeatures::SSE2},           {"sse3", &CpuFeatures::SSE3},
          {"ssse3", &CpuFeatures::SSSE3},         {"sse4.1", &CpuFeatures::SSE41},
          {"sse4.2", &CpuFeatures::SSE42},        {"avx", &CpuFeatures::AVX},
          {"avx2", &CpuFeatures::AVX2},           {"fma", &CpuFeatures::FMA},
          {"f16c", &CpuFeatures::F16C},           {"avx512f", &CpuFeatures::AVX512F},
          {"avx512bw", &CpuFeatures::AVX512BW},   {"avx512dq", &CpuFeatures::AVX512DQ},
          {"avx512vl", &CpuFeatures::AVX512VL},   {"avx512vnni", &CpuFeatures::AVX512VNNI},
          {"avx512bf16", &CpuFeatures::AVX512BF16}, {"avx512fp16", &CpuFeatures::AVX512FP16},
          {"avxvnni", &CpuFeatures::AVXVNNI},     {"amx-tile", &CpuFeatures::AMXTile},
          {"amx-int8", &CpuFeatures::AMXInt8},    {"amx-bf16", &CpuFeatures::AMXBF16}};
}

/// Clears what needs a feature that is gone (the implications in CpuFeatures.h), to a fixpoint.
void closeDependencies(CpuFeatures &F) {
  if (!F.AVX)
    F.AVX2 = F.FMA = F.F16C = F.AVXVNNI = false;
  if (!F.AVX2)
    F.AVX512F = false;
  if (!F.AVX512F)
    F.AVX512BW = F.AVX512DQ = F.AVX512VL = F.AVX512VNNI = F.AVX512BF16 = F.AVX512FP16 = false;
  if (!F.AVX512F)
    F.AMXTile = false;
  if (!F.AMXTile)
    F.AMXInt8 = F.AMXBF16 = false;
}

} // namespace

std::string CpuFeatures::toString() const {
  std::string S;
  for (const auto &E : featureTable())
    if (this->*E.second)
      S += (S.empty() ? "" : " ") + std::string(E.first);
  return S.empty() ? "none" : S;
}

uint64_t cpuFeatureMask(const CpuFeatures &F) {
  uint64_t Mask = 0, Bit = 1;
  for (const auto &E : featureTable()) {
    if (F.*E.second)
      Mask |= Bit;
    Bit <<= 1;
  }
  return Mask;
}

std::string missingCpuFeatures(uint64_t Mask, const CpuFeatures &Have) {
  std::string S;
  uint64_t Bit = 1;
  for (const auto &E : featureTable()) {
    if ((Mask & Bit) && !(Have.*E.second))
      S += (S.empty() ? "" : " ") + std::string(E.first);
    Bit <<= 1;
  }
  // Bits past the table: features a newer runtime knows and this one does not.
  if (Mask >> featureTable().size())
    S += std::string(S.empty() ? "" : " ") + "(features unknown to this runtime)";
  return S;
}

CpuFeatures detectCpuFeatures() {
#if defined(__x86_64__) || defined(__i386__)
  return detectX86();
#else
  return CpuFeatures();
#endif
}

std::string disableCpuFeatures(CpuFeatures &F, const std::string &List) {
  std::string Unknown;
  std::stringstream SS(List);
  std::string Name;
  const auto Table = featureTable();
  while (std::getline(SS, Name, ',')) {
    const size_t B = Name.find_first_not_of(" \t"), E = Name.find_last_not_of(" \t");
    if (B == std::string::npos)
      continue;
    Name = Name.substr(B, E - B + 1);
    bool Known = false;
    for (const auto &T : Table)
      if (Name == T.first) {
        F.*T.second = false;
        Known = true;
      }
    if (Name == "amx") {
      F.AMXTile = false;
      Known = true;
    }
    if (!Known)
      Unknown += (Unknown.empty() ? "" : ",") + Name;
  }
  closeDependencies(F);
  return Unknown;
}

const CpuFeatures &cpuFeatures() {
  static const CpuFeatures F = [] {
    CpuFeatures D = detectCpuFeatures();
    if (const char *Env = std::getenv("OPTIMIUM_RT_CPU_DISABLE")) {
      const std::string Unknown = disableCpuFeatures(D, Env);
      if (!Unknown.empty())
        OPT_LOG(Warning, "OPTIMIUM_RT_CPU_DISABLE: unknown feature name(s) '", Unknown, "' ignored; known: ",
                detectCpuFeatures().toString());
      OPT_LOG(Info, "CPU features in use (OPTIMIUM_RT_CPU_DISABLE='", Env, "'): ", D.toString());
    }
    return D;
  }();
  return F;
}

} // namespace detail
} // namespace runtime
} // namespace optimium
