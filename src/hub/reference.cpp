#include "hub/reference.h"

namespace onepass::hub {
namespace {

bool valid_part(std::string_view part) {
  if (part.empty() || part.size() > 96) return false;
  if (part.front() == '.' || part.front() == '-' || part.back() == '.' || part.back() == '-')
    return false;
  if (part.find("--") != std::string_view::npos || part.find("..") != std::string_view::npos)
    return false;
  for (const char c : part) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::string HubId::name() const { return repo_id.substr(repo_id.find('/') + 1); }

bool is_commit_hash(std::string_view text) {
  if (text.size() != 40) return false;
  for (const char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::optional<HubId> parse_hub_id(std::string_view text) {
  HubId id;
  const auto at = text.find('@');
  if (at != std::string_view::npos) {
    const std::string_view revision = text.substr(at + 1);
    // A revision may hold '/' ("refs/pr/1") but never whitespace, '..' or control characters.
    if (revision.empty() || revision.find("..") != std::string_view::npos) return std::nullopt;
    for (const char c : revision) {
      if (static_cast<unsigned char>(c) <= ' ' || c == '\\') return std::nullopt;
    }
    id.revision = std::string(revision);
    id.revision_given = true;
    text = text.substr(0, at);
  }
  const auto slash = text.find('/');
  if (slash == std::string_view::npos || text.find('/', slash + 1) != std::string_view::npos)
    return std::nullopt;
  if (!valid_part(text.substr(0, slash)) || !valid_part(text.substr(slash + 1)))
    return std::nullopt;
  id.repo_id = std::string(text);
  return id;
}

}  // namespace onepass::hub
