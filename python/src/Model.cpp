// Models and requests: load_model() and its options, Model, InferRequest (infer from lists, dicts,
// numpy arrays or tensors; callbacks; resize migration; profile()), SchedulerType, InferStatus.
#include "Bindings.h"

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "api/OwnedModelBytes.h"
#include "core/ErrorConversion.h"
#include "import/SealedFolder.h"

namespace optimium {
namespace python {

using namespace nb::literals;

namespace {

// ---------------------------------------------------------------- requests
struct CallbackSlot {
  PyObject *Fn = nullptr; ///< guarded by the GIL
};

struct PyRequest {
  rt::InferRequest R;
  rt::Model M; ///< the model stays alive as long as its request (the C++ side does this too)
  nb::object Keep = nb::none(); ///< the inputs of the last infer() (a tuple)
  std::shared_ptr<CallbackSlot> Slot = std::make_shared<CallbackSlot>();
  bool CallbackRegistered = false;

  PyRequest(rt::InferRequest R, rt::Model M) : R(std::move(R)), M(std::move(M)) {}
  PyRequest(const PyRequest &) = delete;
  PyRequest &operator=(const PyRequest &) = delete;

  ~PyRequest() {
    // Dropped while running: the run still reads the inputs we keep; wait for it first.
    if (R) {
      try {
        if (R.getStatus() == rt::InferStatus::Running) {
          nb::gil_scoped_release G;
          R.wait();
        }
      } catch (...) {
      }
    }
    if (Slot && Slot->Fn) {
      PyObject *F = Slot->Fn;
      Slot->Fn = nullptr;
      Py_DECREF(F);
    }
  }
};

} // namespace

void setPerModelOptions(rt::PerModelOptions &O, const char *What, nb::object Devices, bool Strict, bool MemOpt,
                        std::optional<std::string> SavePath, std::optional<std::string> Passphrase, int Threads,
                        nb::object Capacities) {
  if (!Devices.is_none()) {
    if (nb::isinstance<rt::DeviceID>(Devices))
      O.Devices.push_back(nb::cast<rt::DeviceID>(Devices));
    else
      for (nb::handle D : nb::iter(Devices))
        O.Devices.push_back(nb::cast<rt::DeviceID>(D));
  }
  O.Strict = Strict;
  O.EnableMemoryOptimization = MemOpt;
  if (SavePath)
    O.IntermediateSavePath = *SavePath;
  if (Passphrase)
    O.Passphrase = *Passphrase;
  if (Threads < 0)
    throw nb::value_error((std::string(What) + ": threads must be >= 0 (0 = one per core)").c_str());
  O.ThreadCount = Threads;
  if (!Capacities.is_none())
    for (auto KV : nb::cast<nb::dict>(Capacities))
      O.ResizableCapacities[nb::cast<std::string>(KV.first)] = toShape(KV.second);
}

void setPoolTuning(rt::PoolTuning &O, nb::object Cores, int Spin, int SpinYield, bool Denormals, bool Stealing) {
  if (!Cores.is_none())
    for (nb::handle C : nb::iter(Cores))
      O.Cores.push_back(nb::cast<int>(C));
  O.SpinIterations = Spin;
  O.SpinYieldIterations = SpinYield;
  O.DisableDenormals = Denormals;
  O.EnableWorkStealing = Stealing;
}

rt::Tensor convertInput(const rt::TensorInfo &Info, size_t Index, nb::handle H, std::vector<nb::object> &Keep) {
  const std::string What = "input " + std::to_string(Index) + " ('" + Info.Name + "')";
  if (nb::isinstance<PyTensor>(H)) {
    Keep.push_back(nb::borrow(H));
    return nb::cast<PyTensor &>(H).T;
  }
  Py_buffer View;
  if (PyObject_GetBuffer(H.ptr(), &View, PyBUF_RECORDS_RO) != 0) {
    PyErr_Clear();
    throw nb::type_error((What + ": expected a numpy.ndarray or rt.Tensor, got " +
                          nb::cast<std::string>(nb::str(H.type().attr("__name__"))))
                             .c_str());
  }
  const rt::ElementType Got = typeFromFormat(View.format, View.itemsize);
  const bool Contiguous = PyBuffer_IsContiguous(&View, 'C') != 0;
  PyBuffer_Release(&View);
  const bool Bf16Storage = Info.Type == rt::ElementType::BF16 && Got == rt::ElementType::U16;
  if (Got != Info.Type && !Bf16Storage)
    throw nb::type_error((What + " has dtype " + numpyName(Got) + ", the model expects " + numpyName(Info.Type) +
                          " (" + rt::toString(Info.Type) + ")")
                             .c_str());
  PyTensor P = tensorFromBuffer(H, Info.Type, /*Copy=*/!Contiguous, What);
  Keep.push_back(Contiguous ? nb::borrow(H) : nb::object(nb::none()));
  return P.T;
}

ConvertedInputs convertInputs(const char *What, const std::string &ModelName, rt::ArrayRef<rt::StringRef> Names,
                              const std::function<const rt::TensorInfo &(size_t)> &InfoOf, nb::handle Inputs) {
  ConvertedInputs C;
  if (nb::isinstance<nb::dict>(Inputs)) {
    C.ByName = true;
    for (auto KV : nb::borrow<nb::dict>(Inputs)) {
      if (!nb::isinstance<nb::str>(KV.first))
        throw nb::type_error((std::string(What) + ": dict keys must be input names (str)").c_str());
      const std::string Name = nb::cast<std::string>(KV.first);
      size_t Index = Names.size();
      for (size_t I = 0; I < Names.size(); ++I)
        if (Names[I] == rt::StringRef(Name))
          Index = I;
      if (Index == Names.size()) {
        std::string All;
        for (auto N : Names)
          All += (All.empty() ? "" : ", ") + N.str();
        throw nb::value_error((std::string(What) + ": model '" + ModelName + "' has no input named '" + Name +
                               "' (inputs: " + All + ")")
                                  .c_str());
      }
      C.Map[Name] = convertInput(InfoOf(Index), Index, KV.second, C.Keep);
    }
    return C;
  }
  if (nb::isinstance<PyTensor>(Inputs) || PyObject_CheckBuffer(Inputs.ptr()))
    throw nb::type_error((std::string(What) + ": pass a list (or dict) of inputs, e.g. " + What + "([arr])").c_str());
  const size_t N = Names.size();
  for (nb::handle H : nb::iter(Inputs)) {
    if (C.List.size() >= N)
      throw nb::value_error((std::string(What) + ": model '" + ModelName + "' takes " + std::to_string(N) +
                             " input(s), got more")
                                .c_str());
    C.List.push_back(convertInput(InfoOf(C.List.size()), C.List.size(), H, C.Keep));
  }
  if (C.List.size() != N) {
    std::string Missing;
    for (size_t J = C.List.size(); J < N; ++J)
      Missing += (Missing.empty() ? "'" : ", '") + Names[J].str() + "'";
    throw nb::value_error((std::string(What) + ": model '" + ModelName + "' takes " + std::to_string(N) +
                           " input(s), got " + std::to_string(C.List.size()) + " (missing " + Missing + ")")
                              .c_str());
  }
  return C;
}

namespace {

ConvertedInputs requestInputs(const char *What, PyRequest &Q, nb::handle Inputs) {
  const rt::Model &M = Q.M;
  return convertInputs(What, M.getName(), M.getInputNames(),
                       [&M](size_t I) -> const rt::TensorInfo & { return M.getInputTensorInfo(I); }, Inputs);
}

/// request.infer() (Run false: queued on the pool) and request.run() (Run true: infer() + wait() in
/// one call on the calling thread, InferRequest::run: no pool task, no worker wake-up); the GIL is
/// released while they start or run.
template <bool Run> void requestInferOrRun(PyRequest &Q, nb::handle Inputs) {
  ConvertedInputs C = requestInputs(Run ? "run" : "infer", Q, Inputs);
  Q.Keep = nb::cast(C.Keep);
  nb::gil_scoped_release G;
  if (C.ByName)
    Run ? Q.R.run(C.Map) : Q.R.infer(C.Map);
  else
    Run ? Q.R.run(rt::ArrayRef<rt::Tensor>(C.List)) : Q.R.infer(rt::ArrayRef<rt::Tensor>(C.List));
}

/// request.profile(): inputs as for infer() (list or dict), times in integer microseconds,
/// event_buffer_size 0 = the default. Blocking; the GIL is released while it runs.
void requestProfile(PyRequest &Q, nb::handle Inputs, int Repeat, int WarmUp, long long WarmUpTime,
                    long long StopThreshold, int CheckPeriod, long long EventBufferSize) {
  const rt::ProfileOptions O =
      profileOptions(Repeat, WarmUp, WarmUpTime, StopThreshold, CheckPeriod, EventBufferSize);
  ConvertedInputs C = requestInputs("profile", Q, Inputs);
  Q.Keep = nb::cast(C.Keep);
  nb::gil_scoped_release G;
  if (C.ByName)
    Q.R.profile(C.Map, O);
  else
    Q.R.profile(rt::ArrayRef<rt::Tensor>(C.List), O);
}

void requestSetCallback(PyRequest &Q, nb::object Fn) {
  if (!Fn.is_none() && !PyCallable_Check(Fn.ptr()))
    throw nb::type_error("set_callback: expected a callable fn(status, error) or None");
  PyObject *Old = Q.Slot->Fn;
  Q.Slot->Fn = Fn.is_none() ? nullptr : Fn.inc_ref().ptr();
  Py_XDECREF(Old);
  if (Q.CallbackRegistered || !Q.Slot->Fn)
    return;
  std::weak_ptr<CallbackSlot> Weak = Q.Slot;
  Q.R.addCallback([Weak](rt::InferStatus S, std::exception_ptr E) {
    if (Finalizing.load() || !Py_IsInitialized())
      return;
    std::shared_ptr<CallbackSlot> Slot = Weak.lock();
    if (!Slot)
      return;
    nb::gil_scoped_acquire G;
    if (!Slot->Fn)
      return;
    nb::object Fn = nb::borrow(Slot->Fn);
    try {
      Fn(S, exceptionObject(E));
    } catch (nb::python_error &Err) {
      Err.discard_as_unraisable("optimium.runtime InferRequest callback");
    } catch (...) {
    }
  });
  Q.CallbackRegistered = true;
}

PyTensor outputTensor(PyRequest &Q, rt::Tensor T) { return PyTensor{std::move(T), Q.Keep}; }

/// set_resize_migration: fn(old, new) gets rt.Tensor objects; new.to_numpy() is a writable view.
/// The runtime calls it on the thread applying the resize (infer() releases the GIL: take it).
void requestSetResizeMigration(PyRequest &Q, const std::string &Name, nb::object Fn) {
  if (Fn.is_none()) {
    Q.R.setResizeMigration(rt::StringRef(Name), nullptr);
    return;
  }
  if (!PyCallable_Check(Fn.ptr()))
    throw nb::type_error("set_resize_migration: expected a callable fn(old, new) or None");
  std::shared_ptr<PyObject> Held(Fn.inc_ref().ptr(), [](PyObject *O) {
    if (Finalizing.load() || !Py_IsInitialized())
      return;
    nb::gil_scoped_acquire G;
    Py_DECREF(O);
  });
  Q.R.setResizeMigration(rt::StringRef(Name), [Held](const rt::Tensor &Old, rt::Tensor &New) {
    nb::gil_scoped_acquire G;
    nb::object F = nb::borrow(Held.get());
    PyTensor OldT{Old, nb::none()};
    PyTensor NewT{New, nb::none(), /*NumpyView=*/true};
    F(nb::cast(OldT), nb::cast(NewT));
  });
}

} // namespace

rt::ModelLoadOptions loadOptions(nb::object Devices, bool Strict, bool MemOpt, bool Denormals,
                                 std::optional<std::string> SavePath, std::optional<std::string> Passphrase,
                                 int Threads, nb::object Cores, rt::SchedulerType Sched, int Spin, int SpinYield,
                                 bool Stealing, nb::object Capacities) {
  rt::ModelLoadOptions O;
  setPerModelOptions(O, "load_model", Devices, Strict, MemOpt, SavePath, Passphrase, Threads, Capacities);
  setPoolTuning(O, Cores, Spin, SpinYield, Denormals, Stealing);
  O.Scheduler = Sched;
  return O;
}


/// compute_precision: "float32" (also "fp32", "f32") or "bfloat16" (also "bf16").
rt::ComputePrecision computePrecision(const std::string &Name) {
  if (Name == "float32" || Name == "fp32" || Name == "f32")
    return rt::ComputePrecision::Float32;
  if (Name == "bfloat16" || Name == "bf16")
    return rt::ComputePrecision::BFloat16;
  throw nb::value_error(("load_model: compute_precision must be 'float32' or 'bf16', got '" + Name + "'").c_str());
}

rt::ProfileOptions profileOptions(int Repeat, int WarmUp, long long WarmUpTime, long long StopThreshold,
                                  int CheckPeriod, long long EventBufferSize) {
  if (EventBufferSize < 0)
    throw nb::value_error("profile: event_buffer_size must be >= 0 (0 = the default)");
  rt::ProfileOptions O;
  O.Repeat = Repeat;
  O.WarmUp = WarmUp;
  O.WarmUpTime = std::chrono::microseconds(WarmUpTime);
  O.StopThreshold = std::chrono::microseconds(StopThreshold);
  O.CheckPeriod = CheckPeriod;
  O.EventBufferSize = static_cast<size_t>(EventBufferSize);
  return O;
}

std::vector<std::string> names(rt::ArrayRef<rt::StringRef> R) {
  std::vector<std::string> V;
  for (auto S : R)
    V.push_back(S.str());
  return V;
}

void bind_model(nb::module_ &m) {
  nb::enum_<rt::SchedulerType>(m, "SchedulerType")
      .value("AUTO", rt::SchedulerType::Auto)
      .value("EXCLUSIVE", rt::SchedulerType::Exclusive)
      .value("SEQUENTIAL", rt::SchedulerType::Sequential)
      .value("PIPELINE", rt::SchedulerType::Pipeline);
  nb::enum_<rt::InferStatus>(m, "InferStatus")
      .value("READY", rt::InferStatus::Ready)
      .value("RUNNING", rt::InferStatus::Running)
      .value("FAULT", rt::InferStatus::Fault);

  // InferRequest.
  nb::class_<PyRequest>(m, "InferRequest")
      .def("infer", &requestInferOrRun<false>, "inputs"_a)
      .def("run", &requestInferOrRun<true>, "inputs"_a,
           "infer(inputs) then wait(), run on the calling thread: the synchronous call (like ONNX Runtime's "
           "InferenceSession.run), without the hand-off infer() makes for an asynchronous caller.")
      .def(
          "wait",
          [](PyRequest &Q, long long Timeout) {
            if (Timeout < 0)
              throw nb::value_error("wait: timeout_us must be >= 0 (0 waits indefinitely)");
            nb::gil_scoped_release G;
            return Q.R.wait(std::chrono::microseconds(Timeout));
          },
          "timeout_us"_a = 0)
      .def_prop_ro("status", [](const PyRequest &Q) { return Q.R.getStatus(); })
      .def_prop_rw(
          "device_outputs", [](const PyRequest &Q) { return Q.R.getDeviceOutputs(); },
          [](PyRequest &Q, bool Enable) { Q.R.setDeviceOutputs(Enable); },
          "Outputs computed on a device with its own memory stay there as device tensors (docs/devices.md).")
      .def("set_callback", &requestSetCallback, "callback"_a.none())
      .def("cancel", [](PyRequest &Q) { Q.R.cancel(); })
      .def("get_output",
           [](PyRequest &Q, nb::handle Key) {
             if (nb::isinstance<nb::str>(Key))
               return outputTensor(Q, Q.R.getOutput(rt::StringRef(nb::cast<std::string>(Key))));
             if (!PyIndex_Check(Key.ptr()))
               throw nb::type_error("get_output: expected an output index (int) or name (str)");
             const int64_t I = nb::cast<int64_t>(Key);
             if (I < 0)
               throw nb::value_error("get_output: the index must be >= 0");
             return outputTensor(Q, Q.R.getOutput((size_t)I));
           },
           "index_or_name"_a)
      .def("get_tensor",
           [](PyRequest &Q, const std::string &Name) { return outputTensor(Q, Q.R.getTensor(rt::StringRef(Name))); },
           "name"_a)
      .def("set_tensor_shape",
           [](PyRequest &Q, const std::string &Name, nb::handle Shape) {
             Q.R.setTensorShape(rt::StringRef(Name), toShape(Shape));
           },
           "name"_a, "shape"_a)
      .def("apply_shape_changes", [](PyRequest &Q, bool Shrink) { Q.R.applyShapeChanges(Shrink); },
           "shrink_to_fit"_a = false)
      .def("set_resize_migration", &requestSetResizeMigration, "name"_a, "callback"_a.none())
      .def_prop_ro("model_name", [](const PyRequest &Q) { return Q.R.getModelName(); })
      .def("profile", &requestProfile, "inputs"_a, "repeat"_a = 100, "warmup"_a = 10, "warmup_time"_a = 1000000,
           "stop_threshold"_a = 0, "check_period"_a = 0, "event_buffer_size"_a = 0,
           "Blocking: warm-up runs, then up to `repeat` recorded runs (times in microseconds).")
      .def("get_profile_events",
           [](const PyRequest &Q) {
             rt::ArrayRef<rt::ProfileEvent> E = Q.R.getProfileEvents();
             return std::vector<rt::ProfileEvent>(E.begin(), E.end());
           })
      .def("get_profile_durations", [](const PyRequest &Q) { return Q.R.getProfileDurations(); })
      .def("get_layer_durations", [](const PyRequest &Q) { return Q.R.getLayerDurations(); })
      .def_prop_ro("dropped_profile_events", [](const PyRequest &Q) { return Q.R.getDroppedProfileEvents(); })
      .def("__repr__", [](const PyRequest &Q) {
        return "<optimium.runtime.InferRequest of '" + Q.R.getModelName() + "' " +
               rt::toString(Q.R.getStatus()) + ">";
      });

  // Model.
  nb::class_<rt::Model>(m, "Model")
      .def_prop_ro("name", &rt::Model::getName)
      .def_prop_ro("input_names", [](const rt::Model &M) { return names(M.getInputNames()); })
      .def_prop_ro("output_names", [](const rt::Model &M) { return names(M.getOutputNames()); })
      .def("get_tensor", [](const rt::Model &M, const std::string &N) { return rt::TensorInfo(M.getTensorInfo(N)); },
           "name"_a)
      .def("get_input_tensor", [](const rt::Model &M, size_t I) { return rt::TensorInfo(M.getInputTensorInfo(I)); },
           "index"_a)
      .def("get_output_tensor", [](const rt::Model &M, size_t I) { return rt::TensorInfo(M.getOutputTensorInfo(I)); },
           "index"_a)
      .def_prop_ro("tensors", [](const rt::Model &M) { return M.getTensors().vec(); })
      .def_prop_ro("operations", [](const rt::Model &M) { return M.getOperations().vec(); })
      .def_prop_ro("is_dynamic", &rt::Model::isDynamic)
      .def("has_attribute", [](const rt::Model &M, const std::string &K) { return M.hasAttribute(K); }, "key"_a)
      .def("get_attribute", [](const rt::Model &M, const std::string &K) { return attributeToPython(M.getAttribute(K)); },
           "key"_a)
      .def_prop_ro("attribute_keys", [](const rt::Model &M) { return names(M.getAttributeKeys()); })
      .def(
          "infer_shape",
          [](const rt::Model &M, const std::string &Name, nb::handle Shapes) {
            if (nb::isinstance<nb::dict>(Shapes)) {
              std::map<std::string, rt::TensorShape> Map;
              for (auto KV : nb::borrow<nb::dict>(Shapes))
                Map[nb::cast<std::string>(KV.first)] = toShape(KV.second);
              return M.inferShape(Name, Map);
            }
            std::vector<rt::TensorShape> List;
            for (nb::handle H : nb::iter(Shapes))
              List.push_back(toShape(H));
            return M.inferShape(Name, rt::ArrayRef<rt::TensorShape>(List));
          },
          "name"_a, "input_shapes"_a)
      .def("create_request", [](const rt::Model &M) { return new PyRequest(M.createRequest(), M); })
      .def("__repr__", [](const rt::Model &M) { return "<optimium.runtime.Model '" + M.getName() + "'>"; });

  m.def(
      "load_model",
      [](nb::handle Path, nb::object Devices, bool Strict, bool MemOpt, bool Denormals,
         std::optional<std::string> SavePath, std::optional<std::string> Passphrase, int Threads, nb::object Cores,
         rt::SchedulerType Sched, int Spin, int SpinYield, bool Stealing, nb::object Capacities, bool IndexedSave,
         const std::string &Precision) {
        rt::ModelLoadOptions O = loadOptions(Devices, Strict, MemOpt, Denormals, SavePath, Passphrase, Threads, Cores,
                                             Sched, Spin, SpinYield, Stealing, Capacities);
        O.IndexedIntermediateSave = IndexedSave;
        O.Precision = computePrecision(Precision);
        if (nb::isinstance<nb::bytes>(Path) || nb::isinstance<nb::bytearray>(Path) ||
            PyMemoryView_Check(Path.ptr())) {
          Py_buffer View;
          if (PyObject_GetBuffer(Path.ptr(), &View, PyBUF_SIMPLE) != 0)
            throw nb::python_error();
          // The model keeps its own copy: constants point into it, and the Python object may be
          // freed or (bytearray) changed as soon as this call returns.
          auto Data = std::make_shared<std::vector<uint8_t>>(static_cast<const uint8_t *>(View.buf),
                                                             static_cast<const uint8_t *>(View.buf) + View.len);
          PyBuffer_Release(&View);
          nb::gil_scoped_release G;
          return rt::detail::loadModelOwningBytes(std::move(Data), O);
        }
        std::string P = nb::cast<std::string>(nb::str(nb::module_::import_("os").attr("fspath")(Path)));
        nb::gil_scoped_release G;
        return rt::loadModel(P, O);
      },
      "path"_a, "devices"_a = nb::none(), "strict"_a = false, "memory_optimization"_a = true,
      "disable_denormals"_a = true, "intermediate_save_path"_a = nb::none(), "passphrase"_a = nb::none(),
      "threads"_a = 0, "cores"_a = nb::none(), "scheduler_type"_a = rt::SchedulerType::Auto,
      "spin_iterations"_a = rt::kDefaultSpinIterations, "spin_yield_iterations"_a = rt::kDefaultSpinYieldIterations,
      "enable_work_stealing"_a = true, "resizable_capacities"_a = nb::none(),
      "indexed_intermediate_save"_a = false, "compute_precision"_a = "float32");

  m.def(
      "encrypt_model",
      [](nb::handle Path, nb::handle OutFolder, const std::string &Passphrase, int ScryptLog2N) {
        if (ScryptLog2N < 10 || ScryptLog2N > 22)
          throw rt::InvalidArgumentError("scrypt_log2n must be in [10, 22], got " + std::to_string(ScryptLog2N));
        nb::object FsPath = nb::module_::import_("os").attr("fspath");
        const std::string In = nb::cast<std::string>(nb::str(FsPath(Path)));
        const std::string Out = nb::cast<std::string>(nb::str(FsPath(OutFolder)));
        rt::detail::ScryptParams Kdf;
        Kdf.N = uint64_t{1} << ScryptLog2N;
        nb::gil_scoped_release G;
        return rt::detail::valueOrThrow(rt::detail::encryptModelFolder(In, Out, Passphrase, Kdf));
      },
      "path"_a, "out_folder"_a, "passphrase"_a, "scrypt_log2n"_a = 14,
      "Writes an encrypted copy of a model (an .onnx file or a model folder, with its external data\n"
      "files and optimium.json) into out_folder (missing or empty): AES-256-GCM per file, the key from\n"
      "the passphrase through scrypt (N = 2**scrypt_log2n, r = 8, p = 1). Load it with\n"
      "load_model(out_folder, passphrase=...). Returns the names of the files encrypted.");
}

} // namespace python
} // namespace optimium
