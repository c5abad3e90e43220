// The module layering of docs/architecture.md, checked against the tree. The table under
// "Modules and dependency direction" names each library (or executable), the files it is made
// of and the tuned libraries it may use directly. This test reads that same table and fails when
//   - a CMake file links a tuned library the table does not list for that target, or the table
//     lists an edge no CMake file has (the table is the whole truth about edges);
//   - a source file includes a header of a library its own library does not depend on
//     (directly or through the libraries it uses);
//   - a file includes another library's private header (`*_internal.h`);
//   - a library's declared headers (cmake/TunedHelpers.cmake writes them to
//     build/tuned_headers.txt) are not the files the table gives it, or `*_internal.h` is public;
//   - a compile command of the build has the repository root as an include folder.
// The compiler enforces the same edges (each library exports only its own include root); this
// test keeps the table, the CMake files and the headers telling one story.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;

const fs::path kRoot = TUNED_SOURCE_DIR;
const fs::path kHeaderManifest = TUNED_HEADER_MANIFEST;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Module {
  std::string name;                  // CMake target
  std::vector<std::string> prefixes; // path prefixes of its files, relative to the root
  std::set<std::string> uses;        // tuned targets it may link directly
};

// Names in backquotes in one table cell.
std::vector<std::string> Quoted(const std::string& cell) {
  std::vector<std::string> names;
  static const std::regex kQuoted("`([^`]+)`");
  for (auto it = std::sregex_iterator(cell.begin(), cell.end(), kQuoted); it != std::sregex_iterator(); ++it) {
    names.push_back((*it)[1]);
  }
  return names;
}

std::vector<std::string> Cells(const std::string& row) {
  std::vector<std::string> cells;
  std::stringstream in(row.substr(1));
  std::string cell;
  while (std::getline(in, cell, '|')) cells.push_back(cell);
  return cells;
}

// The layering table: the first Markdown table whose header reads "| library | files | uses |".
std::map<std::string, Module> ReadLayeringTable() {
  std::map<std::string, Module> modules;
  std::stringstream doc(ReadFile(kRoot / "docs/architecture.md"));
  std::string line;
  bool in_table = false;
  while (std::getline(doc, line)) {
    if (line.rfind("| library | files | uses |", 0) == 0) {
      in_table = true;
      std::getline(doc, line);  // the |---| row
      continue;
    }
    if (!in_table) continue;
    if (line.empty() || line[0] != '|') break;
    std::vector<std::string> cells = Cells(line);
    if (cells.size() < 3) continue;
    std::vector<std::string> names = Quoted(cells[0]);
    if (names.empty()) continue;
    Module module;
    module.name = names[0];
    module.prefixes = Quoted(cells[1]);
    for (const std::string& use : Quoted(cells[2])) module.uses.insert(use);
    modules[module.name] = module;
  }
  return modules;
}

bool IsTunedTarget(const std::string& name) {
  return name.rfind("tuned_", 0) == 0 || name == "tuned" || name == "tuned-worker";
}

// Every (target → tuned target) link edge in the product's CMake files (not tests, benchmarks
// or examples), from tuned_add_library(NAME ... DEPS ... PRIVATE_DEPS ...) and
// target_link_libraries(NAME ...).
std::map<std::string, std::set<std::string>> ReadCmakeEdges() {
  std::map<std::string, std::set<std::string>> edges;
  static const std::regex kCall(R"((tuned_add_library|target_link_libraries|add_library|add_executable)\(([^)]*)\))");
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(kRoot)) {
    fs::path rel = fs::relative(entry.path(), kRoot);
    std::string top = rel.begin()->string();
    if (top == "build" || top == "tests" || top == "bench" || top == "examples" || top.starts_with(".")) continue;
    if (entry.path().filename() != "CMakeLists.txt") continue;
    std::string text = ReadFile(entry.path());
    for (auto it = std::sregex_iterator(text.begin(), text.end(), kCall); it != std::sregex_iterator(); ++it) {
      std::stringstream words((*it)[2].str());
      std::string target, word;
      words >> target;
      if (!IsTunedTarget(target)) continue;
      edges[target];  // a target with no tuned edges still exists
      if ((*it)[1] == "add_library" || (*it)[1] == "add_executable") continue;
      while (words >> word) {
        // "$<LINK_LIBRARY:WHOLE_ARCHIVE,tuned_reuse>" names tuned_reuse.
        std::smatch wrapped;
        if (std::regex_search(word, wrapped, std::regex(R"(,(tuned_\w+)>)"))) word = wrapped[1];
        if (word.starts_with("\"")) word = word.substr(1, word.find('"', 1) - 1);
        if (IsTunedTarget(word) && word != target) edges[target].insert(word);
      }
    }
  }
  return edges;
}

