#ifndef TUNED_COMMON_COMPILER_LOG_H_
#define TUNED_COMMON_COMPILER_LOG_H_

/// \file
/// A compiler's log (NVRTC's program log, an OpenCL build log) as one line: the reason a
/// candidate's COMPILE_ERROR carries.

#include <string>
#include <string_view>

namespace tuned {

/// The first line of `log` that reports an error, trimmed, with its file and line as the
/// compiler wrote them ("kernel.cu(3): error: expected a \";\"", "<source>:4:3: error: use of
/// undeclared identifier 'y'"); `fallback` when no line does. Never more than one line.
std::string FirstErrorLine(std::string_view log, std::string_view fallback);

}  // namespace tuned

#endif  // TUNED_COMMON_COMPILER_LOG_H_
