#include "weights/torch_pickle.h"

#include <array>
#include <cstring>
#include <deque>
#include <optional>
#include <set>
#include <unordered_map>

#include "base/error.h"

namespace onepass::weights {
namespace {

// The storage classes torch writes in persistent ids, by the dtype of their elements.
struct StorageType {
  const char* name;
  StoredDType dtype;
};
constexpr std::array<StorageType, 10> kStorageTypes{{
    {"FloatStorage", StoredDType::kF32},
    {"HalfStorage", StoredDType::kF16},
    {"BFloat16Storage", StoredDType::kBF16},
    {"DoubleStorage", StoredDType::kF64},
    {"LongStorage", StoredDType::kI64},
    {"IntStorage", StoredDType::kI32},
    {"ShortStorage", StoredDType::kI16},
    {"CharStorage", StoredDType::kI8},
    {"ByteStorage", StoredDType::kU8},
    {"BoolStorage", StoredDType::kBool},
}};

enum class Callable { kOrderedDict, kRebuildTensorV2, kRebuildParameter, kStorageType };

// One unpickled object. Objects live in the Unpickler's arena and refer to each other by index,
// so a pickle that builds a cycle (a dict holding itself) cannot leak or recurse.
struct Node {
  enum class Kind {
    kNone,
    kBool,
    kInt,
    kFloat,
    kString,
    kTuple,
    kList,
    kDict,
    kGlobal,
    kStorage,
    kTensor
  };
  Kind kind = Kind::kNone;
  std::int64_t integer = 0;        // kBool, kInt; kStorage / kTensor: index into the result
  std::string text;                // kString
  std::vector<std::size_t> items;  // kTuple, kList; kDict: key, value, key, value, ...
  Callable callable = Callable::kOrderedDict;  // kGlobal
  StoredDType dtype = StoredDType::kF32;       // kGlobal of kStorageType
};

const char* kind_name(Node::Kind kind) {
  switch (kind) {
    case Node::Kind::kNone:
      return "None";
    case Node::Kind::kBool:
      return "bool";
    case Node::Kind::kInt:
      return "int";
    case Node::Kind::kFloat:
      return "float";
    case Node::Kind::kString:
      return "str";
    case Node::Kind::kTuple:
      return "tuple";
    case Node::Kind::kList:
      return "list";
    case Node::Kind::kDict:
      return "dict";
    case Node::Kind::kGlobal:
      return "global";
    case Node::Kind::kStorage:
      return "storage";
    case Node::Kind::kTensor:
      return "tensor";
  }
  return "?";
}

class Unpickler {
 public:
  Unpickler(std::span<const std::uint8_t> data, std::string_view label)
      : data_(data), label_(label) {}

  TorchStatePickle run() {
    for (;;) {
      const std::uint8_t op = byte();
      if (op == '.') break;  // STOP
      step(op);
    }
    if (stack_.size() != 1 || !marks_.empty()) fail("pickle does not end with exactly one object");
    collect_state_dict(stack_.back());
    return std::move(result_);
  }

 private:
  using Kind = Node::Kind;

  [[noreturn]] void fail(const std::string& problem) const {
    throw Error(ErrorKind::kInvalidModel, std::string(label_) + ": " + problem);
  }

  // --- reading the byte stream ---
  const std::uint8_t* take(std::uint64_t n) {
    if (n > data_.size() - pos_) fail("pickle is truncated");
    const auto* p = data_.data() + pos_;
    pos_ += static_cast<std::size_t>(n);
    return p;
  }
  std::uint8_t byte() { return *take(1); }
  std::uint64_t little(int bytes) {
    const auto* p = take(static_cast<std::uint64_t>(bytes));
    std::uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
    return v;
  }
  std::string line() {
    const std::size_t start = pos_;
    while (pos_ < data_.size() && data_[pos_] != '\n') ++pos_;
    if (pos_ == data_.size()) fail("pickle is truncated");
    std::string s(reinterpret_cast<const char*>(data_.data() + start), pos_ - start);
    ++pos_;
    return s;
  }

