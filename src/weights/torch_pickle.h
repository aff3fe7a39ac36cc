// A restricted unpickler for the data.pkl of a PyTorch checkpoint (the pickle torch.save writes
// for a state_dict). It executes nothing: it understands only the opcodes torch writes (pickle
// protocols 2 to 5, no code objects, no instance creation) and only the globals of PyTorch's
// `weights_only` allow-list that a state_dict of tensors needs:
//
//   collections.OrderedDict               the state_dict itself and empty backward-hook dicts
//   torch._utils._rebuild_tensor_v2       (storage, offset, size, stride, requires_grad, hooks)
//   torch._utils._rebuild_parameter       (tensor, requires_grad, hooks)
//   torch.FloatStorage, HalfStorage, ...  storage types in persistent ids
//
// Persistent ids are torch's ('storage', storage_type, key, location, numel) tuples; the storage
// bytes live in the zip entry data/<key>, which torch_checkpoint.h resolves and bounds-checks.
// Any other global is refused with its name, before anything refers to it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "weights/safetensors.h"

namespace onepass::weights {

struct TorchStorageRef {
  std::string key;  // zip entry data/<key>
  StoredDType dtype = StoredDType::kF32;
  std::uint64_t numel = 0;  // elements of dtype, as the persistent id says
};

struct TorchTensorRecord {
  std::string name;                  // state_dict key
  std::size_t storage;               // index into TorchStatePickle::storages
  std::uint64_t storage_offset = 0;  // elements
  std::vector<std::int64_t> shape;   // every dimension >= 0
  std::vector<std::int64_t> stride;  // elements, every stride >= 0; same rank as shape
};

struct TorchStatePickle {
  std::vector<TorchStorageRef> storages;
  std::vector<TorchTensorRecord> tensors;  // in the state_dict's order
};

// Unpickles a state_dict: a dict (or OrderedDict) from string keys to tensors. Throws
// onepass::Error(kInvalidModel) naming `file_label` and the problem: a global outside the
// allow-list ("pickle global os.system is not allowed ..."), an unsupported opcode, a REDUCE or
// BUILD on anything but the allowed callables, a malformed persistent id or rebuild argument,
// truncated data, a top-level object that is not a dict of tensors.
TorchStatePickle parse_torch_pickle(std::span<const std::uint8_t> pickle,
                                    std::string_view file_label);

}  // namespace onepass::weights
