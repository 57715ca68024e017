// The restricted unpickler (memfit/format/torch_pickle.h): the golden torch.save pickle, the
// protocol 2–5 opcodes it accepts, and one hostile byte literal per error code.
#include <doctest/doctest.h>

#include <string>

#include "memfit/format/torch_pickle.h"
#include "memfit/format/zip_archive.h"
#include "support/reference.h"
#include "support/torch_bin_builder.h"

using memfit::DType;
using memfit::ErrorCode;
using memfit::test::PickledTensor;
using memfit::test::tensor;
using memfit::test::state_dict_pickle;
namespace tp = memfit::torch_pickle;

namespace {

std::string bytes(const char* s, std::size_t n) { return std::string(s, n); }
#define PKL(lit) bytes(lit, sizeof(lit) - 1)

void check_error(const std::string& pickle, ErrorCode code, const std::string& fragment) {
  const auto r = tp::load_state_dict(pickle, "t.pkl");
  REQUIRE_FALSE(r.ok());
  CHECK_MESSAGE(r.error().code() == code, r.error().message());
  CHECK_MESSAGE(r.error().message().find(fragment) != std::string::npos, r.error().message());
}

}  // namespace

TEST_CASE("torch_pickle: the golden torch.save OrderedDict with _metadata and a tied storage") {
  const auto ref = memfit::test::reference_dir();
  if (!ref) return memfit::test::skip_loudly("torch_pickle: golden tiny-gpt2 data.pkl");
  const std::string file = memfit::test::read_text(*ref + "/golden/tiny-gpt2/bin/pytorch_model.bin");
  const auto src = memfit::zip::memory_source(file, "pytorch_model.bin");
  const auto archive = memfit::zip::read_archive(src);
  REQUIRE(archive.ok());
  const auto pkl = memfit::zip::read_entry(src, *archive, *archive->find("pytorch_model/data.pkl"), 1 << 20);
  REQUIRE(pkl.ok());
  const auto r = tp::load_state_dict(*pkl, "data.pkl");
  REQUIRE_MESSAGE(r.ok(), r.error().message());
  // golden README: an OrderedDict, BUILD sets _metadata, protocol 2, 53 keys over 52 storages
  CHECK(r->ordered_dict);
  CHECK(r->attributes == std::vector<std::string>{"_metadata"});
  CHECK(r->protocol == 2);
  REQUIRE(r->tensors.size() == 53);
  CHECK(r->storages.size() == 52);
  // module order: wte, wpe, h.{i}.{ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj}, ln_f, lm_head
  std::vector<std::string> expected{"transformer.wte.weight", "transformer.wpe.weight"};
  for (int i = 0; i < 4; ++i)
    for (const char* leaf : {"ln_1.weight", "ln_1.bias", "attn.c_attn.weight", "attn.c_attn.bias",
                             "attn.c_proj.weight", "attn.c_proj.bias", "ln_2.weight", "ln_2.bias",
                             "mlp.c_fc.weight", "mlp.c_fc.bias", "mlp.c_proj.weight", "mlp.c_proj.bias"})
      expected.push_back("transformer.h." + std::to_string(i) + "." + leaf);
  for (const char* n : {"transformer.ln_f.weight", "transformer.ln_f.bias", "lm_head.weight"})
    expected.emplace_back(n);
  for (std::size_t i = 0; i < expected.size(); ++i) CHECK(r->tensors[i].name == expected[i]);
  const auto& wte = r->tensors.front();
  const auto& lm_head = r->tensors.back();
  CHECK(wte.shape == memfit::Shape{1000, 64});
  CHECK(wte.stride == std::vector<std::int64_t>{64, 1});
  CHECK(wte.dtype == DType::kF32);
  CHECK(wte.storage_key == "0");
  CHECK(lm_head.storage_key == "0");  // tied: golden README
  CHECK(lm_head.shape == wte.shape);
  CHECK(r->tensors[4].name == "transformer.h.0.attn.c_attn.weight");
  CHECK(r->tensors[4].shape == memfit::Shape{64, 192});  // Conv1D: [in, out]
  for (const auto& t : r->tensors) CHECK(t.storage_offset == 0);
}