  // --- the object arena and stacks ---
  std::size_t make(Kind kind) {
    nodes_.emplace_back();
    nodes_.back().kind = kind;
    return nodes_.size() - 1;
  }
  std::size_t make_int(std::int64_t v) {
    const auto i = make(Kind::kInt);
    nodes_[i].integer = v;
    return i;
  }
  std::size_t make_string(std::string s) {
    const auto i = make(Kind::kString);
    nodes_[i].text = std::move(s);
    return i;
  }
  void push(std::size_t node) { stack_.push_back(node); }
  std::size_t pop() {
    if (stack_.size() <= stack_floor()) fail("pickle pops from an empty stack");
    const auto n = stack_.back();
    stack_.pop_back();
    return n;
  }
  std::size_t top() const {
    if (stack_.size() <= stack_floor()) fail("pickle reads an empty stack");
    return stack_.back();
  }
  std::size_t stack_floor() const { return marks_.empty() ? 0 : marks_.back(); }
  // Everything above the last MARK, which is removed.
  std::vector<std::size_t> pop_to_mark() {
    if (marks_.empty()) fail("pickle has no MARK where one is needed");
    const std::size_t mark = marks_.back();
    marks_.pop_back();
    std::vector<std::size_t> items(stack_.begin() + static_cast<std::ptrdiff_t>(mark),
                                   stack_.end());
    stack_.resize(mark);
    return items;
  }
  std::size_t tuple(std::vector<std::size_t> items) {
    const auto t = make(Kind::kTuple);
    nodes_[t].items = std::move(items);
    return t;
  }
  void memo_put(std::uint64_t key) { memo_[key] = top(); }
  void memo_get(std::uint64_t key) {
    const auto it = memo_.find(key);
    if (it == memo_.end())
      fail("pickle reads memo entry " + std::to_string(key) + " never written");
    push(it->second);
  }
  Node& node_of_kind(std::size_t i, Kind kind, const char* what) {
    if (nodes_[i].kind != kind) {
      fail(std::string(what) + " is " + kind_name(nodes_[i].kind) + ", expected " +
           kind_name(kind));
    }
    return nodes_[i];
  }
  void add_items(std::size_t target, const std::vector<std::size_t>& items, bool pairs) {
    Node& t = nodes_[target];
    if (pairs ? t.kind != Kind::kDict : t.kind != Kind::kList) {
      fail(std::string("pickle ") + (pairs ? "SETITEMS" : "APPENDS") + " on " + kind_name(t.kind));
    }
    if (pairs && items.size() % 2 != 0) fail("pickle SETITEMS has an odd number of items");
    t.items.insert(t.items.end(), items.begin(), items.end());
  }

  void step(std::uint8_t op) {
    switch (op) {
      case 0x80:  // PROTO
        if (const auto v = byte(); v < 2 || v > 5) fail("pickle protocol " + std::to_string(v));
        return;
      case 0x95:
        take(8);
        return;  // FRAME: a length hint only
      case '(':
        marks_.push_back(stack_.size());
        return;
      case '}':
        push(make(Kind::kDict));
        return;
      case ']':
        push(make(Kind::kList));
        return;
      case ')':
        push(tuple({}));
        return;
      case 't':
        push(tuple(pop_to_mark()));
        return;
      case 0x85:
      case 0x86:
      case 0x87: {  // TUPLE1..3
        std::vector<std::size_t> items(static_cast<std::size_t>(op - 0x84));
        for (auto it = items.rbegin(); it != items.rend(); ++it) *it = pop();
        push(tuple(std::move(items)));
        return;
      }
      case 'l': {  // LIST
        const auto l = make(Kind::kList);
        nodes_[l].items = pop_to_mark();
        push(l);
        return;
      }
      case 'd': {  // DICT
        auto items = pop_to_mark();
        const auto d = make(Kind::kDict);
        add_items(d, items, true);
        push(d);
        return;
      }
      case 'a': {
        const auto v = pop();
        add_items(top(), {v}, false);
        return;
      }  // APPEND
      case 'e': {
        auto items = pop_to_mark();
        add_items(top(), items, false);
        return;
      }
      case 's': {  // SETITEM
        const auto v = pop();
        const auto k = pop();
        add_items(top(), {k, v}, true);
        return;
      }
      case 'u': {
        auto items = pop_to_mark();
        add_items(top(), items, true);
        return;
      }
      case 'q':
        memo_put(byte());
        return;  // BINPUT
      case 'r':
        memo_put(little(4));
        return;  // LONG_BINPUT
      case 0x94:
        memo_put(memo_.size());
        return;  // MEMOIZE
      case 'h':
        memo_get(byte());
        return;  // BINGET
      case 'j':
        memo_get(little(4));
        return;  // LONG_BINGET
      case 'J':
        push(make_int(static_cast<std::int32_t>(little(4))));
        return;  // BININT
      case 'K':
        push(make_int(byte()));
        return;  // BININT1
      case 'M':
        push(make_int(static_cast<std::int64_t>(little(2))));
        return;     // BININT2
      case 0x8a: {  // LONG1: little-endian two's complement, up to 8 bytes here
        const auto n = byte();
        if (n > 8) fail("pickle integer is wider than 64 bits");
        std::uint64_t v = n == 0 ? 0 : little(n);
        if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~0ull << (8 * n);  // sign-extend
        push(make_int(static_cast<std::int64_t>(v)));
        return;
      }
      case 'G':  // BINFLOAT: a big-endian double whose value a state_dict never needs
        take(8);
        push(make(Kind::kFloat));
        return;
      case 'N':
        push(make(Kind::kNone));
        return;
      case 0x88:
      case 0x89: {  // NEWTRUE, NEWFALSE
        const auto b = make(Kind::kBool);
        nodes_[b].integer = op == 0x88;
        push(b);
        return;
      }
      case 'X':
        push(string_of(little(4)));
        return;  // BINUNICODE
      case 0x8c:
        push(string_of(byte()));
        return;  // SHORT_BINUNICODE
      case 0x8d:
        push(string_of(little(8)));
        return;    // BINUNICODE8
      case 'c': {  // GLOBAL "module\nname\n"
        auto module = line();
        auto name = line();
        push(global(module, name));
        return;
      }
      case 0x93: {  // STACK_GLOBAL
        const auto name = pop();
        const auto module = pop();
        push(global(node_of_kind(module, Kind::kString, "STACK_GLOBAL module").text,
                    node_of_kind(name, Kind::kString, "STACK_GLOBAL name").text));
        return;
      }
      case 'Q':
        push(persistent_load(pop()));
        return;    // BINPERSID
      case 'R': {  // REDUCE
        const auto args = pop();
        const auto callable = pop();
        push(reduce(callable, args));
        return;
      }
      case 'b': {  // BUILD: only an OrderedDict's attributes (state_dict._metadata), ignored
        pop();
        const auto target = top();
        if (nodes_[target].kind != Kind::kDict) {
          fail(std::string("pickle BUILD on ") + kind_name(nodes_[target].kind) +
               " is not allowed");
        }
        return;
      }
      default: {
        static const char* hex = "0123456789abcdef";
        fail(std::string("pickle opcode 0x") + hex[op >> 4] + hex[op & 15] +
             " is not allowed in a weights-only checkpoint");
      }
    }
  }

