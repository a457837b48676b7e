// Registry of backends and the loader of extension libraries (dlopen + one C entry symbol).
#include "backends/BackendRegistry.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstring>
#include <mutex>

#include "backends/NodeHandle.h"
#include "core/DeviceRegistry.h"
#include "core/Log.h"

namespace optimium {
namespace runtime {
namespace detail {

void writeAbiError(const std::string &Message, char *Buffer, size_t Size) {
  if (!Buffer || Size == 0)
    return;
  const size_t N = std::min(Message.size(), Size - 1);
  std::memcpy(Buffer, Message.data(), N);
  Buffer[N] = '\0';
}

namespace {

const AttrValue *findAttr(const void *HostNode, const char *Name) {
  const auto *H = static_cast<const NodeHandle *>(HostNode);
  if (!H || !H->N || !Name)
    return nullptr;
  auto It = H->N->Attrs.find(Name);
  return It == H->N->Attrs.end() ? nullptr : &It->second;
}

int32_t getAttrInt(const void *Node, const char *Name, int64_t *Out) {
  const AttrValue *A = findAttr(Node, Name);
  if (!A || A->K != AttrValue::Kind::Int)
    return 1;
  *Out = A->I;
  return 0;
}
int32_t getAttrFloat(const void *Node, const char *Name, float *Out) {
  const AttrValue *A = findAttr(Node, Name);
  if (!A || A->K != AttrValue::Kind::Float)
    return 1;
  *Out = A->F;
  return 0;
}
int32_t getAttrString(const void *Node, const char *Name, const char **Out, size_t *Len) {
  const AttrValue *A = findAttr(Node, Name);
  if (!A || A->K != AttrValue::Kind::String)
    return 1;
  *Out = A->S.data();
  *Len = A->S.size();
  return 0;
}
int32_t getAttrInts(const void *Node, const char *Name, const int64_t **Out, size_t *Count) {
  const AttrValue *A = findAttr(Node, Name);
  if (!A || A->K != AttrValue::Kind::Ints)
    return 1;
  *Out = A->Ints.data();
  *Count = A->Ints.size();
  return 0;
}
int32_t getAttrFloats(const void *Node, const char *Name, const float **Out, size_t *Count) {
  const AttrValue *A = findAttr(Node, Name);
  if (!A || A->K != AttrValue::Kind::Floats)
    return 1;
  *Out = A->Floats.data();
  *Count = A->Floats.size();
  return 0;
}
void hostLog(int32_t Level, const char *Message) {
  const LogLevel L = static_cast<LogLevel>(std::max(0, std::min(4, static_cast<int>(Level))));
  if (isLogEnabled(L))
    logMessage(L, Message ? Message : "");
}

std::mutex &registryMutex() {
  static std::mutex M;
  return M;
}
std::vector<std::shared_ptr<RegisteredBackend>> &registry() {
  static std::vector<std::shared_ptr<RegisteredBackend>> R;
  return R;
}

} // namespace

const OptRtHostApi *hostApi() {
  static const OptRtHostApi Api = {sizeof(OptRtHostApi), OPTIMIUM_RT_BACKEND_API_VERSION,
                                   &getAttrInt,         &getAttrFloat,
                                   &getAttrString,      &getAttrInts,
                                   &getAttrFloats,      &hostLog};
  return &Api;
}

void registerNativeBackend() {
  std::lock_guard<std::mutex> Lock(registryMutex());
  for (const auto &B : registry())
    if (B->Library.empty())
      return;
  auto B = std::make_shared<RegisteredBackend>();
  makeNativeBackend(B->Backend);
  B->Device = DeviceID::from(PlatformKind::Native, static_cast<DeviceKind>(B->Backend.device_kind), 0, 0);
  registry().insert(registry().begin(), B);
}

Status loadExtensionLibrary(const std::string &Path) {
  struct stat St;
  if (::stat(Path.c_str(), &St) != 0 || !S_ISREG(St.st_mode))
    return makeError(ErrorCode::InvalidArgument, "extension path '", Path, "' is not a file");
  void *Handle = ::dlopen(Path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!Handle)
    return makeError(ErrorCode::Extension, "cannot load extension '", Path, "': ", ::dlerror());
  auto Init = reinterpret_cast<OptRtBackendInitFn>(::dlsym(Handle, OPTIMIUM_RT_BACKEND_INIT_SYMBOL));
  if (!Init) {
    ::dlclose(Handle);
    return makeError(ErrorCode::Extension, "extension '", Path, "' does not export ", OPTIMIUM_RT_BACKEND_INIT_SYMBOL);
  }
  auto B = std::make_shared<RegisteredBackend>();
  B->Library = Path;
  B->Handle = Handle;
  const int32_t RC = Init(hostApi(), &B->Backend);
  if (RC != OPT_RT_OK || B->Backend.struct_size < sizeof(OptRtBackend) ||
      B->Backend.api_version != OPTIMIUM_RT_BACKEND_API_VERSION || !B->Backend.create_kernel ||
      !B->Backend.run_kernel || !B->Backend.supports_node) {
    ::dlclose(Handle);
    return makeError(ErrorCode::Extension, "extension '", Path, "' failed to register (code ", RC, ", API version ",
                     B->Backend.api_version, ", runtime expects ", OPTIMIUM_RT_BACKEND_API_VERSION, ")");
  }
  B->Device = DeviceID::from(static_cast<PlatformKind>(B->Backend.platform),
                             static_cast<DeviceKind>(B->Backend.device_kind),
                             static_cast<uint8_t>(B->Backend.device_index), 0);
  std::lock_guard<std::mutex> Lock(registryMutex());
  for (const auto &Other : registry()) {
    if (Other->Device.getPlatform() == B->Device.getPlatform()) {
      if (B->Backend.destroy)
        B->Backend.destroy(B->Backend.state);
      ::dlclose(Handle);
      return makeError(ErrorCode::Extension, "an extension for platform ", toString(B->Device.getPlatform()),
                       " is already loaded (", Other->Library.empty() ? "built-in" : Other->Library, ")");
    }
  }
  registry().push_back(B);
  registerLocalDevice(B->Device, nullptr);
  OPT_LOG(Info, "loaded extension '", Path, "' (", B->Backend.name ? B->Backend.name : "?", ")");
  return Status::ok();
}

std::vector<std::shared_ptr<RegisteredBackend>> registeredBackends() {
  std::lock_guard<std::mutex> Lock(registryMutex());
  return registry();
}

std::shared_ptr<RegisteredBackend> findBackend(const DeviceID &Device) {
  std::lock_guard<std::mutex> Lock(registryMutex());
  for (const auto &B : registry())
    if (B->Device == Device)
      return B;
  return nullptr;
}

} // namespace detail
} // namespace runtime
} // namespace optimium
