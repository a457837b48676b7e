// Remote inference (spec Python section 11): connect() -> RemoteSession (host_info, load_model,
// create_model_group, close) -> RemoteModel (asynchronous infer/profile + wait, cancel, tensors,
// metadata) and RemoteModelGroup / RemoteGroupMember (a blocking run() round trip). Thin over
// Optimium/Remote.h; every call that talks to the server releases the GIL.
#include "Bindings.h"

#include <memory>
#include <optional>
#include <vector>

#include "Optimium/Remote.h"

namespace optimium {
namespace python {

using namespace nb::literals;

namespace {

/// The input metadata a remote model or member was created with, cached on the client: the input
/// conversion checks names and dtypes without a round trip.
struct InputCache {
  std::vector<rt::TensorInfo> Inputs;
  std::vector<std::string> NameStore;
  std::vector<rt::StringRef> Names;

  void set(std::vector<rt::TensorInfo> Infos) {
    Inputs = std::move(Infos);
    NameStore.clear();
    Names.clear();
    for (const rt::TensorInfo &I : Inputs)
      NameStore.push_back(I.Name);
    for (const std::string &N : NameStore)
      Names.emplace_back(N);
  }
  ConvertedInputs convert(const char *What, const std::string &ModelName, nb::handle Inputs_) const {
    return convertInputs(What, ModelName, rt::ArrayRef<rt::StringRef>(Names),
                         [this](size_t I) -> const rt::TensorInfo & { return Inputs.at(I); }, Inputs_);
  }
};

struct PyRemoteModel {
  rt::RemoteModel M;
  std::string Name;
  InputCache In;
  std::vector<rt::TensorInfo> All; ///< every tensor's info (set_tensor checks dtypes against it)
};

struct PyRemoteMember {
  rt::RemoteGroupMember M;
  std::string Name;
  InputCache In;
};

PyRemoteModel *wrapModel(rt::RemoteModel M) {
  auto *P = new PyRemoteModel{std::move(M), {}, {}, {}};
  P->Name = P->M.getModelName();
  P->In.set(P->M.getInputTensorInfos());
  P->All = P->M.getTensorInfos();
  return P;
}

PyRemoteMember *wrapMember(rt::RemoteGroupMember M) {
  auto *P = new PyRemoteMember{std::move(M), {}, {}};
  P->Name = P->M.getName();
  P->In.set(P->M.getInputTensorInfos());
  return P;
}

PyTensor owned(rt::Tensor T) { return PyTensor{std::move(T), nb::none()}; }

void remoteInfer(PyRemoteModel &P, nb::handle Inputs) {
  ConvertedInputs C = P.In.convert("infer", P.Name, Inputs);
  nb::gil_scoped_release G; // the inputs are sent before infer() returns
  if (C.ByName)
    P.M.infer(C.Map);
  else
    P.M.infer(rt::ArrayRef<rt::Tensor>(C.List));
}

void remoteProfile(PyRemoteModel &P, nb::handle Inputs, int Repeat, int WarmUp, long long WarmUpTime,
                   long long StopThreshold, int CheckPeriod, long long EventBufferSize) {
  const rt::ProfileOptions O =
      profileOptions(Repeat, WarmUp, WarmUpTime, StopThreshold, CheckPeriod, EventBufferSize);
  if (Repeat < 1)
    throw nb::value_error("profile: repeat must be >= 1");
  if (WarmUp < 0 || WarmUpTime < 0 || StopThreshold < 0 || CheckPeriod < 0)
    throw nb::value_error("profile: warmup, warmup_time, stop_threshold and check_period must be >= 0");
  ConvertedInputs C = P.In.convert("profile", P.Name, Inputs);
  nb::gil_scoped_release G;
  if (C.ByName)
    P.M.profile(C.Map, O);
  else
    P.M.profile(rt::ArrayRef<rt::Tensor>(C.List), O);
}

void remoteSetTensor(PyRemoteModel &P, const std::string &Name, nb::handle Value) {
  rt::Tensor T;
  std::vector<nb::object> Keep;
  const rt::TensorInfo *Info = nullptr;
  for (const rt::TensorInfo &I : P.All)
    if (I.Name == Name)
      Info = &I;
  if (Info) {
    T = convertInput(*Info, 0, Value, Keep);
  } else if (nb::isinstance<PyTensor>(Value)) {
    T = nb::cast<PyTensor &>(Value).T; // the server names the unknown tensor
  } else {
    throw nb::value_error(("set_tensor: model '" + P.Name + "' has no tensor named '" + Name + "'").c_str());
  }
  nb::gil_scoped_release G;
  P.M.setTensor(rt::StringRef(Name), T);
}

nb::list memberRun(PyRemoteMember &P, nb::handle Inputs) {
  ConvertedInputs C = P.In.convert("run", P.Name, Inputs);
  std::vector<rt::Tensor> Out;
  {
    nb::gil_scoped_release G;
    Out = C.ByName ? P.M.run(C.Map) : P.M.run(rt::ArrayRef<rt::Tensor>(C.List));
  }
  nb::list L;
  for (rt::Tensor &T : Out)
    L.append(nb::cast(owned(std::move(T))));
  return L;
}

rt::TensorShape remoteInferShape(const PyRemoteModel &P, const std::string &Name, nb::handle Shapes) {
  if (nb::isinstance<nb::dict>(Shapes)) {
    std::map<std::string, rt::TensorShape> Map;
    for (auto KV : nb::borrow<nb::dict>(Shapes))
      Map[nb::cast<std::string>(KV.first)] = toShape(KV.second);
    nb::gil_scoped_release G;
    return P.M.inferShape(rt::StringRef(Name), Map);
  }
  std::vector<rt::TensorShape> List;
  for (nb::handle H : nb::iter(Shapes))
    List.push_back(toShape(H));
  nb::gil_scoped_release G;
  return P.M.inferShape(rt::StringRef(Name), rt::ArrayRef<rt::TensorShape>(List));
}

std::vector<std::string> infoNames(const std::vector<rt::TensorInfo> &Infos) {
  std::vector<std::string> N;
  for (const rt::TensorInfo &I : Infos)
    N.push_back(I.Name);
  return N;
}

} // namespace

void bind_remote(nb::module_ &m) {
  nb::class_<PyRemoteModel>(m, "RemoteModel",
                            "A model loaded on an optimium-remote-server. The server reuses one request for every "
                            "infer(), so preserved (KV-cache) tensors keep their state between calls.")
      .def_prop_ro("name", [](const PyRemoteModel &P) { return P.Name; })
      .def_prop_ro("input_names", [](const PyRemoteModel &P) { return infoNames(P.In.Inputs); })
      .def_prop_ro("output_names",
                   [](const PyRemoteModel &P) {
                     nb::gil_scoped_release G;
                     return infoNames(P.M.getOutputTensorInfos());
                   })
      .def_prop_ro("input_tensor_infos", [](const PyRemoteModel &P) { return P.In.Inputs; })
      .def_prop_ro("output_tensor_infos",
                   [](const PyRemoteModel &P) {
                     nb::gil_scoped_release G;
                     return P.M.getOutputTensorInfos();
                   })
      .def_prop_ro("tensor_infos", [](const PyRemoteModel &P) { return P.All; })
      .def_prop_ro("operations",
                   [](const PyRemoteModel &P) {
                     nb::gil_scoped_release G;
                     return P.M.getOperationList();
                   })
      .def_prop_ro("is_dynamic",
                   [](const PyRemoteModel &P) {
                     nb::gil_scoped_release G;
                     return P.M.isDynamic();
                   })
      .def("get_tensor_info",
           [](const PyRemoteModel &P, const std::string &Name) {
             for (const rt::TensorInfo &I : P.All)
               if (I.Name == Name)
                 return I;
             throw nb::value_error(("get_tensor_info: model '" + P.Name + "' has no tensor named '" + Name + "'")
                                       .c_str());
           },
           "name"_a)
      .def("infer", &remoteInfer, "inputs"_a,
           "Starts one run on the server (asynchronous: call wait()). Inputs: a list in input order or a dict "
           "by name, of numpy arrays or rt.Tensor.")
      .def("profile", &remoteProfile, "inputs"_a, "repeat"_a = 1, "warmup"_a = 0, "warmup_time"_a = 0,
           "stop_threshold"_a = 0, "check_period"_a = 0, "event_buffer_size"_a = 0,
           "Starts profiling on the server (asynchronous: call wait()); times in microseconds.")
      .def(
          "wait",
          [](PyRemoteModel &P, long long Timeout) {
            if (Timeout < 0)
              throw nb::value_error("wait: timeout must be >= 0 microseconds (0 waits indefinitely)");
            nb::gil_scoped_release G;
            return P.M.wait(std::chrono::microseconds(Timeout));
          },
          "timeout"_a = 0,
          "Waits for the run in progress (integer microseconds, 0 = indefinitely); False on timeout. Raises the "
          "run's error.")
      .def("cancel",
           [](PyRemoteModel &P) {
             nb::gil_scoped_release G;
             P.M.cancel();
           })
      .def(
          "get_output",
          [](PyRemoteModel &P, int64_t Index) {
            if (Index < 0)
              throw nb::value_error("get_output: the index must be >= 0");
            nb::gil_scoped_release G;
            return owned(P.M.getOutput(static_cast<size_t>(Index)));
          },
          "index"_a, "A copy of an output of the last run, fetched from the server.")
      .def(
          "get_tensor",
          [](PyRemoteModel &P, const std::string &Name) {
            nb::gil_scoped_release G;
            return owned(P.M.getTensor(rt::StringRef(Name)));
          },
          "name"_a, "A copy of any tensor of the last run by name, fetched from the server.")
      .def("set_tensor", &remoteSetTensor, "name"_a, "value"_a,
           "Writes a tensor of the server's request by name: an input, or a preserved/intermediate tensor (seeds "
           "or updates a KV cache between runs).")
      .def("get_profile_events",
           [](const PyRemoteModel &P) {
             nb::gil_scoped_release G;
             return P.M.getProfileEvents();
           })
      .def("get_profile_durations",
           [](const PyRemoteModel &P) {
             nb::gil_scoped_release G;
             return P.M.getProfileDurations();
           })
      .def(
          "is_saved_tensor",
          [](const PyRemoteModel &P, const std::string &Name) {
            nb::gil_scoped_release G;
            return P.M.isSavedTensor(rt::StringRef(Name));
          },
          "tensor_name"_a)
      .def("infer_shape", &remoteInferShape, "output_name"_a, "input_shapes"_a)
      .def(
          "get_attribute",
          [](const PyRemoteModel &P, const std::string &K) {
            rt::Attribute A;
            {
              nb::gil_scoped_release G;
              A = P.M.getAttribute(rt::StringRef(K));
            }
            return attributeToPython(A);
          },
          "key"_a)
      .def(
          "has_attribute",
          [](const PyRemoteModel &P, const std::string &K) {
            nb::gil_scoped_release G;
            return P.M.hasAttribute(rt::StringRef(K));
          },
          "key"_a)
      .def_prop_ro("attribute_keys",
                   [](const PyRemoteModel &P) {
                     nb::gil_scoped_release G;
                     return P.M.getAttributeKeys();
                   })
      .def("__repr__", [](const PyRemoteModel &P) { return "<optimium.runtime.RemoteModel '" + P.Name + "'>"; });

  nb::class_<PyRemoteMember>(m, "RemoteGroupMember",
                             "A member of a model group on the server: run() is a blocking round trip.")
      .def("run", &memberRun, "inputs"_a,
           "Runs the member on the server (blocking) and returns its outputs (rt.Tensor copies) in output order.")
      .def_prop_ro("name", [](const PyRemoteMember &P) { return P.Name; })
      .def_prop_ro("input_names", [](const PyRemoteMember &P) { return infoNames(P.In.Inputs); })
      .def_prop_ro("input_tensor_infos", [](const PyRemoteMember &P) { return P.In.Inputs; })
      .def_prop_ro("output_tensor_infos",
                   [](const PyRemoteMember &P) {
                     nb::gil_scoped_release G;
                     return P.M.getOutputTensorInfos();
                   })
      .def("__repr__",
           [](const PyRemoteMember &P) { return "<optimium.runtime.RemoteGroupMember '" + P.Name + "'>"; });

  nb::class_<rt::RemoteModelGroup>(m, "RemoteModelGroup",
                                   "A model group owned by the server: its members share one server-side pool.")
      .def(
          "add",
          [](rt::RemoteModelGroup &G, nb::handle Path, nb::object Devices, bool Strict, bool MemOpt,
             std::optional<std::string> SavePath, std::optional<std::string> Passphrase, int Threads,
             nb::object Capacities, const std::string &Precision) {
            rt::GroupMemberOptions O;
            setPerModelOptions(O, "add", Devices, Strict, MemOpt, SavePath, Passphrase, Threads, Capacities);
            O.Precision = computePrecision(Precision);
            std::string P = nb::cast<std::string>(nb::str(nb::module_::import_("os").attr("fspath")(Path)));
            rt::RemoteGroupMember M;
            {
              nb::gil_scoped_release Gil;
              M = G.add(O, P);
            }
            return wrapMember(std::move(M));
          },
          "path"_a, "devices"_a = nb::none(), "strict"_a = false, "memory_optimization"_a = true,
          "intermediate_save_path"_a = nb::none(), "passphrase"_a = nb::none(), "threads"_a = 0,
          "resizable_capacities"_a = nb::none(), "compute_precision"_a = "float32",
          "Uploads the LOCAL model at path (an .onnx file or a model folder) and adds it to the group.")
      .def_prop_ro("size", &rt::RemoteModelGroup::size)
      .def("__len__", &rt::RemoteModelGroup::size)
      .def("__repr__", [](const rt::RemoteModelGroup &G) {
        return "<optimium.runtime.RemoteModelGroup " + std::to_string(G.size()) + " member(s)>";
      });

  nb::class_<rt::RemoteSession>(m, "RemoteSession", "One connection to an optimium-remote-server.")
      .def_prop_ro("host_info",
                   [](const rt::RemoteSession &S) {
                     nb::gil_scoped_release G;
                     return hostInfo(S.getHostInfo());
                   })
      .def(
          "load_model",
          [](rt::RemoteSession &S, nb::handle Path, nb::object Devices, bool Strict, bool MemOpt, bool Denormals,
             std::optional<std::string> SavePath, std::optional<std::string> Passphrase, int Threads,
             nb::object Cores, rt::SchedulerType Sched, int Spin, int SpinYield, bool Stealing,
             nb::object Capacities, const std::string &Precision) {
            rt::ModelLoadOptions O = loadOptions(Devices, Strict, MemOpt, Denormals, SavePath, Passphrase, Threads,
                                                 Cores, Sched, Spin, SpinYield, Stealing, Capacities);
            O.Precision = computePrecision(Precision);
            std::string P = nb::cast<std::string>(nb::str(nb::module_::import_("os").attr("fspath")(Path)));
            rt::RemoteModel M;
            {
              nb::gil_scoped_release G;
              M = S.loadModel(O, P);
            }
            return wrapModel(std::move(M));
          },
          "path"_a, "devices"_a = nb::none(), "strict"_a = false, "memory_optimization"_a = true,
          "disable_denormals"_a = true, "intermediate_save_path"_a = nb::none(), "passphrase"_a = nb::none(),
          "threads"_a = 0, "cores"_a = nb::none(), "scheduler_type"_a = rt::SchedulerType::Auto,
          "spin_iterations"_a = rt::kDefaultSpinIterations,
          "spin_yield_iterations"_a = rt::kDefaultSpinYieldIterations, "enable_work_stealing"_a = true,
          "resizable_capacities"_a = nb::none(), "compute_precision"_a = "float32",
          "Loads the model at path ON THE SERVER (resolved inside the server's workspace folder).")
      .def(
          "create_model_group",
          [](rt::RemoteSession &S, nb::object Cores, int Spin, int SpinYield, bool Denormals, bool Stealing) {
            rt::ModelGroupOptions O;
            setPoolTuning(O, Cores, Spin, SpinYield, Denormals, Stealing);
            nb::gil_scoped_release G;
            return S.createModelGroup(O);
          },
          "cores"_a = nb::none(), "spin_iterations"_a = rt::kDefaultSpinIterations,
          "spin_yield_iterations"_a = rt::kDefaultSpinYieldIterations, "disable_denormals"_a = true,
          "enable_work_stealing"_a = true)
      .def("close",
           [](rt::RemoteSession &S) {
             nb::gil_scoped_release G;
             S.close();
           })
      .def("__enter__", [](nb::object Self) { return Self; })
      .def("__exit__",
           [](rt::RemoteSession &S, nb::handle, nb::handle, nb::handle) {
             nb::gil_scoped_release G;
             S.close();
           })
      .def("__repr__", [](const rt::RemoteSession &) { return std::string("<optimium.runtime.RemoteSession>"); });

  m.def(
      "connect",
      [](const std::string &Host, int Port, bool Secure, bool Compression, std::optional<std::string> CAFile,
         std::optional<std::string> ServerName, std::optional<std::string> Token, long long TimeoutMs) {
        if (Port <= 0 || Port > 65535)
          throw nb::value_error(("connect: port must be in 1..65535, got " + std::to_string(Port)).c_str());
        if (TimeoutMs < 0)
          throw nb::value_error("connect: connect_timeout_ms must be >= 0");
        rt::ConnectOptions O;
        O.EnableSecureConnection = Secure;
        O.EnableCompression = Compression;
        O.CAFile = CAFile.value_or("");
        O.ServerName = ServerName.value_or("");
        O.AccessToken = Token.value_or("");
        O.ConnectTimeout = std::chrono::milliseconds(TimeoutMs);
        nb::gil_scoped_release G;
        return rt::connect(Host, static_cast<uint16_t>(Port), O);
      },
      "host"_a, "port"_a = rt::kDefaultRemotePort, "enable_secure_connection"_a = false,
      "enable_compression"_a = false, "ca_file"_a = nb::none(), "server_name"_a = nb::none(),
      "access_token"_a = nb::none(), "connect_timeout_ms"_a = 10000,
      "Connects to optimium-remote-server. NetworkError when it cannot connect (or TLS fails), RemoteError "
      "when the server refuses the session (access token, protocol version).");
}

} // namespace python
} // namespace optimium
