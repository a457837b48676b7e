// Profiling results: ProfileEventKind, ProfileEvent, ProfileDurations, LayerDuration (the request's
// profile() is bound with the request, in Model.cpp).
#include "Bindings.h"

namespace optimium {
namespace python {

using namespace nb::literals;

void bind_profiling(nb::module_ &m) {
  // Profiling.
  nb::enum_<rt::ProfileEventKind>(m, "ProfileEventKind")
      .value("MODEL_EXECUTE_BEGIN", rt::ProfileEventKind::ModelExecuteBegin)
      .value("MODEL_EXECUTE_END", rt::ProfileEventKind::ModelExecuteEnd)
      .value("LAYER_EXECUTE_BEGIN", rt::ProfileEventKind::LayerExecuteBegin)
      .value("LAYER_EXECUTE_END", rt::ProfileEventKind::LayerExecuteEnd)
      .value("LAUNCH_BEGIN", rt::ProfileEventKind::LaunchBegin)
      .value("LAUNCH_END", rt::ProfileEventKind::LaunchEnd)
      .value("DEVICE_EXECUTE_BEGIN", rt::ProfileEventKind::DeviceExecuteBegin)
      .value("DEVICE_EXECUTE_END", rt::ProfileEventKind::DeviceExecuteEnd)
      .value("COPY_BEGIN", rt::ProfileEventKind::CopyBegin)
      .value("COPY_END", rt::ProfileEventKind::CopyEnd)
      .value("QUEUE_BEGIN", rt::ProfileEventKind::QueueBegin)
      .value("QUEUE_END", rt::ProfileEventKind::QueueEnd)
      .value("WAIT_BEGIN", rt::ProfileEventKind::WaitBegin)
      .value("WAIT_END", rt::ProfileEventKind::WaitEnd);
  nb::class_<rt::ProfileEvent>(m, "ProfileEvent")
      .def_ro("kind", &rt::ProfileEvent::Kind)
      .def_prop_ro("timestamp",
                   [](const rt::ProfileEvent &E) { return (long long)E.TimeStamp.time_since_epoch().count(); },
                   "Raw std::chrono::high_resolution_clock ticks since epoch (nanoseconds on Linux).")
      .def_ro("operation", &rt::ProfileEvent::Operation)
      .def_ro("thread_id", &rt::ProfileEvent::ThreadID)
      .def_ro("tensor_id", &rt::ProfileEvent::TensorID)
      .def_ro("source_device", &rt::ProfileEvent::SourceDevice)
      .def_ro("dest_device", &rt::ProfileEvent::DestDevice)
      .def("__repr__", [](const rt::ProfileEvent &E) {
        return std::string("<optimium.runtime.ProfileEvent ") + rt::toString(E.Kind) + " op=" +
               std::to_string(E.Operation) + " thread=" + std::to_string(E.ThreadID) + ">";
      });
  nb::class_<rt::ProfileDurations>(m, "ProfileDurations")
      .def_ro("model_name", &rt::ProfileDurations::ModelName)
      .def_ro("model_durations", &rt::ProfileDurations::ModelDurations)
      .def_ro("layer_durations", &rt::ProfileDurations::LayerDurations)
      .def_ro("copy_durations", &rt::ProfileDurations::CopyDurations)
      .def("__repr__", [](const rt::ProfileDurations &D) {
        return "<optimium.runtime.ProfileDurations of '" + D.ModelName + "': " +
               std::to_string(D.ModelDurations.size()) + " runs, " + std::to_string(D.LayerDurations.size()) +
               " layers>";
      });
  nb::class_<rt::LayerDuration>(m, "LayerDuration")
      .def_ro("name", &rt::LayerDuration::Name)
      .def_ro("type", &rt::LayerDuration::Type)
      .def_ro("operation", &rt::LayerDuration::Operation)
      .def_ro("count", &rt::LayerDuration::Count)
      .def_ro("total_ns", &rt::LayerDuration::TotalNs)
      .def_ro("min_ns", &rt::LayerDuration::MinNs)
      .def_ro("max_ns", &rt::LayerDuration::MaxNs)
      .def_ro("mean_ns", &rt::LayerDuration::MeanNs)
      .def("__repr__", [](const rt::LayerDuration &L) {
        return "<optimium.runtime.LayerDuration " + L.Name + " (" + L.Type + ") x" + std::to_string(L.Count) + ">";
      });
}

} // namespace python
} // namespace optimium