TEST_CASE("torch_pickle: protocol 2-5 opcodes a state dict may use") {
  // protocol 4: FRAME, SHORT_BINUNICODE, STACK_GLOBAL, MEMOIZE, LONG1, NEWTRUE, a plain dict.
  std::string q = PKL("\x80\x04\x95\x00\x00\x00\x00\x00\x00\x00\x00}\x94(\x8c\x01w\x94");
  q += PKL("\x8c\x0ctorch._utils\x8c\x12_rebuild_tensor_v2\x93\x94((");
  q += PKL("\x8c\x07storage\x8c\x05torch\x8c\x0f" "BFloat16Storage\x93\x8c\x01k\x8c\x03" "cpu\x8a\x01\x06t\x94Q");
  q += PKL("K\x00K\x02K\x03\x86K\x03K\x01\x86\x88}t\x94R\x94");
  const auto r = tp::load_state_dict(q + "u.", "t.pkl");
  REQUIRE_MESSAGE(r.ok(), r.error().message());
  REQUIRE(r->tensors.size() == 1);
  CHECK_FALSE(r->ordered_dict);
  CHECK(r->protocol == 4);
  const auto& t = r->tensors[0];
  CHECK(t.name == "w");
  CHECK(t.dtype == DType::kBF16);
  CHECK(t.shape == memfit::Shape{2, 3});
  CHECK(t.stride == std::vector<std::int64_t>{3, 1});
  CHECK(t.storage_numel == 6);
  CHECK(t.requires_grad);
  // EMPTY_LIST/APPENDS, BININT, LONG1, BINFLOAT, SHORT_BINBYTES, NONE, TUPLE3 are read too; a
  // list is not a tensor, so the state dict is then refused for that entry (by name).
  std::string p = q + PKL("\x8c\x02xs]\x94(J\xff\xff\xff\xff\x8a\x02\x00\x01G?\xf0\x00\x00\x00\x00\x00\x00" "C\x02hiN\x87" "e");
  check_error(p + "u.", ErrorCode::kPickleInvalidResult, "'xs' is a list");
}

TEST_CASE("torch_pickle: _rebuild_parameter wraps a tensor; storages are shared by key") {
  std::string p = state_dict_pickle({tensor("a", "0", 6, {2, 3}, {3, 1}), tensor("b", "0", 6, {3}, {1}, 3)});
  auto r = tp::load_state_dict(p, "t.pkl");
  REQUIRE_MESSAGE(r.ok(), r.error().message());
  CHECK(r->storages.size() == 1);
  CHECK(r->tensors[1].storage_offset == 3);
  // _rebuild_parameter(tensor, True, OrderedDict()) around the second tensor
  const std::string rebuild = "ctorch._utils\n_rebuild_tensor_v2\n";
  std::string q = state_dict_pickle({tensor("p", "0", 4, {4}, {1})});
  const std::size_t at = q.find(rebuild);
  q.insert(at, "ctorch._utils\n_rebuild_parameter\n(");
  const std::size_t end = q.rfind("tR") + 2;  // the rebuild_tensor_v2 REDUCE
  q.insert(end, PKL("\x88") + "ccollections\nOrderedDict\n)RtR");
  r = tp::load_state_dict(q, "t.pkl");
  REQUIRE_MESSAGE(r.ok(), r.error().message());
  CHECK(r->tensors[0].parameter);
  CHECK(r->tensors[0].requires_grad);
}

TEST_CASE("torch_pickle: forbidden globals are refused by name before anything is built") {
  check_error(PKL("\x80\x02" "cos\nsystem\n(X\x02\x00\x00\x00lstR."), ErrorCode::kPickleForbiddenGlobal,
              "the global 'os.system' is not allowed");
  check_error(PKL("\x80\x04\x8c\x08" "builtins\x8c\x04" "eval\x93."), ErrorCode::kPickleForbiddenGlobal,
              "'builtins.eval'");
  check_error(PKL("\x80\x02" "c__builtin__\ngetattr\n."), ErrorCode::kPickleForbiddenGlobal,
              "'__builtin__.getattr'");
  // A lookalike module name is not the allowed one.
  check_error(PKL("\x80\x02" "ctorch._utils_evil\n_rebuild_tensor_v2\n."), ErrorCode::kPickleForbiddenGlobal,
              "torch._utils_evil");
  check_error(PKL("\x80\x02" "ctorch\nload\n."), ErrorCode::kPickleForbiddenGlobal, "'torch.load'");
  // refused at the GLOBAL opcode itself (byte 2), i.e. before the REDUCE that would call it
  check_error(PKL("\x80\x02" "cposix\nsystem\nX\x02\x00\x00\x00idR."), ErrorCode::kPickleForbiddenGlobal,
              "at byte 2");
}

