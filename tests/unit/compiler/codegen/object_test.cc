// Object-file emission: a relocatable ELF whose symbol table defines the kernel and its packed
// entry point as global functions, for the host and for a cross target; the C header; assembly.

#include <elf.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "compiler/codegen/llvm/codegen_llvm.h"
#include "tests/unit/compiler/codegen/codegen_test_util.h"

namespace tuned::codegen {
namespace {

using namespace tuned::ir;
using ::testing::HasSubstr;

lower::LoweredFunc Scale(const std::string& name) {
  Buffer A = MakeBuffer("A", DataType::Float32(), {64});
  Buffer C = MakeBuffer("C", DataType::Float32(), {64});
  Var i = MakeVar("i");
  return {name, {A, C},
          MakeFor(i, 0, 64, ForKind::kParallel,
                  MakeStore(C, {AsExpr(i)}, MakeLoad(A, {AsExpr(i)}) * MakeFloat(2.0)))};
}

struct ElfInfo {
  uint16_t machine = 0;
  uint16_t type = 0;
  std::set<std::string> defined_functions;  // global, defined, STT_FUNC
  std::set<std::string> undefined;
};

// Reads the ELF64 header and the symbol table; fails the test on anything malformed.
ElfInfo ParseElf(const std::string& bytes) {
  ElfInfo info;
  EXPECT_GE(bytes.size(), sizeof(Elf64_Ehdr));
  if (bytes.size() < sizeof(Elf64_Ehdr)) return info;
  Elf64_Ehdr header;
  std::memcpy(&header, bytes.data(), sizeof(header));
  EXPECT_EQ(std::memcmp(header.e_ident, ELFMAG, SELFMAG), 0);
  EXPECT_EQ(header.e_ident[EI_CLASS], ELFCLASS64);
  info.machine = header.e_machine;
  info.type = header.e_type;
  EXPECT_LE(header.e_shoff + size_t(header.e_shnum) * sizeof(Elf64_Shdr), bytes.size());
  std::vector<Elf64_Shdr> sections(header.e_shnum);
  std::memcpy(sections.data(), bytes.data() + header.e_shoff, sections.size() * sizeof(Elf64_Shdr));
  for (const Elf64_Shdr& s : sections) {
    if (s.sh_type != SHT_SYMTAB) continue;
    const Elf64_Shdr& strings = sections.at(s.sh_link);
    for (size_t off = 0; off + sizeof(Elf64_Sym) <= s.sh_size; off += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      std::memcpy(&sym, bytes.data() + s.sh_offset + off, sizeof(sym));
      std::string name(bytes.data() + strings.sh_offset + sym.st_name);
      if (name.empty()) continue;
      if (sym.st_shndx == SHN_UNDEF) {
        info.undefined.insert(name);
      } else if (ELF64_ST_BIND(sym.st_info) == STB_GLOBAL &&
                 ELF64_ST_TYPE(sym.st_info) == STT_FUNC) {
        info.defined_functions.insert(name);
      }
    }
  }
  return info;
}

TEST(ObjectEmission, HostObjectDefinesKernelAndPackedEntry) {
  StatusOr<std::string> object = EmitObject({Scale("scale"), Scale("scale2")}, testing::HostTarget());
  ASSERT_TRUE(object.ok()) << object.status().message();
  ElfInfo elf = ParseElf(*object);
  EXPECT_EQ(elf.type, ET_REL);
  EXPECT_EQ(elf.machine, EM_X86_64);
  EXPECT_TRUE(elf.defined_functions.count("scale"));
  EXPECT_TRUE(elf.defined_functions.count("scale_packed"));
  EXPECT_TRUE(elf.defined_functions.count("scale2"));
  // The parallel body stays internal; the launch comes from the runtime.
  EXPECT_FALSE(elf.defined_functions.count("scale_parallel0"));
  EXPECT_TRUE(elf.undefined.count("tuned_parallel_for"));
}

TEST(ObjectEmission, CrossTargetObject) {
  StatusOr<target::Target> target = ParseCpuTarget("llvm -mtriple=aarch64-unknown-linux-gnu -mcpu=neoverse-n1");
  ASSERT_TRUE(target.ok()) << target.status().message();
  StatusOr<std::string> object = EmitObject({Scale("scale")}, *target);
  ASSERT_TRUE(object.ok()) << object.status().message();
  ElfInfo elf = ParseElf(*object);
  EXPECT_EQ(elf.machine, EM_AARCH64);
  EXPECT_TRUE(elf.defined_functions.count("scale"));
}

TEST(ObjectEmission, WritesFileAndReportsUnwritablePath) {
  std::filesystem::path path = std::filesystem::temp_directory_path() / "tuned_codegen_test.o";
  ASSERT_TRUE(WriteObjectFile({Scale("scale")}, testing::HostTarget(), path.string()).ok());
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(ParseElf(bytes).defined_functions.count("scale"));
  std::filesystem::remove(path);
  Status bad = WriteObjectFile({Scale("scale")}, testing::HostTarget(), "/nonexistent/dir/k.o");
  EXPECT_EQ(bad.code(), StatusCode::kUnavailable);
  EXPECT_THAT(bad.message(), HasSubstr("/nonexistent/dir/k.o"));
}

TEST(ObjectEmission, HeaderDeclaresTheAbi) {
  std::string header = EmitCHeader({Scale("scale")});
  EXPECT_THAT(header, HasSubstr("void scale(const float* A, float* C);"));
  EXPECT_THAT(header, HasSubstr("void scale_packed(void* const* args);"));
}

TEST(ObjectEmission, AssemblyHasVectorFma) {
  Buffer A = MakeBuffer("A", DataType::Float32(), {8});
  Buffer B = MakeBuffer("B", DataType::Float32(), {8});
  Buffer C = MakeBuffer("C", DataType::Float32(), {8});
  Var i = MakeVar("i");
  lower::LoweredFunc f{"fma8", {A, B, C},
                       MakeFor(i, 0, 8, ForKind::kVectorized,
                               MakeStore(C, {AsExpr(i)},
                                         MakeLoad(A, {AsExpr(i)}) * MakeLoad(B, {AsExpr(i)}) +
                                             MakeLoad(C, {AsExpr(i)})))};
  StatusOr<target::Target> haswell = ParseCpuTarget("llvm -mcpu=haswell");
  ASSERT_TRUE(haswell.ok());
  StatusOr<std::string> assembly = EmitAssembly({f}, *haswell);
  ASSERT_TRUE(assembly.ok()) << assembly.status().message();
  EXPECT_THAT(*assembly, HasSubstr("vfmadd"));
  EXPECT_THAT(*assembly, HasSubstr("%ymm"));
}

TEST(ObjectEmission, DuplicateKernelNamesAreRejected) {
  StatusOr<std::string> object = EmitObject({Scale("k"), Scale("k")}, testing::HostTarget());
  EXPECT_EQ(object.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(object.status().message(), HasSubstr("kernel name k is used twice"));
}

}  // namespace
}  // namespace tuned::codegen
