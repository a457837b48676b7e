// optimium-run's flags; see RunModuleFlags.h.
#include "tools/RunModuleFlags.h"

#include <cstdint>
#include <cstdlib>

#include "tools/ElementText.h"
#include "tools/Flagfile.h"
#include "tools/Npy.h"
#include "tools/TextUtil.h"

namespace optimium {
namespace tools {

// ---- flags -------------------------------------------------------------------------------------

std::string usage() {
  return R"(optimium-run: runs one inference of a model, like iree-run-module.

Usage: optimium-run --module=PATH [--input=SPEC]... [flags]
       optimium-run                 (no arguments: runs the bundled digits model over its test set)

Flags:
  --module=PATH                  model: an .onnx file or a folder holding model.onnx
  --function=NAME                function to run (default main; models export only "main")
  --device=NAME                  native (default; local-task and local-sync are aliases) or
                                 another driver present on this host (see --dump_devices)
  --hw_type=NAME                 backend of the npu driver: sim (the simulated NPU); alone it
                                 selects --device=npu (native has no hardware types)
  --device_allocator=auto|cpu|dmabuf   input buffers: dmabuf from /dev/dma_heap/system (an
                                 error where it does not exist), cpu from host memory, auto
                                 (default) dmabuf where the heap allocates, else cpu
  --threads=N                    worker threads (default: one per core)
  --compute_precision=P          float32 (default) or bf16: matrix products on bfloat16
                                 operands, float32 accumulation (CPUs with AVX512_BF16)
  --passphrase_file=FILE         an encrypted model's passphrase: the first line of FILE
                                 (default: the variable OPTIMIUM_RT_PASSPHRASE, if set)
  --input=SPEC                   one per model input, in order (repeatable):
                                   2x2xf32=1 2 3 4   2x2xf32=[[1,2][3,4]]   2x2xf32=1 (fill)
                                   2x2xf32 (zeros)   1x8xf32=@file.bin   1x8xf32=+file.bin
                                   @file.npy   +file.npy (next array)   *file.npy (all arrays)
                                 element types: i1 i8 si8 ui8 i16 si16 ui16 i32 si32 ui32
                                   i64 si64 ui64 f16 bf16 f32 f64
  --output=SPEC                  one per model output: - (print), empty (skip), @file.npy,
                                 +file.npy (append), @file.bin (raw bytes), +file.bin
  --expected_output=SPEC         one per model output, --input syntax, or (ignored);
                                 exit code 1 on a mismatch
  --expected_tolerance=X         float tolerance: |a-e| <= X*max(1,|e|) (default 1e-4)
  --output_max_element_count=N   elements printed per result (default 1024)
  --print_statistics             print load time, inference time and peak memory
  --dump_devices                 list the devices of this host and exit
  --flagfile=PATH                read flags from PATH, one per line ('#' comments)
  --help                         this text
)";
}

namespace {

bool parseBoolValue(const std::string &Flag, const std::string &V, bool HasValue) {
  if (!HasValue || V == "true" || V == "1")
    return true;
  if (V == "false" || V == "0")
    return false;
  throw ToolError("--" + Flag + "=" + V + ": expected true or false");
}

int64_t parseIntValue(const std::string &Flag, const std::string &V, int64_t Min) {
  int64_t S = 0;
  uint64_t U = 0;
  if (!parseInteger(V, false, S, U) || S < Min)
    throw ToolError("--" + Flag + "=" + V + ": expected an integer >= " + std::to_string(Min));
  return S;
}

} // namespace

RunModuleOptions parseFlags(int Argc, const char *const *Argv) {
  RunModuleOptions O;
  if (Argc <= 1) {
    O.NoArguments = true;
    return O;
  }
  std::vector<std::string> Raw;
  for (int I = 1; I < Argc; ++I)
    Raw.push_back(Argv[I]);
  const std::vector<std::string> Args = expandFlagfiles(Raw);
  for (const std::string &Arg : Args) {
    if (Arg.size() < 2 || Arg[0] != '-' || Arg == "--")
      throw ToolError("unexpected argument '" + Arg + "' (flags are --name=value; see --help)");
    const std::string Body = Arg.substr(Arg[1] == '-' ? 2 : 1);
    const size_t Eq = Body.find('=');
    const std::string Name = Body.substr(0, Eq);
    const bool HasValue = Eq != std::string::npos;
    const std::string Value = HasValue ? Body.substr(Eq + 1) : std::string();
    auto NeedValue = [&] {
      if (!HasValue)
        throw ToolError("--" + Name + " needs a value (--" + Name + "=...)");
    };
    if (Name == "module") {
      NeedValue();
      O.Module = Value;
    } else if (Name == "function") {
      NeedValue();
      O.Function = Value;
    } else if (Name == "device") {
      NeedValue();
      O.Device = Value;
      O.DeviceGiven = true;
    } else if (Name == "hw_type") {
      NeedValue();
      O.HwType = Value;
    } else if (Name == "device_allocator") {
      NeedValue();
      if (Value != "auto" && Value != "cpu" && Value != "dmabuf")
        throw ToolError("--device_allocator=" + Value + ": expected auto, cpu or dmabuf");
      O.DeviceAllocator = Value;
    } else if (Name == "input") {
      NeedValue();
      O.Inputs.push_back(Value);
    } else if (Name == "output") {
      NeedValue();
      O.Outputs.push_back(Value);
    } else if (Name == "expected_output") {
      NeedValue();
      O.ExpectedOutputs.push_back(Value);
    } else if (Name == "output_max_element_count") {
      NeedValue();
      O.OutputMaxElementCount = static_cast<size_t>(parseIntValue(Name, Value, 0));
    } else if (Name == "expected_tolerance") {
      NeedValue();
      char *End = nullptr;
      const double T = std::strtod(Value.c_str(), &End);
      if (Value.empty() || !End || *End || !(T >= 0))
        throw ToolError("--expected_tolerance=" + Value + ": expected a number >= 0");
      O.ExpectedTolerance = T;
    } else if (Name == "threads") {
      NeedValue();
      O.Threads = static_cast<int>(parseIntValue(Name, Value, 0));
    } else if (Name == "passphrase_file") {
      NeedValue();
      O.PassphraseFile = Value;
    } else if (Name == "passphrase") {
      throw ToolError("--passphrase: not on the command line (other users can read it there); give "
                      "--passphrase_file=FILE or set OPTIMIUM_RT_PASSPHRASE");
    } else if (Name == "compute_precision") {
      NeedValue();
      if (!parseComputePrecision(Value, O.Precision))
        throw ToolError("--compute_precision=" + Value + ": expected float32 or bf16");
    } else if (Name == "print_statistics") {
      O.PrintStatistics = parseBoolValue(Name, Value, HasValue);
    } else if (Name == "dump_devices") {
      O.DumpDevices = parseBoolValue(Name, Value, HasValue);
    } else if (Name == "help" || Name == "h") {
      O.Help = true;
    } else {
      throw ToolError("unknown flag '--" + Name + "' (see --help)");
    }
  }
  return O;
}

} // namespace tools
} // namespace optimium
