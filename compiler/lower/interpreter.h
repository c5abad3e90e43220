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
#include "compiler/lower/gpu/gpu_program.h"
#include "compiler/lower/lowered_func.h"

namespace tuned::lower {

/// Runs `func` with argument values by buffer name; returns the output's values (the last
/// argument), rounded to its dtype as a real kernel stores them.
StatusOr<std::vector<double>> Interpret(const LoweredFunc& func,
                                        const std::map<std::string, std::vector<double>>& inputs);

/// Runs a GPU program (compiler/lower/gpu/gpu_program.h): its kernels in order, each block after
/// the other, the threads of a block in lockstep from barrier to barrier (a branch runs the
/// threads that take it). With `check_races`, every shared-memory element read or written by
/// two threads of a block between the same two barriers, at least once writing, fails the run:
/// "race on shared A_shared[37] in block (0,0,0) of kernel k: thread (3,0,0) writes it, thread
/// (5,0,0) reads it, no barrier between". A barrier that some threads of a block do not reach
/// fails too.
struct GpuInterpretOptions {
  bool check_races = true;
};
StatusOr<std::vector<double>> InterpretGpu(const gpu::GpuProgram& program,
                                           const std::map<std::string, std::vector<double>>& inputs,
                                           const GpuInterpretOptions& options = {});

}  // namespace tuned::lower

#endif  // TUNED_COMPILER_LOWER_INTERPRETER_H_
