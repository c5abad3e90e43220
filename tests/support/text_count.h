#ifndef TUNED_TESTS_SUPPORT_TEXT_COUNT_H_
#define TUNED_TESTS_SUPPORT_TEXT_COUNT_H_

/// \file
/// Counting what a printed program or document holds: the tests that check emitted IR, CUDA C
/// or SVG by the number of times something appears in it.

#include <iterator>
#include <regex>
#include <string>

namespace tuned::testing {

/// How many times `needle` occurs in `text` (overlapping occurrences included).
inline int CountOccurrences(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

/// How many non-overlapping matches of the regular expression `pattern` `text` holds.
inline int CountMatches(const std::string& text, const std::string& pattern) {
  const std::regex re(pattern);
  return int(std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

}  // namespace tuned::testing

#endif  // TUNED_TESTS_SUPPORT_TEXT_COUNT_H_
