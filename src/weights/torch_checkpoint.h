// PyTorch's zip checkpoint (pytorch_model.bin as torch.save writes it since PyTorch 1.6):
//
//   <archive>/data.pkl     the pickled state_dict (torch_pickle.h reads it without running it)
//   <archive>/data/<key>   each storage's raw little-endian elements
//   <archive>/version, <archive>/byteorder (PyTorch >= 2.1: "little")
//
// read_torch_checkpoint() is the untrusted-input boundary: every tensor it returns lies inside
// its storage's zip entry, which lies inside the file. The legacy (pre-1.6, non-zip) format is
// refused: reading it means unpickling without the zip's separation of data and code.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "weights/safetensors.h"

namespace onepass::weights {

struct TorchTensor {
  std::string name;
  StoredDType dtype = StoredDType::kF32;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> stride;  // elements
  // Absolute file offset of element [0, ..., 0]. For every index inside `shape`, the element at
  // data_offset + bytes(dtype) * sum(index[k] * stride[k]) lies inside the file.
  std::uint64_t data_offset = 0;
  std::int64_t numel() const;
  // Row-major with no gaps: the bytes [data_offset, data_offset + numel * bytes) are the tensor.
  bool contiguous() const;
};

// Throws onepass::Error(kInvalidModel) naming `file_label` and the problem (zip_archive.h and
// torch_pickle.h list theirs): no data.pkl, a big-endian checkpoint, a storage key with no
// data/<key> entry, a storage entry whose size is not numel x element size, a tensor reaching
// past the end of its storage.
std::vector<TorchTensor> read_torch_checkpoint(std::span<const std::uint8_t> file,
                                               std::string_view file_label);

}  // namespace onepass::weights