  std::size_t string_of(std::uint64_t bytes) {
    const auto* p = take(bytes);
    return make_string(
        std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(bytes)));
  }

  std::size_t global(const std::string& module, const std::string& name) {
    const auto g = make(Kind::kGlobal);
    Node& n = nodes_[g];
    if (module == "collections" && name == "OrderedDict") {
      n.callable = Callable::kOrderedDict;
      return g;
    }
    if (module == "torch._utils" && name == "_rebuild_tensor_v2") {
      n.callable = Callable::kRebuildTensorV2;
      return g;
    }
    if (module == "torch._utils" && name == "_rebuild_parameter") {
      n.callable = Callable::kRebuildParameter;
      return g;
    }
    if (module == "torch") {
      for (const auto& type : kStorageTypes) {
        if (name != type.name) continue;
        n.callable = Callable::kStorageType;
        n.dtype = type.dtype;
        return g;
      }
    }
    fail("pickle global " + module.substr(0, 80) + "." + name.substr(0, 80) +
         " is not allowed: a weights-only checkpoint may name only collections.OrderedDict, "
         "torch._utils._rebuild_tensor_v2, torch._utils._rebuild_parameter and torch storage "
         "types");
  }

  std::int64_t int_of(std::size_t i, const char* what) {
    return node_of_kind(i, Kind::kInt, what).integer;
  }

  // ('storage', <storage type>, key, location, numel) -> a storage reference.
  std::size_t persistent_load(std::size_t id) {
    const Node& t = node_of_kind(id, Kind::kTuple, "persistent id");
    if (t.items.size() != 5) fail("persistent id is not a 5-tuple ('storage', type, key, ...)");
    const auto items = t.items;
    if (node_of_kind(items[0], Kind::kString, "persistent id tag").text != "storage") {
      fail("persistent id is not a storage");
    }
    const Node& type = node_of_kind(items[1], Kind::kGlobal, "persistent id storage type");
    if (type.callable != Callable::kStorageType) fail("persistent id names no storage type");
    TorchStorageRef ref;
    ref.dtype = type.dtype;
    ref.key = node_of_kind(items[2], Kind::kString, "storage key").text;
    node_of_kind(items[3], Kind::kString, "storage location");
    const auto numel = int_of(items[4], "storage size");
    if (numel < 0) fail("storage " + ref.key.substr(0, 40) + " has a negative size");
    ref.numel = static_cast<std::uint64_t>(numel);
    result_.storages.push_back(std::move(ref));
    const auto s = make(Kind::kStorage);
    nodes_[s].integer = static_cast<std::int64_t>(result_.storages.size() - 1);
    return s;
  }

