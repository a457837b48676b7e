// Model groups (spec Python section 9): create_model_group(), ModelGroup (add, size, sealed) and
// GroupMember (a blocking run() returning the outputs in output_names order, metadata, and the
// profiling extension set_profiling / get_profile_durations / get_layer_durations).
#include "Bindings.h"

#include <memory>
#include <optional>
#include <vector>

#include "api/OwnedModelBytes.h"

namespace optimium {
namespace python {

using namespace nb::literals;

namespace {

struct PyMember {
  rt::GroupMember M;
  /// The inputs of the last run(): an output may be an input passed through (user memory).
  nb::object Keep = nb::none();
};

PyTensor memberOutput(const PyMember &P, rt::Tensor T) { return PyTensor{std::move(T), P.Keep}; }

nb::list memberRun(PyMember &P, nb::handle Inputs) {
  const rt::GroupMember &M = P.M;
  ConvertedInputs C = convertInputs(
      "run", M.getName(), M.getInputNames(),
      [&M](size_t I) -> const rt::TensorInfo & { return M.getInputTensorInfo(I); }, Inputs);
  P.Keep = nb::cast(C.Keep);
  {
    nb::gil_scoped_release G; // other members' run() from other threads wait inside, without the GIL
    if (C.ByName)
      P.M.run(C.Map);
    else
      P.M.run(rt::ArrayRef<rt::Tensor>(C.List));
  }
  nb::list Out;
  for (size_t I = 0; I < P.M.getOutputNames().size(); ++I)
    Out.append(nb::cast(memberOutput(P, P.M.getOutput(I))));
  return Out;
}

} // namespace

void bind_model_group(nb::module_ &m) {
  nb::class_<PyMember>(m, "GroupMember",
                       "One model of a ModelGroup. Not a Model: no create_request(); run() blocks, and a run of "
                       "another member from another thread waits until it ends.")
      .def("run", &memberRun, "inputs"_a,
           "Runs the model (blocking) on a list of inputs in input order or a dict by name; returns the outputs "
           "(rt.Tensor) in output_names order. They point into the member's memory, which the next run() "
           "overwrites: copy (np.array(t)) what you keep.")
      .def("get_output",
           [](const PyMember &P, nb::handle Key) {
             if (nb::isinstance<nb::str>(Key))
               return memberOutput(P, P.M.getOutput(rt::StringRef(nb::cast<std::string>(Key))));
             if (!PyIndex_Check(Key.ptr()))
               throw nb::type_error("get_output: expected an output index (int) or name (str)");
             const int64_t I = nb::cast<int64_t>(Key);
             if (I < 0)
               throw nb::value_error("get_output: the index must be >= 0");
             return memberOutput(P, P.M.getOutput(static_cast<size_t>(I)));
           },
           "index_or_name"_a)
      .def_prop_ro("name", [](const PyMember &P) { return P.M.getName(); })
      .def_prop_ro("input_names", [](const PyMember &P) { return names(P.M.getInputNames()); })
      .def_prop_ro("output_names", [](const PyMember &P) { return names(P.M.getOutputNames()); })
      .def("get_tensor", [](const PyMember &P, const std::string &N) { return rt::TensorInfo(P.M.getTensorInfo(N)); },
           "name"_a)
      .def("get_input_tensor", [](const PyMember &P, size_t I) { return rt::TensorInfo(P.M.getInputTensorInfo(I)); },
           "index"_a)
      .def("get_output_tensor",
           [](const PyMember &P, size_t I) { return rt::TensorInfo(P.M.getOutputTensorInfo(I)); }, "index"_a)
      .def(
          "set_profiling",
          [](PyMember &P, bool Enabled, long long EventBufferSize) {
            if (EventBufferSize < 0)
              throw nb::value_error("set_profiling: event_buffer_size must be >= 0 (0 = the default)");
            nb::gil_scoped_release G; // waits for a run in progress
            P.M.setRecorder(Enabled ? std::make_shared<rt::ProfileEventRecorder>(static_cast<size_t>(EventBufferSize))
                                    : nullptr);
          },
          "enabled"_a = true, "event_buffer_size"_a = 0,
          "Records every later run() (a fresh buffer each call; False stops). Extension to the reference API.")
      .def("get_profile_durations", [](const PyMember &P) { return P.M.getProfileDurations(); })
      .def("get_layer_durations", [](const PyMember &P) { return P.M.getLayerDurations(); })
      .def("__repr__", [](const PyMember &P) { return "<optimium.runtime.GroupMember '" + P.M.getName() + "'>"; });

  nb::class_<rt::ModelGroup>(m, "ModelGroup",
                             "Models that never run concurrently, sharing one thread pool and one Exclusive scheduler.")
      .def(
          "add",
          [](rt::ModelGroup &G, nb::handle Path, nb::object Devices, bool Strict, bool MemOpt,
             std::optional<std::string> SavePath, std::optional<std::string> Passphrase, int Threads,
             nb::object Capacities, bool IndexedSave, const std::string &Precision) {
            rt::GroupMemberOptions O;
            setPerModelOptions(O, "add", Devices, Strict, MemOpt, SavePath, Passphrase, Threads, Capacities);
            O.IndexedIntermediateSave = IndexedSave;
            O.Precision = computePrecision(Precision);
            if (nb::isinstance<nb::bytes>(Path) || nb::isinstance<nb::bytearray>(Path) ||
                PyMemoryView_Check(Path.ptr())) {
              Py_buffer View;
              if (PyObject_GetBuffer(Path.ptr(), &View, PyBUF_SIMPLE) != 0)
                throw nb::python_error();
              // The member keeps its own copy (the Python object may change or go away).
              auto Data = std::make_shared<std::vector<uint8_t>>(static_cast<const uint8_t *>(View.buf),
                                                                 static_cast<const uint8_t *>(View.buf) + View.len);
              PyBuffer_Release(&View);
              nb::gil_scoped_release Gil;
              return new PyMember{rt::detail::addOwningBytes(G, std::move(Data), O)};
            }
            std::string P = nb::cast<std::string>(nb::str(nb::module_::import_("os").attr("fspath")(Path)));
            nb::gil_scoped_release Gil;
            return new PyMember{G.add(P, O)};
          },
          "path"_a, "devices"_a = nb::none(), "strict"_a = false, "memory_optimization"_a = true,
          "intermediate_save_path"_a = nb::none(), "passphrase"_a = nb::none(), "threads"_a = 0,
          "resizable_capacities"_a = nb::none(), "indexed_intermediate_save"_a = false,
          "compute_precision"_a = "float32",
          "Loads a model (a path, or the bytes of an ONNX file) as a member. InvalidStateError once the group "
          "is sealed (a member has run).")
      .def_prop_ro("size", &rt::ModelGroup::size)
      .def_prop_ro("sealed", &rt::ModelGroup::sealed)
      .def("__len__", &rt::ModelGroup::size)
      .def("__repr__", [](const rt::ModelGroup &G) {
        return "<optimium.runtime.ModelGroup " + std::to_string(G.size()) + " member(s)" +
               (G.sealed() ? ", sealed>" : ">");
      });

  m.def(
      "create_model_group",
      [](nb::object Cores, int Spin, int SpinYield, bool Denormals, bool Stealing) {
        rt::ModelGroupOptions O;
        setPoolTuning(O, Cores, Spin, SpinYield, Denormals, Stealing);
        return rt::createModelGroup(O);
      },
      "cores"_a = nb::none(), "spin_iterations"_a = rt::kDefaultSpinIterations,
      "spin_yield_iterations"_a = rt::kDefaultSpinYieldIterations, "disable_denormals"_a = true,
      "enable_work_stealing"_a = true,
      "A group whose members share one thread pool (these are its knobs; its size is the largest member's "
      "threads) and one Exclusive scheduler.");
}

} // namespace python
} // namespace optimium
