#include "compiler/codegen/cuda/cubin.h"

#include <elf.h>

#include <cstring>

namespace tuned::codegen::cuda {
namespace {

constexpr int kEmCuda = 190;  // e_machine of CUDA cubins
// Since ELF ABI version 8 (what NVRTC 13 writes) the SM number sits in bits 8-15 of e_flags;
// before, in bits 0-7.
constexpr int kAbiVersionWithShiftedArch = 8;

}  // namespace

StatusOr<std::string> CubinArch(std::string_view cubin) {
  Elf64_Ehdr header;
  if (cubin.size() < sizeof(header)) {
    return InvalidArgumentError("cubin of " + std::to_string(cubin.size()) +
                                " bytes is shorter than an ELF header");
  }
  std::memcpy(&header, cubin.data(), sizeof(header));
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) {
    return InvalidArgumentError("cubin is not an ELF file (bad magic)");
  }
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB) {
    return InvalidArgumentError("cubin is not a 64-bit little-endian ELF file");
  }
  if (header.e_machine != kEmCuda) {
    return InvalidArgumentError("ELF file is for machine " + std::to_string(header.e_machine) +
                                ", not CUDA (" + std::to_string(kEmCuda) + ")");
  }
  unsigned sm = header.e_ident[EI_ABIVERSION] >= kAbiVersionWithShiftedArch
                    ? (header.e_flags >> 8) & 0xff
                    : header.e_flags & 0xff;
  return "sm_" + std::to_string(sm);
}

}  // namespace tuned::codegen::cuda
