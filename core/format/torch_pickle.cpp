#include "memfit/format/torch_pickle.h"

#include <array>
#include <cstring>
#include <deque>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

namespace memfit::torch_pickle {
namespace {

// ---- values -------------------------------------------------------------------------------
// Values live in an arena owned by the VM and refer to each other by pointer: the memo and the
// stack share objects (a dict is memoized before SETITEMS fills it), cycles cost nothing, and
// nothing is ever destroyed recursively — so no input can overflow the C++ stack.
enum class Kind { kNone, kBool, kInt, kFloat, kStr, kBytes, kTuple, kList, kDict, kGlobal,
                  kStorage, kTensor };

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::kNone: return "None";
    case Kind::kBool: return "bool";
    case Kind::kInt: return "int";
    case Kind::kFloat: return "float";
    case Kind::kStr: return "str";
    case Kind::kBytes: return "bytes";
    case Kind::kTuple: return "tuple";
    case Kind::kList: return "list";
    case Kind::kDict: return "dict";
    case Kind::kGlobal: return "global";
    case Kind::kStorage: return "storage";
    case Kind::kTensor: return "tensor";
  }
  return "?";
}

struct Node {
  Kind kind = Kind::kNone;
  std::int64_t i = 0;            // bool/int; kStorage: index into storages; kTensor: into tensors
  double f = 0;
  std::string s;                 // str/bytes; kGlobal: "module.name"
  std::vector<Node*> items;      // tuple/list
  std::vector<std::pair<Node*, Node*>> pairs;  // dict, insertion order
  bool ordered = false;          // an OrderedDict
  std::vector<std::string> attributes;  // BUILD state keys set on a dict
  std::size_t depth = 1;         // nesting, for the cap
};

// The allowed globals, and the one thing each may do.
enum class Callable { kOrderedDict, kRebuildTensorV2, kRebuildParameter, kRebuildParameterWithState,
                      kStorageType };

struct StorageClass {
  const char* name;
  DType dtype;
};
constexpr std::array<StorageClass, 10> kStorageClasses{{
    {"DoubleStorage", DType::kF64}, {"FloatStorage", DType::kF32}, {"HalfStorage", DType::kF16},
    {"BFloat16Storage", DType::kBF16}, {"LongStorage", DType::kI64}, {"IntStorage", DType::kI32},
    {"ShortStorage", DType::kI16}, {"CharStorage", DType::kI8}, {"ByteStorage", DType::kU8},
    {"BoolStorage", DType::kBool},
}};

std::optional<Callable> allowed_global(std::string_view module, std::string_view name) {
  if (module == "collections" && name == "OrderedDict") return Callable::kOrderedDict;
  if (module == "torch._utils") {
    if (name == "_rebuild_tensor_v2") return Callable::kRebuildTensorV2;
    if (name == "_rebuild_parameter") return Callable::kRebuildParameter;
    if (name == "_rebuild_parameter_with_state") return Callable::kRebuildParameterWithState;
  }
  if (module == "torch" && storage_dtype(name)) return Callable::kStorageType;
  return std::nullopt;
}

// Real torch storage types without a memfit dtype: refused as unsupported, not as hostile.
bool known_unsupported_storage(std::string_view name) {
  for (const char* n : {"ComplexFloatStorage", "ComplexDoubleStorage", "QInt8Storage", "QUInt8Storage",
                        "QInt32Storage", "QUInt4x2Storage", "QUInt2x4Storage", "UntypedStorage"})
    if (name == n) return true;
  return false;
}

bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t n = 0;
    std::uint32_t cp = 0;
    if ((c >> 5) == 0x6) n = 1, cp = c & 0x1F;
    else if ((c >> 4) == 0xE) n = 2, cp = c & 0x0F;
    else if ((c >> 3) == 0x1E) n = 3, cp = c & 0x07;
    else return false;
    if (s.size() - i <= n) return false;
    for (std::size_t k = 1; k <= n; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc >> 6) != 0x2) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    // overlong forms, surrogates and values past U+10FFFF are not UTF-8
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    i += n + 1;
  }
  return true;
}

