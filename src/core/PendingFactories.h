// Registrations kept as factories until their op is first looked up (OpSchema and kernel
// registries): loading the library runs no op's code, so none of it is paged in.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace optimium {
namespace runtime {
namespace detail {

template <typename Factory> class PendingFactories {
public:
  void add(const std::string &OpType, Factory Make) { Pending[OpType].push_back(Make); }
  bool empty() const { return Pending.empty(); }
  /// Calls Use(Make()) for each factory registered as *OpType (every one when OpType is null) and
  /// forgets them. Callers hold their registry's lock.
  template <typename UseFn> void build(const std::string *OpType, UseFn Use) {
    std::vector<Factory> Makers;
    if (!OpType) {
      for (auto &KV : Pending)
        Makers.insert(Makers.end(), KV.second.begin(), KV.second.end());
      Pending.clear();
    } else {
      auto It = Pending.find(*OpType);
      if (It == Pending.end())
        return;
      Makers = std::move(It->second);
      Pending.erase(It);
    }
    for (Factory Make : Makers)
      Use(Make());
  }

private:
  std::map<std::string, std::vector<Factory>> Pending;
};

} // namespace detail
} // namespace runtime
} // namespace optimium
