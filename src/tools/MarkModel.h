// optimium-mark: writes or updates a model folder's optimium.json (the manifest that marks graph
// inputs Preserved / Resizable, spec section 10). main() (MarkModelMain.cpp) calls markModelMain().
//
//   optimium-mark <model-folder> [--preserve 'PAT[=OUTPAT]']... [--resizable 'PAT=DxDx...']...
//
// PAT names graph inputs; one '*' in it matches any substring, which replaces the '*' of OUTPAT:
//   --preserve 'past_*=present_*'     past_key_0 is kept in the request and updated from present_key_0
//   --preserve state                  kept in the request, never updated by the model
//   --resizable 'past_*=1x8x0x64'     resizable with base shape 1x8x0x64 ('x' alone: scalar)
// Existing entries of optimium.json are kept; flags add to or overwrite fields of matched tensors.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace optimium {
namespace tools {

struct MarkOptions {
  std::string ModelFolder;
  std::vector<std::string> Preserve;  ///< "PAT" or "PAT=OUTPAT".
  std::vector<std::string> Resizable; ///< "PAT=DxDx...".
};

/// Names matching a pattern with at most one '*'; Captured receives the '*' substrings.
bool globMatch(const std::string &Pattern, const std::string &Name, std::string *Captured);

/// Applies Options to <ModelFolder>/optimium.json (created when missing). Returns "" on success,
/// else an error message (nothing is written then). Summary lists what was marked.
std::string markModel(const MarkOptions &Options, std::ostream &Summary);

/// Parses argv and calls markModel; exit status 0 on success, 1 on errors (printed to Err).
int markModelMain(int Argc, char **Argv, std::ostream &Out, std::ostream &Err);
int markModelMain(int Argc, char **Argv);

} // namespace tools
} // namespace optimium
