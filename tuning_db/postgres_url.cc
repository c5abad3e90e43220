#include "tuning_db/postgres_url.h"

#include <vector>

namespace tuned::db {
namespace {

constexpr std::string_view kSchemes[] = {"postgresql://", "postgres://"};

// Drops `password=...` from the `&`-separated query string `query` (without its `?`).
std::string WithoutPasswordParameter(std::string_view query) {
  std::string kept;
  while (!query.empty()) {
    const size_t end = query.find('&');
    const std::string_view part = query.substr(0, end);
    if (part.substr(0, 9) != "password=") {
      if (!kept.empty()) kept += '&';
      kept += part;
    }
    if (end == std::string_view::npos) break;
    query.remove_prefix(end + 1);
  }
  return kept;
}

}  // namespace

bool IsPostgresUrl(std::string_view text) {
  for (std::string_view scheme : kSchemes) {
    if (text.substr(0, scheme.size()) == scheme) return true;
  }
  return false;
}

std::string RedactPostgresUrl(std::string_view url) {
  size_t scheme_end = 0;
  for (std::string_view scheme : kSchemes) {
    if (url.substr(0, scheme.size()) == scheme) scheme_end = scheme.size();
  }
  std::string_view rest = url.substr(scheme_end);
  std::string redacted(url.substr(0, scheme_end));
  // The authority ends at the first '/' or '?'; its user info ends at its last '@'.
  const size_t authority_end = rest.find_first_of("/?");
  const std::string_view authority = rest.substr(0, authority_end);
  const size_t at = authority.rfind('@');
  if (at != std::string_view::npos) {
    const std::string_view user_info = authority.substr(0, at);
    redacted += user_info.substr(0, user_info.find(':'));
    redacted += authority.substr(at);
  } else {
    redacted += authority;
  }
  if (authority_end == std::string_view::npos) return redacted;
  rest.remove_prefix(authority_end);
  const size_t question = rest.find('?');
  redacted += rest.substr(0, question);
  if (question == std::string_view::npos) return redacted;
  const std::string query = WithoutPasswordParameter(rest.substr(question + 1));
  if (!query.empty()) redacted += "?" + query;
  return redacted;
}

}  // namespace tuned::db
