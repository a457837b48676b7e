// The OIP endpoints as a function of one parsed HTTP request: routing, auth, model metadata and
// inference over a pool of InferRequests per model. No sockets here (OipServer.cpp owns them), so
// the C++ tests call it directly.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <Optimium/Runtime.h>

#include "Http.h"
#include "OipServer.h"

namespace optimium {
namespace remote {
namespace oip {

/// The models a server serves: (name, absolute path) resolved from the options, each path checked
/// to stay inside the workspace. Throws std::runtime_error naming the offending entry.
std::vector<std::pair<std::string, std::string>> resolveModels(const OipOptions &Options);

class OipService {
public:
  /// Loads every model (throws std::runtime_error naming the model that failed).
  explicit OipService(const OipOptions &Options);
  ~OipService();
  HttpResponse handle(const HttpRequest &Request);
  std::vector<std::string> modelNames() const;

private:
  struct ModelEntry;
  HttpResponse infer(ModelEntry &Entry, const HttpRequest &Request);
  HttpResponse route(const HttpRequest &Request);
  OipOptions Options;
  std::map<std::string, std::unique_ptr<ModelEntry>> Models;
};

} // namespace oip
} // namespace remote
} // namespace optimium
