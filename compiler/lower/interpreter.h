#ifndef TUNED_COMPILER_LOWER_INTERPRETER_H_
#define TUNED_COMPILER_LOWER_INTERPRETER_H_

/// \file
/// Runs a lowered program on host data, one statement at a time. Slow and obviously correct:
/// it is the oracle the code generators are checked against. Every access is bounds-checked, so
/// a schedule that reads or writes outside a buffer is reported, not silently wrong.

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "compiler/lower/lowered_func.h"

namespace tuned::lower {

/// Runs `func` with argument values by buffer name; returns the output's values (the last
/// argument), rounded to its dtype as a real kernel stores them.
StatusOr<std::vector<double>> Interpret(const LoweredFunc& func,
                                        const std::map<std::string, std::vector<double>>& inputs);

}  // namespace tuned::lower

#endif  // TUNED_COMPILER_LOWER_INTERPRETER_H_