std::set<std::string> Closure(const std::map<std::string, Module>& modules, const std::string& name) {
  std::set<std::string> seen;
  std::vector<std::string> stack = {name};
  while (!stack.empty()) {
    std::string current = stack.back();
    stack.pop_back();
    if (!seen.insert(current).second) continue;
    auto it = modules.find(current);
    if (it != modules.end()) stack.insert(stack.end(), it->second.uses.begin(), it->second.uses.end());
  }
  return seen;
}

// The module a file belongs to: the one with the longest matching prefix.
const Module* ModuleOf(const std::map<std::string, Module>& modules, const std::string& path) {
  const Module* best = nullptr;
  size_t best_length = 0;
  for (const auto& [name, module] : modules) {
    for (const std::string& prefix : module.prefixes) {
      if (path.rfind(prefix, 0) == 0 && prefix.size() > best_length) {
        best = &module;
        best_length = prefix.size();
      }
    }
  }
  return best;
}

// The module a quoted include names: a repository header by its path, or a generated proto
// header (messages and service stubs come from two different libraries).
const Module* ModuleOfInclude(const std::map<std::string, Module>& modules, const std::string& include) {
  auto named = [&](const char* name) -> const Module* {
    auto it = modules.find(name);
    return it == modules.end() ? nullptr : &it->second;
  };
  if (include.starts_with("tuned/v1/")) {
    return include.ends_with(".grpc.pb.h") ? named("tuned_proto_grpc") : named("tuned_proto_msgs");
  }
  if (include == "common/version.h") return named("tuned_common");
  if (!fs::exists(kRoot / include)) return nullptr;
  return ModuleOf(modules, include);
}

TEST(Layering, TheTableListsEveryModule) {
  std::map<std::string, Module> modules = ReadLayeringTable();
  ASSERT_GE(modules.size(), 10u) << "no layering table found in docs/architecture.md";
  for (const auto& [target, uses] : ReadCmakeEdges()) {
    EXPECT_TRUE(modules.count(target)) << "CMake target " << target << " is missing from the table";
  }
}

TEST(Layering, CmakeEdgesAreExactlyTheTable) {
  std::map<std::string, Module> modules = ReadLayeringTable();
  std::map<std::string, std::set<std::string>> edges = ReadCmakeEdges();
  for (const auto& [target, uses] : edges) {
    auto it = modules.find(target);
    if (it == modules.end()) continue;  // reported by TheTableListsEveryModule
    for (const std::string& use : uses) {
      EXPECT_TRUE(it->second.uses.count(use))
          << target << " links " << use << " in CMake, but docs/architecture.md does not allow it";
    }
    for (const std::string& use : it->second.uses) {
      EXPECT_TRUE(uses.count(use)) << "docs/architecture.md says " << target << " uses " << use
                                   << ", but no CMake file links it";
    }
  }
}

TEST(Layering, FilesIncludeOnlyWhatTheirLibraryMayUse) {
  std::map<std::string, Module> modules = ReadLayeringTable();
  ASSERT_FALSE(modules.empty());
  static const std::regex kInclude(R"re(^\s*#\s*include\s+"([^"]+)")re");
  int checked = 0;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(kRoot)) {
    std::string ext = entry.path().extension().string();
    if (ext != ".cc" && ext != ".h") continue;
    std::string path = fs::relative(entry.path(), kRoot).string();
    const Module* owner = ModuleOf(modules, path);
    if (owner == nullptr) continue;  // tests, benchmarks, examples, build outputs
    std::set<std::string> allowed = Closure(modules, owner->name);
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      std::smatch match;
      if (!std::regex_search(line, match, kInclude)) continue;
      std::string include = match[1];
      const Module* used = ModuleOfInclude(modules, include);
      if (used == nullptr) continue;  // a header outside the product (e.g. a generated one)
      ++checked;
      EXPECT_TRUE(allowed.count(used->name))
          << path << " (" << owner->name << ") includes " << include << " of " << used->name
          << ", which " << owner->name << " does not depend on";
      if (include.ends_with("_internal.h")) {
        EXPECT_EQ(used, owner) << path << " includes " << include << ", a private header of " << used->name;
      }
    }
  }
  EXPECT_GT(checked, 200) << "the scan found almost no includes: is TUNED_SOURCE_DIR right?";
}