TEST_CASE("torch_pickle: hostile pickles, one error code each") {
  check_error(PKL("\x80\x02}X\x01\x00\x00\x00" "a"), ErrorCode::kPickleTruncated, "no STOP");
  check_error(PKL("\x80\x02X\xff\xff\xff\xff" "abc."), ErrorCode::kPickleTruncated, "4294967295 more bytes");
  check_error(PKL("\x80\x02\x8d\xff\xff\xff\xff\xff\xff\xff\x7f."), ErrorCode::kPickleTruncated, "more bytes needed");
  check_error(PKL("\x80\x02\x95\xff\xff\xff\xff\x00\x00\x00\x00}."), ErrorCode::kPickleTruncated, "FRAME");
  check_error(PKL("\x80\x06}."), ErrorCode::kPickleUnsupportedProtocol, "protocol 6");
  check_error(PKL("\x80\x02(i__main__\nX\n."), ErrorCode::kPickleUnsupportedOpcode, "0x69 ('i')");
  check_error(PKL("\x80\x02}s."), ErrorCode::kPickleStackUnderflow, "SETITEM needs a value");
  check_error(PKL("\x80\x02}(0."), ErrorCode::kPickleStackUnderflow, "above the MARK");
  check_error(PKL("\x80\x02}t."), ErrorCode::kPickleMissingMark, "TUPLE needs a MARK");
  check_error(PKL("\x80\x02h\x05."), ErrorCode::kPickleMemoMissing, "memo key 5");
  check_error(PKL("\x80\x02j\x00\x00\x00\x01."), ErrorCode::kPickleMemoMissing, "memo key 16777216");
  check_error(PKL("\x80\x02\x8a\x09\x01\x02\x03\x04\x05\x06\x07\x08\x09."), ErrorCode::kPickleLimitExceeded,
              "9 bytes");
  check_error(PKL("\x80\x02K\x01K\x02K\x03s."), ErrorCode::kPickleInvalidOperand, "SETITEM needs a dict, got a int");
  check_error(PKL("\x80\x02X\x02\x00\x00\x00\xc3\x28."), ErrorCode::kPickleInvalidOperand, "UTF-8");
  check_error(PKL("\x80\x02K\x01."), ErrorCode::kPickleInvalidResult, "holds a int, not a state dict");
  check_error(PKL("\x80\x02}K\x01."), ErrorCode::kPickleInvalidResult, "2 values on the stack");
  check_error(PKL("\x80\x02}.junk"), ErrorCode::kPickleInvalidResult, "4 bytes follow STOP");
  check_error(PKL("\x80\x02}X\x01\x00\x00\x00" "aK\x01s."), ErrorCode::kPickleInvalidResult,
              "entry 'a' is a int, not a tensor");
  check_error(PKL("\x80\x02" "ccollections\nOrderedDict\nK\x01\x85R."), ErrorCode::kPickleInvalidCall,
              "OrderedDict called with 1 arguments");
  check_error(PKL("\x80\x02" "ctorch\nFloatStorage\n)R."), ErrorCode::kPickleInvalidCall, "cannot be called");
  check_error(PKL("\x80\x02(X\x03\x00\x00\x00" "abcK\x01K\x02K\x03K\x04t" "Q."), ErrorCode::kPickleInvalidCall,
              "persistent id");

  SUBCASE("deeply nested") {
    std::string p = PKL("\x80\x02)");
    for (int i = 0; i < 300; ++i) p += "\x85";
    p += ".";
    check_error(p, ErrorCode::kPickleLimitExceeded, "nested deeper than 256");
  }
  SUBCASE("a list appended to itself (a cycle) is bounded too") {
    std::string p = PKL("\x80\x02]q\x00");
    for (int i = 0; i < 300; ++i) p += PKL("h\x00" "a");
    p += ".";
    check_error(p, ErrorCode::kPickleLimitExceeded, "nested deeper");
  }
  SUBCASE("stack depth") {
    std::string p = PKL("\x80\x02");
    p.append(tp::kMaxStackDepth + 1, 'N');
    p += ".";
    check_error(p, ErrorCode::kPickleLimitExceeded, "stack is deeper");
  }
  SUBCASE("duplicate name") {
    check_error(state_dict_pickle({tensor("a", "0", 4, {4}, {1}), tensor("a", "1", 4, {4}, {1})}),
                ErrorCode::kPickleDuplicateName, "'a' twice");
  }
  SUBCASE("one storage, two sizes") {
    check_error(state_dict_pickle({tensor("a", "0", 4, {4}, {1}), tensor("b", "0", 8, {4}, {1})}),
                ErrorCode::kTorchBinStorageConflict, "storage '0' is declared as 4 × float32 and as 8 × float32");
  }
  SUBCASE("size and stride of different rank") {
    check_error(state_dict_pickle({tensor("a", "0", 4, {4}, {1, 1})}), ErrorCode::kPickleInvalidCall,
                "size has 1 dimensions, stride 2");
  }
  SUBCASE("unknown storage class") {
    auto t = tensor("a", "0", 4, {4}, {1});
    t.storage_class = "ComplexFloatStorage";
    check_error(state_dict_pickle({t}), ErrorCode::kTorchBinUnsupportedDtype, "torch.ComplexFloatStorage is a storage type");
    t.storage_class = "EvilStorage";
    check_error(state_dict_pickle({t}), ErrorCode::kPickleForbiddenGlobal, "'torch.EvilStorage'");
  }
}
