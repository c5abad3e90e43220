// What a cubin's ELF header says, and what is refused as not a cubin.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <elf.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "compiler/codegen/cuda/cubin.h"

namespace tuned::codegen::cuda {
namespace {

using ::testing::HasSubstr;

std::string CudaHeader(unsigned abi_version, unsigned flags) {
  Elf64_Ehdr header{};
  std::memcpy(header.e_ident, ELFMAG, SELFMAG);
  header.e_ident[EI_CLASS] = ELFCLASS64;
  header.e_ident[EI_DATA] = ELFDATA2LSB;
  header.e_ident[EI_ABIVERSION] = static_cast<unsigned char>(abi_version);
  header.e_machine = 190;
  header.e_flags = flags;
  return std::string(reinterpret_cast<const char*>(&header), sizeof(header));
}

TEST(Cubin, ArchComesFromTheFlagsOfEitherAbiVersion) {
  StatusOr<std::string> current = CubinArch(CudaHeader(8, 0x6005a04));  // NVRTC 13, sm_90
  ASSERT_TRUE(current.ok()) << current.status().message();
  EXPECT_EQ(*current, "sm_90");
  StatusOr<std::string> older = CubinArch(CudaHeader(7, 0x500550));  // SM number in bits 0-7
  ASSERT_TRUE(older.ok()) << older.status().message();
  EXPECT_EQ(*older, "sm_80");
}

TEST(Cubin, HostExecutableIsNotACubin) {
  std::ifstream self("/proc/self/exe", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(self)), std::istreambuf_iterator<char>());
  StatusOr<std::string> arch = CubinArch(bytes);
  ASSERT_FALSE(arch.ok());
  EXPECT_THAT(arch.status().message(), HasSubstr("not CUDA (190)"));
}

TEST(Cubin, ShortOrForeignBytesAreRefused) {
  EXPECT_THAT(CubinArch("\x7f" "ELF").status().message(), HasSubstr("shorter than an ELF header"));
  EXPECT_THAT(CubinArch(std::string(64, 'x')).status().message(), HasSubstr("bad magic"));
}

}  // namespace
}  // namespace tuned::codegen::cuda