struct DeclaredHeader {
  std::string target;
  bool is_public = false;
};

// build/tuned_headers.txt: "<target> public|private <header>" per line, '#' starts a comment.
std::multimap<std::string, DeclaredHeader> ReadHeaderManifest() {
  std::multimap<std::string, DeclaredHeader> headers;
  std::stringstream text(ReadFile(kHeaderManifest));
  std::string line;
  while (std::getline(text, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::stringstream words(line);
    std::string target, kind, header;
    words >> target >> kind >> header;
    headers.insert({header, {target, kind == "public"}});
  }
  return headers;
}

TEST(Layering, EveryHeaderIsDeclaredByTheLibraryTheTableGivesItTo) {
  std::map<std::string, Module> modules = ReadLayeringTable();
  std::multimap<std::string, DeclaredHeader> declared = ReadHeaderManifest();
  ASSERT_GT(declared.size(), 50u) << "no header manifest at " << kHeaderManifest;
  std::set<std::string> configured;  // the libraries this build configures
  for (const auto& [header, declaration] : declared) configured.insert(declaration.target);
  int checked = 0;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(kRoot)) {
    if (entry.path().extension() != ".h") continue;
    std::string path = fs::relative(entry.path(), kRoot).string();
    const Module* owner = ModuleOf(modules, path);
    if (owner == nullptr) continue;  // tests, benchmarks, examples, build outputs
    // An include/ folder is an include root of its own (compiler/reuse/include: <tuned/compiler.h>).
    if (path.find("/include/") != std::string::npos) continue;
    // An optional library this build leaves out (CUDA or OpenCL not found) declares nothing.
    if (!configured.count(owner->name)) continue;
    std::vector<std::string> libraries;
    auto [begin, end] = declared.equal_range(path);
    for (auto it = begin; it != end; ++it) {
      if (!modules.count(it->second.target)) continue;  // a test's or benchmark's own view
      libraries.push_back(it->second.target);
      EXPECT_EQ(it->second.target, owner->name)
          << path << " is declared by " << it->second.target << " in CMake, but docs/architecture.md gives it to "
          << owner->name;
      if (path.ends_with("_internal.h")) {
        EXPECT_FALSE(it->second.is_public) << path << " is a private header, but " << it->second.target << " exports it";
      }
    }
    EXPECT_EQ(libraries.size(), 1u) << path << " is declared by " << libraries.size()
                                    << " libraries of the table (see cmake/TunedHelpers.cmake for the rule)";
    ++checked;
  }
  EXPECT_GT(checked, 50);
}

TEST(Layering, NoCompileCommandIncludesTheRepositoryRoot) {
  fs::path commands_file = kHeaderManifest.parent_path() / "compile_commands.json";
  nlohmann::json commands = nlohmann::json::parse(ReadFile(commands_file), nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(commands.is_array()) << "cannot read " << commands_file;
  const std::string root = fs::weakly_canonical(kRoot).string();
  auto is_root = [&](std::string folder) {
    while (folder.size() > 1 && folder.back() == '/') folder.pop_back();
    return folder == root || folder == ".";
  };
  int include_folders = 0;
  for (const nlohmann::json& command : commands) {
    std::stringstream words(command.value("command", ""));
    std::string word, previous;
    while (words >> word) {
      std::string folder;
      if (word.starts_with("-I")) folder = word.substr(2);
      if (previous == "-isystem" || previous == "-iquote") folder = word;
      previous = word;
      if (folder.empty()) continue;
      ++include_folders;
      EXPECT_FALSE(is_root(folder)) << command.value("file", "") << " is compiled with the repository root as an include folder";
    }
  }
  EXPECT_GT(include_folders, 100) << "no include folders found in " << commands_file;
}

}  // namespace
