// Runtime setup: initialize/finalize, extensions, the version, and the logging and config submodules.
#include "Bindings.h"

#include <memory>

#include "Optimium/Runtime/Logging/ConsoleWriter.h"
#include "Optimium/Runtime/Logging/FileWriter.h"

namespace optimium {
namespace python {

using namespace nb::literals;

void bind_runtime(nb::module_ &m) {
  // Initialization, version, extensions.
  m.def("initialize", [] { rt::initialize(); });
  m.def("finalize", [] { rt::finalize(); });
  m.def("is_initialized", [] { return rt::isInitialized(); });
  m.def("load_extension", [](const std::string &P) { rt::loadExtension(P); }, "path"_a);

  struct PyVersion {
    rt::Version V;
  };
  nb::class_<PyVersion>(m, "Version")
      .def_prop_ro("major", [](const PyVersion &P) { return P.V.Major; })
      .def_prop_ro("minor", [](const PyVersion &P) { return P.V.Minor; })
      .def_prop_ro("patch", [](const PyVersion &P) { return P.V.Patch; })
      .def_prop_ro("tag", [](const PyVersion &P) { return std::string(P.V.Tag ? P.V.Tag : ""); })
      .def_prop_ro("commit_id", [](const PyVersion &P) { return std::string(P.V.CommitID ? P.V.CommitID : ""); })
      .def_prop_ro("build_info", [](const PyVersion &P) { return std::string(P.V.BuildInfo ? P.V.BuildInfo : ""); })
      .def("__str__", [](const PyVersion &P) { return streamed(P.V); })
      .def("__repr__", [](const PyVersion &P) { return "<optimium.runtime.Version " + streamed(P.V) + ">"; });
  m.def("get_version", [] { return PyVersion{rt::getVersion()}; });

  // Logging and config submodules.
  nb::module_ Log = m.def_submodule("logging", "Runtime log level and log writers");
  nb::enum_<rt::LogLevel>(Log, "LogLevel")
      .value("DEBUG", rt::LogLevel::Debug)
      .value("VERBOSE", rt::LogLevel::Verbose)
      .value("INFO", rt::LogLevel::Info)
      .value("WARNING", rt::LogLevel::Warning)
      .value("ERROR", rt::LogLevel::Error);
  Log.def("set_loglevel", [](rt::LogLevel L) { rt::logging::setLogLevel(L); }, "level"_a);
  Log.def("get_loglevel", [] { return rt::logging::getLogLevel(); });
  Log.def("enable_console_log",
          [] { rt::logging::addLogWriter(std::unique_ptr<rt::logging::LogWriter>(new rt::logging::ConsoleWriter())); });
  Log.def(
      "enable_file_log",
      [](const std::string &Path) {
        rt::logging::addLogWriter(std::unique_ptr<rt::logging::LogWriter>(new rt::logging::FileWriter(Path)));
      },
      "path"_a);
  Log.def("clear_log_writers", [] { rt::logging::clearLogWriters(); });

  nb::module_ Cfg = m.def_submodule("config", "Tensor print configuration");
  Cfg.def("set_print_threshold", [](int T) { rt::config::setPrintThreshold(T); }, "threshold"_a);
  Cfg.def("get_print_threshold", [] { return rt::config::getPrintThreshold(); });
  Cfg.def("set_print_precision", [](int P) { rt::config::setPrintPrecision(P); }, "precision"_a);
  Cfg.def("get_print_precision", [] { return rt::config::getPrintPrecision(); });
}

} // namespace python
} // namespace optimium
