#include "model/fusion.h"

#include <map>
#include <set>

#include "model/operators.h"

namespace tuned::model {
namespace {

constexpr int kUnassigned = -1;
constexpr int kOutside = -2;

class Partitioner {
 public:
  explicit Partitioner(const Graph& graph) : g_(graph), owner_(graph.nodes.size(), kUnassigned) {
    for (int i = 0; i < int(g_.nodes.size()); ++i) {
      for (const std::string& out : g_.nodes[i].outputs) producer_[out] = i;
      for (const std::string& in : g_.nodes[i].inputs) consumers_[in].push_back(i);
      support_.push_back(CheckSupported(g_, g_.nodes[i]));
    }
    graph_outputs_.insert(g_.outputs.begin(), g_.outputs.end());
  }

  Partition Run() {
    Partition p;
    for (int root = 0; root < int(g_.nodes.size()); ++root) {
      if (owner_[root] != kUnassigned) continue;
      if (!support_[root].ok()) {
        owner_[root] = kOutside;
        p.outside.push_back({root, std::string(support_[root].message())});
        p.steps.push_back({false, root});
        continue;
      }
      FusedKernel kernel = Grow(root);
      for (int m : kernel.nodes) owner_[m] = int(p.kernels.size());
      p.steps.push_back({true, int(p.kernels.size())});
      p.kernels.push_back(std::move(kernel));
    }
    return p;
  }

 private:
  // Whether `tensor` exists before the kernel starting at `root` runs.
  bool ReadyBefore(const std::string& tensor, int root) const {
    auto it = producer_.find(tensor);
    return it == producer_.end() || it->second < root;  // model input, constant, or earlier
  }

  // The elementwise nodes after `root` that read what the kernel computes and nothing that is
  // not ready when it starts, in node order.
  std::vector<int> Candidates(int root) const {
    std::vector<int> members{root};
    std::set<std::string> values{g_.nodes[root].outputs[0]};
    for (int c = root + 1; c < int(g_.nodes.size()); ++c) {
      const Node& node = g_.nodes[c];
      if (owner_[c] != kUnassigned || RoleOf(node.op) != OpRole::kElementwise || !support_[c].ok()) continue;
      bool reads_kernel = false, ready = true;
      for (const std::string& in : node.inputs) {
        if (in.empty()) continue;
        if (values.count(in)) {
          reads_kernel = true;
        } else if (!ReadyBefore(in, root)) {
          ready = false;
        }
      }
      if (!reads_kernel || !ready) continue;
      members.push_back(c);
      values.insert(node.outputs[0]);
    }
    return members;
  }

  // The tensors of `members` that the graph's outputs or a node outside `members` read.
  std::vector<std::string> ReadOutside(const std::vector<int>& members) const {
    std::set<int> inside(members.begin(), members.end());
    std::vector<std::string> read;
    for (int m : members) {
      const std::string& out = g_.nodes[m].outputs[0];
      bool outside = graph_outputs_.count(out) > 0;
      auto it = consumers_.find(out);
      if (it != consumers_.end()) {
        for (int c : it->second) outside |= !inside.count(c);
      }
      if (outside) read.push_back(out);
    }
    return read;
  }

  // The longest run of candidates that leaves the kernel one result, its last node's.
  FusedKernel Grow(int root) const {
    std::vector<int> members = Candidates(root);
    while (members.size() > 1) {
      std::vector<std::string> read = ReadOutside(members);
      if (read.size() == 1 && read[0] == g_.nodes[members.back()].outputs[0]) break;
      members.pop_back();
    }
    return FusedKernel{members, g_.nodes[members.back()].outputs[0]};
  }

  const Graph& g_;
  std::vector<int> owner_;
  std::vector<Status> support_;
  std::map<std::string, int> producer_;
  std::map<std::string, std::vector<int>> consumers_;
  std::set<std::string> graph_outputs_;
};

}  // namespace

Partition PartitionGraph(const Graph& graph) { return Partitioner(graph).Run(); }

}  // namespace tuned::model