// ---- the machine ----------------------------------------------------------------------------
class Machine {
 public:
  Machine(std::string_view data, std::string_view source) : data_(data), source_(source) {}

  StateDict run() {
    while (true) {
      op_at_ = pos_;
      const auto op = static_cast<unsigned char>(take(1)[0]);
      if (op == '.') return finish();
      step(op);
    }
  }

 private:
  // -- errors name the pickle, the byte offset of the opcode and the opcode
  [[noreturn]] void fail(ErrorCode code, const std::string& what) const {
    throw Error(code, fmt::format("{}: at byte {} (opcode 0x{:02x}): {}", source_, op_at_,
                                  op_at_ < data_.size() ? static_cast<unsigned char>(data_[op_at_]) : 0,
                                  what));
  }

  std::string_view take(std::uint64_t n) {
    if (n > data_.size() - pos_)
      fail(ErrorCode::kPickleTruncated,
           fmt::format("the pickle ends: {} more bytes needed, {} left{}", n, data_.size() - pos_,
                       pos_ == data_.size() ? " (no STOP opcode)" : ""));
    const std::string_view out = data_.substr(pos_, static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return out;
  }
  std::uint64_t le(std::size_t n) {
    const std::string_view b = take(n);
    std::uint64_t v = 0;
    for (std::size_t k = n; k-- > 0;) v = (v << 8) | static_cast<unsigned char>(b[k]);
    return v;
  }
  std::string_view line() {  // GLOBAL's text operands
    const std::size_t nl = data_.find('\n', pos_);
    if (nl == std::string_view::npos)
      fail(ErrorCode::kPickleTruncated, "GLOBAL: the pickle ends before the newline");
    const std::string_view out = data_.substr(pos_, nl - pos_);
    pos_ = nl + 1;
    return out;
  }

  Node* make(Kind k) {
    if (arena_.size() >= kMaxNodes)
      fail(ErrorCode::kPickleLimitExceeded, fmt::format("more than {} values", kMaxNodes));
    arena_.emplace_back();
    arena_.back().kind = k;
    return &arena_.back();
  }
  void push(Node* n) {
    if (stack_.size() >= kMaxStackDepth)
      fail(ErrorCode::kPickleLimitExceeded, fmt::format("the stack is deeper than {}", kMaxStackDepth));
    stack_.push_back(n);
  }
  Node* pop(const char* op) {
    if (stack_.size() <= floor())
      fail(ErrorCode::kPickleStackUnderflow, fmt::format("{} needs a value; the stack{} is empty",
                                                         op, marks_.empty() ? "" : " above the MARK"));
    Node* n = stack_.back();
    stack_.pop_back();
    return n;
  }
  Node* top(const char* op) {
    if (stack_.size() <= floor())
      fail(ErrorCode::kPickleStackUnderflow, fmt::format("{} needs a value; the stack{} is empty",
                                                         op, marks_.empty() ? "" : " above the MARK"));
    return stack_.back();
  }
  std::size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
  // The values above the innermost MARK, which is removed.
  std::vector<Node*> pop_mark(const char* op) {
    if (marks_.empty())
      fail(ErrorCode::kPickleMissingMark, fmt::format("{} needs a MARK and there is none", op));
    const std::size_t m = marks_.back();
    marks_.pop_back();
    std::vector<Node*> out(stack_.begin() + static_cast<std::ptrdiff_t>(m), stack_.end());
    stack_.resize(m);
    return out;
  }
  Node* expect(Node* n, Kind k, const char* op) {
    if (n->kind != k)
      fail(ErrorCode::kPickleInvalidOperand,
           fmt::format("{} needs a {}, got a {}", op, kind_name(k), kind_name(n->kind)));
    return n;
  }
  void adopt(Node* parent, Node* child) {
    parent->depth = std::max(parent->depth, child->depth + 1);
    if (parent->depth > kMaxNesting)
      fail(ErrorCode::kPickleLimitExceeded, fmt::format("values nested deeper than {}", kMaxNesting));
  }
  Node* make_tuple(std::vector<Node*> items) {
    Node* t = make(Kind::kTuple);
    for (Node* it : items) adopt(t, it);
    t->items = std::move(items);
    return t;
  }
  Node* make_str(std::string_view s, const char* op) {
    if (!valid_utf8(s)) fail(ErrorCode::kPickleInvalidOperand, fmt::format("{}: not valid UTF-8", op));
    Node* n = make(Kind::kStr);
    n->s = std::string(s);
    return n;
  }
  Node* make_int(std::int64_t v) {
    Node* n = make(Kind::kInt);
    n->i = v;
    return n;
  }
  // LONG1 / LONG4: little-endian two's complement of n bytes; memfit needs at most 64 bits.
  Node* make_long(std::uint64_t n) {
    if (n > 8)
      fail(ErrorCode::kPickleLimitExceeded, fmt::format("an integer of {} bytes (at most 8 are supported)", n));
    const std::string_view b = take(n);
    std::uint64_t v = 0;
    for (std::size_t k = b.size(); k-- > 0;) v = (v << 8) | static_cast<unsigned char>(b[k]);
    if (n > 0 && n < 8 && (static_cast<unsigned char>(b[n - 1]) & 0x80)) v |= ~0ull << (8 * n);
    return make_int(static_cast<std::int64_t>(v));
  }
  void memo_put(std::uint64_t key) {
    Node* n = top("PUT");
    if (memo_.size() >= kMaxMemoEntries && memo_.find(key) == memo_.end())
      fail(ErrorCode::kPickleLimitExceeded, fmt::format("more than {} memo entries", kMaxMemoEntries));
    memo_[key] = n;
  }
  void memo_get(std::uint64_t key) {
    const auto it = memo_.find(key);
    if (it == memo_.end())
      fail(ErrorCode::kPickleMemoMissing, fmt::format("GET of memo key {}, which was never PUT", key));
    push(it->second);
  }
  void set_items(Node* dict, const std::vector<Node*>& kv, const char* op) {
    expect(dict, Kind::kDict, op);
    if (kv.size() % 2 != 0)
      fail(ErrorCode::kPickleInvalidOperand, fmt::format("{}: an odd number of values ({}) after the MARK", op, kv.size()));
    for (std::size_t k = 0; k < kv.size(); k += 2) {
      const Kind kk = kv[k]->kind;
      if (kk != Kind::kStr && kk != Kind::kInt && kk != Kind::kBytes && kk != Kind::kBool && kk != Kind::kNone)
        fail(ErrorCode::kPickleInvalidOperand, fmt::format("{}: a dict key must be a str or an int, got a {}", op, kind_name(kk)));
      adopt(dict, kv[k + 1]);
      dict->pairs.emplace_back(kv[k], kv[k + 1]);
    }
  }
  void global(std::string_view module, std::string_view name) {
    // The allow-list is applied here, when the name is read: nothing is looked up or built for a
    // global that is not on it.
    if (module == "torch" && known_unsupported_storage(name))
      fail(ErrorCode::kTorchBinUnsupportedDtype,
           fmt::format("torch.{} is a storage type memfit cannot read (supported: float64, float32, "
                       "float16, bfloat16, int64, int32, int16, int8, uint8, bool)", name));
    if (!allowed_global(module, name))
      fail(ErrorCode::kPickleForbiddenGlobal,
           fmt::format("the global '{}.{}' is not allowed; a torch state dict may only use "
                       "collections.OrderedDict, torch._utils._rebuild_tensor_v2, "
                       "torch._utils._rebuild_parameter[_with_state] and torch.*Storage "
                       "(nothing was executed)", module, name));
    Node* g = make(Kind::kGlobal);
    g->s = fmt::format("{}.{}", module, name);
    push(g);
  }

  void step(unsigned char op) {
    switch (op) {
      case 0x80: {  // PROTO
        protocol_ = static_cast<unsigned char>(take(1)[0]);
        if (protocol_ > 5)
          fail(ErrorCode::kPickleUnsupportedProtocol, fmt::format("pickle protocol {} (at most 5 is known)", protocol_));
        return;
      }
      case 0x95: {  // FRAME: a length hint for buffered readers
        const std::uint64_t n = le(8);
        if (n > data_.size() - pos_)
          fail(ErrorCode::kPickleTruncated, fmt::format("FRAME of {} bytes, {} left", n, data_.size() - pos_));
        return;
      }
      case '(':
        if (marks_.size() >= kMaxStackDepth)
          fail(ErrorCode::kPickleLimitExceeded, fmt::format("more than {} open MARKs", kMaxStackDepth));
        marks_.push_back(stack_.size());
        return;
      case '0': pop("POP"); return;
      case '1': pop_mark("POP_MARK"); return;
      case '2': push(top("DUP")); return;
      case 'N': push(make(Kind::kNone)); return;
      case 0x88: case 0x89: {  // NEWTRUE, NEWFALSE
        Node* b = make(Kind::kBool);
        b->i = op == 0x88;
        push(b);
        return;
      }
      case 'J': push(make_int(static_cast<std::int32_t>(static_cast<std::uint32_t>(le(4))))); return;
      case 'K': push(make_int(static_cast<std::int64_t>(le(1)))); return;
      case 'M': push(make_int(static_cast<std::int64_t>(le(2)))); return;
      case 0x8a: push(make_long(le(1))); return;  // LONG1
      case 0x8b: push(make_long(le(4))); return;  // LONG4
      case 'G': {  // BINFLOAT: big-endian IEEE double
        const std::string_view b = take(8);
        std::uint64_t bits = 0;
        for (char c : b) bits = (bits << 8) | static_cast<unsigned char>(c);
        Node* f = make(Kind::kFloat);
        std::memcpy(&f->f, &bits, sizeof bits);
        push(f);
        return;
      }
      case 'X': push(make_str(take(le(4)), "BINUNICODE")); return;
      case 0x8c: push(make_str(take(le(1)), "SHORT_BINUNICODE")); return;
      case 0x8d: push(make_str(take(le(8)), "BINUNICODE8")); return;
      case 'B': case 'C': case 0x8e: {  // BINBYTES, SHORT_BINBYTES, BINBYTES8
        const std::uint64_t n = le(op == 'C' ? 1 : op == 'B' ? 4 : 8);
        Node* b = make(Kind::kBytes);
        b->s = std::string(take(n));
        push(b);
        return;
      }
      case ')': push(make(Kind::kTuple)); return;
      case 't': push(make_tuple(pop_mark("TUPLE"))); return;
      case 0x85: case 0x86: case 0x87: {  // TUPLE1..3
        const std::size_t n = static_cast<std::size_t>(op - 0x84);
        std::vector<Node*> items(n);
        for (std::size_t k = n; k-- > 0;) items[k] = pop("TUPLEn");
        push(make_tuple(std::move(items)));
        return;
      }
      case ']': push(make(Kind::kList)); return;
      case 'l': {
        Node* l = make_tuple(pop_mark("LIST"));
        l->kind = Kind::kList;
        push(l);
        return;
      }
      case 'a': {
        Node* v = pop("APPEND");
        Node* l = expect(top("APPEND"), Kind::kList, "APPEND");
        adopt(l, v);
        l->items.push_back(v);
        return;
      }
      case 'e': {
        std::vector<Node*> vs = pop_mark("APPENDS");
        Node* l = expect(top("APPENDS"), Kind::kList, "APPENDS");
        for (Node* v : vs) adopt(l, v);
        l->items.insert(l->items.end(), vs.begin(), vs.end());
        return;
      }
      case '}': push(make(Kind::kDict)); return;
      case 'd': {
        std::vector<Node*> kv = pop_mark("DICT");
        Node* d = make(Kind::kDict);
        set_items(d, kv, "DICT");
        push(d);
        return;
      }
      case 's': {
        Node* v = pop("SETITEM");
        Node* k = pop("SETITEM");
        set_items(top("SETITEM"), {k, v}, "SETITEM");
        return;
      }
      case 'u': {
        std::vector<Node*> kv = pop_mark("SETITEMS");
        set_items(top("SETITEMS"), kv, "SETITEMS");
        return;
      }
      case 'q': memo_put(le(1)); return;      // BINPUT
      case 'r': memo_put(le(4)); return;      // LONG_BINPUT
      case 0x94: memo_put(memo_.size()); return;  // MEMOIZE
      case 'h': memo_get(le(1)); return;      // BINGET
      case 'j': memo_get(le(4)); return;      // LONG_BINGET
      case 'c': {  // GLOBAL "module\nname\n"
        const std::string_view module = line();
        const std::string_view name = line();
        global(module, name);
        return;
      }
      case 0x93: {  // STACK_GLOBAL
        Node* name = expect(pop("STACK_GLOBAL"), Kind::kStr, "STACK_GLOBAL");
        Node* module = expect(pop("STACK_GLOBAL"), Kind::kStr, "STACK_GLOBAL");
        global(module->s, name->s);
        return;
      }
      case 'Q': push(persistent_id(pop("BINPERSID"))); return;
      case 'R': {
        Node* args = expect(pop("REDUCE"), Kind::kTuple, "REDUCE");
        Node* fn = expect(pop("REDUCE"), Kind::kGlobal, "REDUCE");
        push(reduce(fn, args));
        return;
      }
      case 'b': {
        Node* state = pop("BUILD");
        build(top("BUILD"), state);
        return;
      }
      default: break;
    }
    fail(ErrorCode::kPickleUnsupportedOpcode,
         fmt::format("opcode 0x{:02x} ('{}') is not supported: it is not used by torch.save "
                     "state dicts", op, op >= 0x20 && op < 0x7f ? static_cast<char>(op) : '?'));
  }

  // ('storage', torch.FloatStorage, key, location, numel) → a storage reference.
  Node* persistent_id(Node* pid) {
    const auto& it = pid->items;
    if (pid->kind != Kind::kTuple || it.size() != 5 || it[0]->kind != Kind::kStr ||
        it[0]->s != "storage")
      fail(ErrorCode::kPickleInvalidCall,
           "BINPERSID: a persistent id must be ('storage', storage type, key, location, numel)");
    if (it[1]->kind != Kind::kGlobal || it[1]->s.rfind("torch.", 0) != 0 ||
        !storage_dtype(std::string_view(it[1]->s).substr(6)))
      fail(ErrorCode::kPickleInvalidCall, fmt::format("BINPERSID: the storage type must be a torch.*Storage class, got a {}", kind_name(it[1]->kind)));
    if (it[2]->kind != Kind::kStr || it[3]->kind != Kind::kStr || it[4]->kind != Kind::kInt || it[4]->i < 0)
      fail(ErrorCode::kPickleInvalidCall,
           "BINPERSID: the key and location must be strings and numel a non-negative int");
    Storage st;
    st.key = it[2]->s;
    st.dtype = *storage_dtype(std::string_view(it[1]->s).substr(6));
    st.location = it[3]->s;
    st.numel = static_cast<std::uint64_t>(it[4]->i);
    std::size_t index;
    if (auto found = storage_index_.find(st.key); found != storage_index_.end()) {
      index = found->second;
      const Storage& prev = out_.storages[index];
      if (prev.dtype != st.dtype || prev.numel != st.numel)
        fail(ErrorCode::kTorchBinStorageConflict,
             fmt::format("storage '{}' is declared as {} × {} and as {} × {}", st.key, prev.numel,
                         torch_name(prev.dtype), st.numel, torch_name(st.dtype)));
    } else {
      index = out_.storages.size();
      storage_index_.emplace(st.key, index);
      out_.storages.push_back(std::move(st));
    }
    Node* n = make(Kind::kStorage);
    n->i = static_cast<std::int64_t>(index);
    return n;
  }

  std::vector<std::int64_t> int_tuple(Node* n, const char* what) {
    if (n->kind != Kind::kTuple)
      fail(ErrorCode::kPickleInvalidCall, fmt::format("_rebuild_tensor_v2: {} must be a tuple of ints, got a {}", what, kind_name(n->kind)));
    if (n->items.size() > kMaxTensorRank)
      fail(ErrorCode::kPickleLimitExceeded, fmt::format("_rebuild_tensor_v2: {} has {} dimensions (at most {})", what, n->items.size(), kMaxTensorRank));
    std::vector<std::int64_t> out;
    for (Node* v : n->items) {
      if (v->kind != Kind::kInt || v->i < 0)
        fail(ErrorCode::kPickleInvalidCall, fmt::format("_rebuild_tensor_v2: {} must hold non-negative ints", what));
      out.push_back(v->i);
    }
    return out;
  }

  Node* reduce(Node* fn, Node* args) {
    const auto& a = args->items;
    std::string_view name = fn->s;
    const Callable c = *allowed_global(name.substr(0, name.rfind('.')), name.substr(name.rfind('.') + 1));
    switch (c) {
      case Callable::kOrderedDict: {
        if (!a.empty())
          fail(ErrorCode::kPickleInvalidCall, fmt::format("OrderedDict called with {} arguments; torch.save passes none", a.size()));
        Node* d = make(Kind::kDict);
        d->ordered = true;
        return d;
      }
      case Callable::kRebuildTensorV2: {
        if (a.size() != 6 && a.size() != 7)
          fail(ErrorCode::kPickleInvalidCall, fmt::format("_rebuild_tensor_v2 takes 6 or 7 arguments, got {}", a.size()));
        if (a[0]->kind != Kind::kStorage)
          fail(ErrorCode::kPickleInvalidCall, fmt::format("_rebuild_tensor_v2: the first argument must be a storage (a persistent id), got a {}", kind_name(a[0]->kind)));
        if (a[1]->kind != Kind::kInt || a[1]->i < 0)
          fail(ErrorCode::kPickleInvalidCall, "_rebuild_tensor_v2: storage_offset must be a non-negative int");
        if (a[4]->kind != Kind::kBool)
          fail(ErrorCode::kPickleInvalidCall, "_rebuild_tensor_v2: requires_grad must be a bool");
        if (a[5]->kind != Kind::kDict || !a[5]->pairs.empty())
          fail(ErrorCode::kPickleInvalidCall, "_rebuild_tensor_v2: backward_hooks must be an empty dict");
        TensorRecord t;
        const Storage& st = out_.storages[static_cast<std::size_t>(a[0]->i)];
        t.dtype = st.dtype;
        t.storage_key = st.key;
        t.storage_numel = st.numel;
        t.storage_offset = static_cast<std::uint64_t>(a[1]->i);
        t.shape = int_tuple(a[2], "size");
        t.stride = int_tuple(a[3], "stride");
        if (t.shape.size() != t.stride.size())
          fail(ErrorCode::kPickleInvalidCall, fmt::format("_rebuild_tensor_v2: size has {} dimensions, stride {}", t.shape.size(), t.stride.size()));
        t.requires_grad = a[4]->i != 0;
        Node* n = make(Kind::kTensor);
        n->i = static_cast<std::int64_t>(tensors_.size());
        tensors_.push_back(std::move(t));
        return n;
      }
      case Callable::kRebuildParameter:
      case Callable::kRebuildParameterWithState: {
        const std::size_t want = c == Callable::kRebuildParameter ? 3 : 4;
        if (a.size() != want || a[0]->kind != Kind::kTensor || a[1]->kind != Kind::kBool || a[2]->kind != Kind::kDict)
          fail(ErrorCode::kPickleInvalidCall, fmt::format("{} takes (tensor, requires_grad, backward_hooks{}), got {} arguments", name, want == 4 ? ", state" : "", a.size()));
        TensorRecord& t = tensors_[static_cast<std::size_t>(a[0]->i)];
        t.parameter = true;
        t.requires_grad = a[1]->i != 0;
        return a[0];
      }
      case Callable::kStorageType: break;
    }
    fail(ErrorCode::kPickleInvalidCall, fmt::format("{} cannot be called (it only names a storage type)", name));
  }

  // BUILD on a dict: torch.save's OrderedDict carries `_metadata` as instance state. It is
  // recorded by name and otherwise ignored (it only holds module versions).
  void build(Node* obj, Node* state) {
    if (obj->kind != Kind::kDict)
      fail(ErrorCode::kPickleInvalidOperand, fmt::format("BUILD on a {}; only a state dict takes state", kind_name(obj->kind)));
    std::vector<Node*> parts{state};
    if (state->kind == Kind::kTuple && state->items.size() == 2) parts = state->items;  // (dict, slots)
    for (Node* p : parts) {
      if (p->kind == Kind::kNone) continue;
      if (p->kind != Kind::kDict)
        fail(ErrorCode::kPickleInvalidOperand, fmt::format("BUILD state must be a dict or None, got a {}", kind_name(p->kind)));
      for (const auto& kv : p->pairs) {
        if (kv.first->kind != Kind::kStr)
          fail(ErrorCode::kPickleInvalidOperand, "BUILD: attribute names must be strings");
        obj->attributes.push_back(kv.first->s);
      }
    }
  }

  StateDict finish() {
    if (stack_.size() != 1 || !marks_.empty())
      fail(ErrorCode::kPickleInvalidResult,
           fmt::format("STOP with {} values on the stack and {} open MARKs; a state dict pickle "
                       "leaves exactly one value", stack_.size(), marks_.size()));
    if (pos_ != data_.size())
      fail(ErrorCode::kPickleInvalidResult, fmt::format("{} bytes follow STOP", data_.size() - pos_));
    const Node* d = stack_.back();
    if (d->kind != Kind::kDict)
      fail(ErrorCode::kPickleInvalidResult,
           fmt::format("the pickle holds a {}, not a state dict (a dict of name → tensor)", kind_name(d->kind)));
    out_.ordered_dict = d->ordered;
    out_.attributes = d->attributes;
    out_.protocol = protocol_;
    std::unordered_set<std::string_view> names;
    for (const auto& [k, v] : d->pairs) {
      if (k->kind != Kind::kStr)
        fail(ErrorCode::kPickleInvalidResult, fmt::format("a state dict key is a {}, not a str", kind_name(k->kind)));
      if (v->kind != Kind::kTensor)
        fail(ErrorCode::kPickleInvalidResult,
             fmt::format("state dict entry '{}' is a {}, not a tensor", k->s, kind_name(v->kind)));
      if (!names.insert(k->s).second)
        fail(ErrorCode::kPickleDuplicateName, fmt::format("the state dict sets '{}' twice", k->s));
      TensorRecord t = tensors_[static_cast<std::size_t>(v->i)];
      t.name = k->s;
      out_.tensors.push_back(std::move(t));
    }
    return std::move(out_);
  }

  std::string_view data_;
  std::string_view source_;
  std::size_t pos_ = 0;
  std::size_t op_at_ = 0;
  int protocol_ = 0;
  std::deque<Node> arena_;
  std::vector<Node*> stack_;
  std::vector<std::size_t> marks_;
  std::unordered_map<std::uint64_t, Node*> memo_;
  std::unordered_map<std::string, std::size_t> storage_index_;
  std::vector<TensorRecord> tensors_;  // every tensor built, by node index
  StateDict out_;
};

}  // namespace

std::optional<DType> storage_dtype(std::string_view class_name) {
  for (const auto& s : kStorageClasses)
    if (class_name == s.name) return s.dtype;
  return std::nullopt;
}

Result<StateDict> load_state_dict(std::string_view pickle, std::string_view source) {
  return capture([&] { return Machine(pickle, source).run(); });
}

}  // namespace memfit::torch_pickle
