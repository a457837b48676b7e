// Model groups (spec section 11): the public ModelGroup / GroupMember over exec/Group.h.
#include "Optimium/Runtime/ModelGroup.h"
#include "Optimium/Runtime/Exceptions.h"

#include <algorithm>
#include <chrono>

#include "api/OwnedModelBytes.h"
#include "core/ErrorConversion.h"
#include "core/Log.h"
#include "exec/Group.h"
#include "exec/Request.h"

namespace optimium {
namespace runtime {

using namespace detail;

// ------------------------------------------------------------------------------ GroupImpl
GroupImpl::~GroupImpl() {
  // Members first (their models drop their references), then the scheduler, then the pool
  // (joins the workers; no worker can be running: runs happen on callers' threads).
  Members.clear();
  Sched.reset();
  Pool.reset();
}

void GroupImpl::seal() {
  std::lock_guard<std::mutex> Lock(Mu);
  if (Sealed)
    return;
  int Threads = 1;
  for (const auto &M : Members)
    Threads = std::max(Threads, M->Threads);
  PoolConfig PC;
  PC.Threads = Threads;
  PC.Cores = Options.Cores;
  PC.SpinIterations = Options.SpinIterations;
  PC.SpinYieldIterations = Options.SpinYieldIterations;
  PC.EnableWorkStealing = Options.EnableWorkStealing;
  PC.DisableDenormals = Options.DisableDenormals;
  Pool = std::make_shared<ThreadPool>(PC);
  Sched = Scheduler::createGroupExclusive();
  for (const auto &M : Members)
    attachSharedPool(*M, Pool, Sched);
  Sealed = true;
  OPT_LOG(Info, "model group sealed: ", Members.size(), " member(s) sharing ", Threads, " thread(s)");
}

namespace {
/// The group the calling thread is running a member of (re-entrant run() would wait for itself).
thread_local const GroupImpl *RunningGroup = nullptr;
} // namespace

void GroupImpl::beginTurn(bool CountRun) {
  if (RunningGroup == this)
    throw InvalidOperationError("GroupMember::run: called while a member of the same group runs on this thread "
                                "(it would wait for itself)");
  std::unique_lock<std::mutex> Lock(TurnMu);
  const uint64_t Ticket = NextTicket++;
  if (CountRun && Serving != Ticket)
    ++WaitedRuns;
  TurnCv.wait(Lock, [&] { return Serving == Ticket; });
  if (CountRun)
    ++Runs;
  RunningGroup = this;
}

void GroupImpl::endTurn() {
  RunningGroup = nullptr;
  {
    std::lock_guard<std::mutex> Lock(TurnMu);
    ++Serving;
  }
  TurnCv.notify_all();
}

// ------------------------------------------------------------------------------ ModelGroup
namespace {

GroupImpl &checkedGroup(const std::shared_ptr<GroupImpl> &G) {
  if (!G)
    throw InvalidStateError("this ModelGroup is empty (default-constructed); use createModelGroup()");
  return *G;
}

GroupMemberImpl &checkedMember(const std::shared_ptr<GroupMemberImpl> &M) {
  if (!M)
    throw InvalidStateError("this GroupMember is empty (default-constructed); use ModelGroup::add()");
  return *M;
}

ModelLoadOptions memberLoadOptions(const GroupImpl &G, const GroupMemberOptions &O) {
  ModelLoadOptions L;
  static_cast<PerModelOptions &>(L) = O;
  static_cast<PoolTuning &>(L) = G.Options;
  L.Scheduler = SchedulerType::Exclusive;
  return L;
}

void requireOpen(GroupImpl &G) {
  std::lock_guard<std::mutex> Lock(G.Mu);
  if (G.Sealed)
    throw InvalidStateError("ModelGroup::add: the group is sealed (a member has run); add every member before "
                            "the first run()");
}

GroupMember admit(const std::shared_ptr<GroupImpl> &GP, std::shared_ptr<ModelImpl> MI) {
  GroupImpl &G = *GP;
  auto Member = std::make_shared<GroupMemberImpl>();
  Member->Group = GP;
  Member->M = Model(MI);
  {
    // The request's stateful buffers are allocated now: a bad capacity fails add(), not run().
    auto R = std::make_shared<RequestImpl>(MI);
    throwIfError(R->initStateful());
    Member->Request = InferRequest(std::move(R));
  }
  std::lock_guard<std::mutex> Lock(G.Mu);
  // Sealed while this member loaded (another thread ran a member): the group stays as it was.
  if (G.Sealed)
    throw InvalidStateError("ModelGroup::add: the group was sealed (a member ran) while model '" + MI->Name +
                            "' was loading; it was not added");
  G.Members.push_back(std::move(MI));
  return GroupMember(std::move(Member));
}

} // namespace

ModelGroup createModelGroup(const ModelGroupOptions &Options) {
  requireRuntimeInitialized("createModelGroup");
  Status S = validatePoolTuning(Options);
  if (!S.isOk())
    throwIfError(makeError(S.code(), "createModelGroup: ", S.message()));
  return ModelGroup(std::make_shared<GroupImpl>(Options));
}

GroupMember ModelGroup::add(const std::string &Path, const GroupMemberOptions &Options) {
  GroupImpl &G = checkedGroup(Impl);
  requireRuntimeInitialized("ModelGroup::add");
  requireOpen(G);
  return admit(Impl, valueOrThrow(loadModelFromPath(Path, memberLoadOptions(G, Options), PoolOwnership::Shared)));
}

GroupMember ModelGroup::add(const uint8_t *Data, size_t Size, const GroupMemberOptions &Options) {
  GroupImpl &G = checkedGroup(Impl);
  requireRuntimeInitialized("ModelGroup::add");
  if (!Data)
    throw InvalidArgumentError("ModelGroup::add: the model data pointer is null");
  requireOpen(G);
  return admit(Impl,
               valueOrThrow(loadModelFromBuffer(Data, Size, memberLoadOptions(G, Options), nullptr, PoolOwnership::Shared)));
}

namespace detail {
GroupMember addOwningBytes(ModelGroup &Group, std::shared_ptr<const std::vector<uint8_t>> Bytes,
                           const GroupMemberOptions &Options) {
  GroupImpl &G = checkedGroup(Group.impl());
  requireRuntimeInitialized("ModelGroup::add");
  if (!Bytes)
    throw InvalidArgumentError("ModelGroup::add: no model bytes");
  requireOpen(G);
  const uint8_t *Data = Bytes->data();
  const size_t Size = Bytes->size();
  return admit(Group.impl(), valueOrThrow(loadModelFromBuffer(Data, Size, memberLoadOptions(G, Options),
                                                              std::move(Bytes), PoolOwnership::Shared)));
}
} // namespace detail

size_t ModelGroup::size() const {
  GroupImpl &G = checkedGroup(Impl);
  std::lock_guard<std::mutex> Lock(G.Mu);
  return G.Members.size();
}

bool ModelGroup::sealed() const {
  GroupImpl &G = checkedGroup(Impl);
  std::lock_guard<std::mutex> Lock(G.Mu);
  return G.Sealed;
}

// ------------------------------------------------------------------------------ GroupMember
namespace {

/// One admitted run: the FIFO turn, the pool armed (and, with negative spin, kept warm for the
/// next member after it), the member's recorder attached.
class RunScope {
public:
  explicit RunScope(GroupMemberImpl &Member) : Member(Member), G(*Member.Group) {
    // Released by finalize(): refuse before seal() would start a pool for nothing.
    const ModelImpl &MI = *Member.Request.impl()->M;
    if (MI.ShutDown.load())
      throwIfError(MI.shutDownError("GroupMember::run"));
    G.seal();
    G.beginTurn();
    G.Pool->arm();
    Member.Request.impl()->Recorder = Member.Recorder.get();
  }
  ~RunScope() {
    Member.Request.impl()->Recorder = nullptr;
    if (G.Options.SpinIterations < 0)
      G.Pool->keepWarmUntil(std::chrono::steady_clock::now() + std::chrono::microseconds(kGroupWarmWindowUs));
    G.Pool->disarm();
    G.endTurn();
  }
  RunScope(const RunScope &) = delete;
  RunScope &operator=(const RunScope &) = delete;

private:
  GroupMemberImpl &Member;
  GroupImpl &G;
};

} // namespace

void GroupMember::run(ArrayRef<Tensor> Inputs) {
  std::shared_ptr<GroupMemberImpl> Self = Impl; // the run keeps the member (and group) alive
  GroupMemberImpl &M = checkedMember(Self);
  RunScope Scope(M);
  M.Request.infer(Inputs);
  M.Request.wait();
}

void GroupMember::run(const std::map<std::string, Tensor> &Inputs) {
  std::shared_ptr<GroupMemberImpl> Self = Impl;
  GroupMemberImpl &M = checkedMember(Self);
  RunScope Scope(M);
  M.Request.infer(Inputs);
  M.Request.wait();
}

Tensor GroupMember::getOutput(size_t Index) const { return checkedMember(Impl).Request.getOutput(Index); }
Tensor GroupMember::getOutput(StringRef Name) const { return checkedMember(Impl).Request.getOutput(Name); }
Tensor GroupMember::getTensor(StringRef Name) const { return checkedMember(Impl).Request.getTensor(Name); }

void GroupMember::setTensorShape(StringRef Name, const TensorShape &Shape) {
  checkedMember(Impl).Request.setTensorShape(Name, Shape);
}

ArrayRef<StringRef> GroupMember::getInputNames() const { return checkedMember(Impl).M.getInputNames(); }
ArrayRef<StringRef> GroupMember::getOutputNames() const { return checkedMember(Impl).M.getOutputNames(); }
const TensorInfo &GroupMember::getTensorInfo(StringRef Name) const { return checkedMember(Impl).M.getTensorInfo(Name); }
const TensorInfo &GroupMember::getInputTensorInfo(size_t Index) const {
  return checkedMember(Impl).M.getInputTensorInfo(Index);
}
const TensorInfo &GroupMember::getOutputTensorInfo(size_t Index) const {
  return checkedMember(Impl).M.getOutputTensorInfo(Index);
}
std::string GroupMember::getName() const { return checkedMember(Impl).M.getName(); }

void GroupMember::setRecorder(std::shared_ptr<ProfileEventRecorder> Recorder) {
  GroupMemberImpl &M = checkedMember(Impl);
  GroupImpl &G = *M.Group;
  // Swapped between runs only: take the turn (a run in progress finishes first).
  std::shared_ptr<ProfileEventRecorder> Old;
  G.beginTurn(/*CountRun=*/false);
  Old = std::move(M.Recorder);
  M.Recorder = std::move(Recorder);
  G.endTurn();
}

ProfileDurations GroupMember::getProfileDurations() const {
  GroupMemberImpl &M = checkedMember(Impl);
  std::shared_ptr<ProfileEventRecorder> Rec = M.Recorder;
  ProfileDurations D;
  if (Rec)
    D = computeProfileDurations(Rec->events(), M.M.getOperations(), M.M.getTensors());
  D.ModelName = M.M.getName();
  return D;
}

std::vector<LayerDuration> GroupMember::getLayerDurations() const {
  GroupMemberImpl &M = checkedMember(Impl);
  std::shared_ptr<ProfileEventRecorder> Rec = M.Recorder;
  if (!Rec)
    return {};
  return summarizeLayerDurations(Rec->events(), M.M.getOperations());
}

} // namespace runtime
} // namespace optimium