  std::vector<std::int64_t> int_tuple(std::size_t i, const char* what) {
    std::vector<std::int64_t> out;
    for (const auto item : node_of_kind(i, Kind::kTuple, what).items) {
      const auto v = int_of(item, what);
      if (v < 0) fail(std::string(what) + " has a negative value");
      out.push_back(v);
    }
    return out;
  }

  void require_empty_hooks(std::size_t i) {
    const Node& n = nodes_[i];
    if (n.kind == Kind::kNone) return;
    if (n.kind != Kind::kDict || !n.items.empty()) fail("tensor has backward hooks");
  }

  std::size_t reduce(std::size_t callable, std::size_t args_node) {
    const Node& f = node_of_kind(callable, Kind::kGlobal, "REDUCE callable");
    const auto args = node_of_kind(args_node, Kind::kTuple, "REDUCE arguments").items;
    switch (f.callable) {
      case Callable::kOrderedDict:
        if (!args.empty()) fail("OrderedDict is called with arguments");
        return make(Kind::kDict);
      case Callable::kRebuildTensorV2: {
        // (storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])
        if (args.size() != 6 && args.size() != 7) {
          fail("_rebuild_tensor_v2 takes 6 or 7 arguments, got " + std::to_string(args.size()));
        }
        TorchTensorRecord record;
        record.storage = static_cast<std::size_t>(
            node_of_kind(args[0], Kind::kStorage, "tensor storage").integer);
        const auto offset = int_of(args[1], "tensor storage offset");
        if (offset < 0) fail("tensor has a negative storage offset");
        record.storage_offset = static_cast<std::uint64_t>(offset);
        record.shape = int_tuple(args[2], "tensor size");
        record.stride = int_tuple(args[3], "tensor stride");
        if (record.shape.size() != record.stride.size())
          fail("tensor size and stride differ in rank");
        node_of_kind(args[4], Kind::kBool, "tensor requires_grad");
        require_empty_hooks(args[5]);
        if (args.size() == 7) require_empty_hooks(args[6]);
        result_.tensors.push_back(std::move(record));
        const auto t = make(Kind::kTensor);
        nodes_[t].integer = static_cast<std::int64_t>(result_.tensors.size() - 1);
        return t;
      }
      case Callable::kRebuildParameter:  // (tensor, requires_grad, backward_hooks)
        if (args.size() != 3) fail("_rebuild_parameter takes 3 arguments");
        node_of_kind(args[0], Kind::kTensor, "parameter data");
        require_empty_hooks(args[2]);
        return args[0];
      case Callable::kStorageType:
        fail("a storage type is called; checkpoints only name them in persistent ids");
    }
    fail("REDUCE on an unknown callable");
  }

  // The top-level object: {name: tensor}. Names the tensors; tensors built but not reachable
  // from it (none in a torch.save of a state_dict) are dropped.
  void collect_state_dict(std::size_t root) {
    const Node& dict = node_of_kind(root, Kind::kDict, "the checkpoint's top-level object");
    std::vector<TorchTensorRecord> named;
    std::set<std::string> seen;
    for (std::size_t i = 0; i + 1 < dict.items.size(); i += 2) {
      const auto& key = node_of_kind(dict.items[i], Kind::kString, "a state_dict key").text;
      const Node& value = nodes_[dict.items[i + 1]];
      if (value.kind != Kind::kTensor) {
        fail("state_dict entry " + key.substr(0, 80) + " is " + kind_name(value.kind) +
             ", not a tensor");
      }
      if (!seen.insert(key).second) fail("state_dict key " + key.substr(0, 80) + " appears twice");
      TorchTensorRecord record = result_.tensors[static_cast<std::size_t>(value.integer)];
      record.name = key;
      named.push_back(std::move(record));
    }
    result_.tensors = std::move(named);
  }

  std::span<const std::uint8_t> data_;
  std::string_view label_;
  std::size_t pos_ = 0;
  std::deque<Node> nodes_;
  std::vector<std::size_t> stack_;
  std::vector<std::size_t> marks_;  // stack sizes at each MARK
  std::unordered_map<std::uint64_t, std::size_t> memo_;
  TorchStatePickle result_;
};

}  // namespace

TorchStatePickle parse_torch_pickle(std::span<const std::uint8_t> pickle,
                                    std::string_view file_label) {
  return Unpickler(pickle, file_label).run();
}

}  // namespace onepass::weights
