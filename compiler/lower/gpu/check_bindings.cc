// The binding rules a GPU schedule must follow before it is lowered. They are about which
// threads run a stage's stores: a store that does not depend on some thread axis of its kernel
// is run by every thread along it (a redundant write, and a race on shared memory).

#include <map>
#include <set>

#include "compiler/lower/gpu/gpu_internal.h"

namespace tuned::lower::gpu {
namespace {

using schedule::AttachKind;
using schedule::Stage;

bool Attached(const Stage& st) {
  return st.attach == AttachKind::kComputeAt || st.attach == AttachKind::kReverseComputeAt;
}

// Tags of a stage's own bound leaf loops; fails on an axis bound twice.
Status OwnTags(const Stage& st, std::map<std::string, std::string>& tags) {
  for (int l : st.leaves) {
    const schedule::Loop& loop = st.loops[l];
    if (loop.kind == ir::ForKind::kParallel) {
      return InvalidArgumentError("block " + st.name + ": loop " + loop.name +
                                  " is parallel; on a GPU target bind it to blockIdx/threadIdx instead");
    }
    if (loop.kind != ir::ForKind::kThreadBinding) continue;
    auto [it, fresh] = tags.emplace(loop.thread_tag, loop.name);
    if (!fresh) {
      return InvalidArgumentError("block " + st.name + " binds " + loop.thread_tag + " to two loops (" +
                                  it->second + " and " + loop.name + ")");
    }
  }
  return Status::Ok();
}

// Tags of the bound loops around a stage's attach point, outermost stage last.
std::set<std::string> EnclosingTags(const schedule::ScheduleState& state, int id) {
  std::set<std::string> tags;
  for (int s = id; Attached(state.stages[s]);) {
    const Stage& outer = state.stages[state.stages[s].attach_stage];
    int pos = outer.LeafPosition(state.stages[s].attach_loop);
    for (int q = 0; q <= pos; ++q) {
      const schedule::Loop& loop = outer.loops[outer.leaves[q]];
      if (loop.kind == ir::ForKind::kThreadBinding) tags.insert(loop.thread_tag);
    }
    s = state.stages[s].attach_stage;
  }
  return tags;
}

int RootOf(const schedule::ScheduleState& state, int id) {
  while (Attached(state.stages[id])) id = state.stages[id].attach_stage;
  return id;
}

// A local buffer belongs to one thread. An attached local stage runs inside its consumer's
// threads and binds none itself; a root local stage (an accumulator read back by blocks computed
// inside its loops) may bind its outer loops, but its buffer lives inside its consumers' loop,
// so that loop must be inside every bound one.
Status CheckLocal(const schedule::ScheduleState& state, int id, const std::map<std::string, std::string>& own) {
  const Stage& st = state.stages[id];
  if (own.empty()) return Status::Ok();
  if (Attached(st)) {
    return InvalidArgumentError("block " + st.name + " (local scope) binds " + own.begin()->first +
                                ": a local buffer belongs to one thread");
  }
  for (int c : state.ConsumersOf(id)) {
    const Stage& cs = state.stages[c];
    int pos = cs.attach == AttachKind::kReverseComputeAt && cs.attach_stage == id ? st.LeafPosition(cs.attach_loop) : -1;
    for (size_t q = size_t(pos + 1); q < st.leaves.size(); ++q) {
      const schedule::Loop& loop = st.loops[st.leaves[q]];
      if (loop.kind != ir::ForKind::kThreadBinding) continue;
      return InvalidArgumentError("block " + st.name + " (local scope) is read by block " + cs.name +
                                  " outside its loop " + loop.name + " bound to " + loop.thread_tag +
                                  ", where threads would share the buffer: compute " + cs.name + " inside it");
    }
  }
  return Status::Ok();
}

}  // namespace

Status CheckBindings(const schedule::ScheduleState& state) {
  std::map<int, std::set<std::string>> kernel_tags;  // by root stage
  std::map<int, std::map<std::string, std::string>> own;
  for (int id : state.order) {
    const Stage& st = state.stages[id];
    if (!st.is_live()) continue;
    TUNED_RETURN_IF_ERROR(OwnTags(st, own[id]));
    for (const auto& [tag, loop] : own[id]) kernel_tags[RootOf(state, id)].insert(tag);
  }
  for (int id : state.order) {
    const Stage& st = state.stages[id];
    if (!st.is_live()) continue;
    const std::string block = "block " + st.name;
    const ir::MemoryScope scope = st.output->scope;
    const std::set<std::string>& needed = kernel_tags[RootOf(state, id)];
    if (needed.empty()) {
      return InvalidArgumentError(block + " is not bound to GPU threads: bind its outer loops to "
                                  "blockIdx/threadIdx (a GPU target runs no host loops)");
    }
    if (st.attach == AttachKind::kComputeAt && scope == ir::MemoryScope::kGlobal && !st.is_output) {
      return InvalidArgumentError(block + " (global scope) is computed inside another block's kernel, "
                                  "where every thread would share it: compute it at the root (its own "
                                  "kernel) or stage it in shared or local memory");
    }
    std::set<std::string> enclosing = EnclosingTags(state, id);
    if (scope == ir::MemoryScope::kLocal) {
      TUNED_RETURN_IF_ERROR(CheckLocal(state, id, own[id]));
      continue;  // each thread computes its own copy: nothing is redundant across threads
    }
    std::set<std::string> covered;
    for (const auto& [tag, loop] : own[id]) {
      if (scope == ir::MemoryScope::kShared && !IsThreadIdx(tag)) {
        return InvalidArgumentError(block + " (shared scope) binds " + tag +
                                    ": shared memory belongs to one block");
      }
      if (enclosing.count(tag) && !(scope == ir::MemoryScope::kShared && IsThreadIdx(tag))) {
        return InvalidArgumentError(block + " binds " + tag + " (loop " + loop +
                                    ") inside a loop already bound to it");
      }
      covered.insert(tag);
    }
    for (const std::string& tag : enclosing) {
      // A shared stage's region spans the threads around it (bound inference relaxes them).
      if (!(scope == ir::MemoryScope::kShared && IsThreadIdx(tag))) covered.insert(tag);
    }
    for (const std::string& tag : needed) {
      if (covered.count(tag) || (scope == ir::MemoryScope::kShared && !IsThreadIdx(tag))) continue;
      return InvalidArgumentError(block + " would be computed redundantly by every thread along " + tag +
                                  " of its kernel: bind one of its loops to " + tag);
    }
  }
  return Status::Ok();
}

}  // namespace tuned::lower::gpu
