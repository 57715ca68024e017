// A SentencePiece tokenizer.model read by core (memfit/tokenizer/sentencepiece_model.h) and
// converted to core's pipeline, held to libsentencepiece itself: models trained here by
// libsentencepiece (Unigram and BPE, byte fallback on and off, nmt_nfkc and identity rules), the
// same random texts encoded by SentencePieceProcessor and by memfit, ids exactly equal; decode
// equal to DecodeIds. Also load_tokenizer's order and `memfit tokenize` on a .model, and the
// reader's errors on broken protos.
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <sentencepiece_processor.h>

#include "load_tokenizer.h"
#include "native_text_backend.h"
#include "memfit/tokenizer/sentencepiece_model.h"
#include "support/reference.h"
#include "support/run_process.h"
#include "support/scratch_files.h"
#include "support/sentencepiece_models.h"

namespace {

using memfit::ErrorCode;
using memfit::tokenizer::SentencePieceModel;
using memfit::tokenizer::TokenId;
using memfit::tokenizer::Tokenizer;

std::vector<TokenId> as_ids(const std::vector<int>& v) { return {v.begin(), v.end()}; }

TEST_CASE("tokenizer.model: memfit encodes and decodes as libsentencepiece on random text") {
  int compared = 0;
  for (const memfit::test::SpmTraining& training : memfit::test::spm_trainings()) {
    CAPTURE(training.name);
    const std::string path = memfit::test::spm_model(training);
    sentencepiece::SentencePieceProcessor sp;
    REQUIRE(sp.Load(path).ok());
    const Tokenizer tok = memfit::text::load_tokenizer(path);
    std::uint32_t state = 17;
    for (int i = 0; i < 400; ++i) {
      const std::string text = memfit::test::spm_random_text(state);
      CAPTURE(text);
      const std::vector<int> expected = sp.EncodeAsIds(text);
      const auto ours = tok.encode(text, false);
      REQUIRE(ours.ok());
      CHECK(ours->ids == as_ids(expected));
      // LlamaTokenizer's add_bos_token: the bos piece before the text
      const auto with_bos = tok.encode(text, true);
      REQUIRE(with_bos.ok());
      std::vector<TokenId> bos_first{static_cast<TokenId>(sp.bos_id())};
      bos_first.insert(bos_first.end(), expected.begin(), expected.end());
      CHECK(with_bos->ids == bos_first);
      // sentencepiece decodes <unk> as " ⁇ ", transformers as its piece: compare texts without one
      bool has_unk = false;
      for (const int id : expected) has_unk = has_unk || sp.IsUnknown(id);
      if (!has_unk) {
        const auto decoded = tok.decode(as_ids(expected), true);
        REQUIRE(decoded.ok());
        CHECK(*decoded == sp.DecodeIds(expected));
      }
      ++compared;
    }
  }
  CHECK(compared == 400 * static_cast<int>(memfit::test::spm_trainings().size()));
}

TEST_CASE("tokenizer.model: pieces, scores and types as libsentencepiece reads them") {
  for (const memfit::test::SpmTraining& training : memfit::test::spm_trainings()) {
    CAPTURE(training.name);
    const std::string path = memfit::test::spm_model(training);
    sentencepiece::SentencePieceProcessor sp;
    REQUIRE(sp.Load(path).ok());
    const auto m = SentencePieceModel::parse(memfit::test::read_text(path));
    REQUIRE(m.ok());
    REQUIRE(m->pieces.size() == static_cast<std::size_t>(sp.GetPieceSize()));
    for (int id = 0; id < sp.GetPieceSize(); ++id) {
      const SentencePieceModel::Piece& p = m->pieces[static_cast<std::size_t>(id)];
      CHECK(p.piece == sp.IdToPiece(id));
      CHECK(p.score == sp.GetScore(id));
      CHECK((p.type == SentencePieceModel::PieceType::kControl) == sp.IsControl(id));
      CHECK((p.type == SentencePieceModel::PieceType::kUnknown) == sp.IsUnknown(id));
      CHECK((p.type == SentencePieceModel::PieceType::kByte) == sp.IsByte(id));
    }
    CHECK(m->unk_id == sp.unk_id());
    CHECK(m->bos_id == sp.bos_id());
    CHECK(m->eos_id == sp.eos_id());
    CHECK(m->pad_id == sp.pad_id());
  }
}

TEST_CASE("tokenizer.model: load order and `memfit tokenize` on a model folder and a .model file") {
  const std::string path = memfit::test::spm_model(memfit::test::spm_trainings().at(4));  // bpe-llama
  sentencepiece::SentencePieceProcessor sp;
  REQUIRE(sp.Load(path).ok());
  const std::string dir = memfit::test::scratch_dir("spm-dir");
  memfit::test::write_file(dir + "/tokenizer.model", memfit::test::read_text(path));
  const std::string text = "Hello world, naïve café 👍🏽";
  std::vector<int> ids = sp.EncodeAsIds(text);
  ids.insert(ids.begin(), sp.bos_id());
  std::string expected = "[";
  for (std::size_t i = 0; i < ids.size(); ++i) expected += (i ? "," : "") + std::to_string(ids[i]);
  expected += "]";
  for (const std::string& where : {dir, dir + "/tokenizer.model"}) {
    CAPTURE(where);
    const auto r = memfit::test::run_memfit({"tokenize", where, "--text", text, "--json"});
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("\"ids\":" + expected) != std::string::npos);
  }
  // tokenizer_config.json beside it decides the special tokens (T5: eos after, no bos)
  memfit::test::write_file(dir + "/tokenizer_config.json", R"({"tokenizer_class": "T5Tokenizer"})");
  const Tokenizer t5 = memfit::text::load_tokenizer(dir);
  std::vector<TokenId> eos_last = as_ids(sp.EncodeAsIds(text));
  eos_last.push_back(static_cast<TokenId>(sp.eos_id()));
  CHECK(t5.encode(text, true)->ids == eos_last);
  memfit::test::write_file(dir + "/tokenizer_config.json", R"({"add_bos_token": false, "add_eos_token": false})");
  CHECK(memfit::text::load_tokenizer(dir).encode(text, true)->ids == as_ids(sp.EncodeAsIds(text)));
  // a class whose converter moves the pieces (XLM-R's fairseq offset) is refused, not mis-encoded
  const auto xlmr = Tokenizer::from_sentencepiece(memfit::test::read_text(path), R"({"tokenizer_class": "XLMRobertaTokenizer"})",
                                                  memfit::text::native_text_backend());
  REQUIRE_FALSE(xlmr.ok());
  CHECK((xlmr.error().code() == ErrorCode::kSentencePieceUnsupported));
  CHECK(xlmr.error().message().find("tokenizer_class 'XLMRobertaTokenizer' rearranges the model's pieces") != std::string::npos);
  // tokenizer.json wins over tokenizer.model
  memfit::test::write_file(dir + "/tokenizer.json", R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}})");
  CHECK(memfit::text::load_tokenizer(dir).vocab_size() == 1);
}

ErrorCode parse_error(const std::string& bytes, std::string* message = nullptr) {
  const auto r = SentencePieceModel::parse(bytes);
  REQUIRE_FALSE(r.ok());
  if (message) *message = r.error().message();
  return r.error().code();
}

TEST_CASE("tokenizer.model: broken protos are named, never a crash") {
  std::string message;
  // pieces (field 1, length-delimited) announcing 5 bytes with 1 present
  CHECK((parse_error(std::string("\x0a\x05\x0a", 3), &message) == ErrorCode::kSentencePieceTruncated));
  CHECK(message == "ModelProto: field 1 announces 5 bytes, 1 remain");
  // an unknown field's varint cut short
  CHECK((parse_error(std::string("\xa0\x01\x80", 3), &message) == ErrorCode::kSentencePieceTruncated));
  CHECK(message == "ModelProto: a skipped value (a varint) runs past the end");
  // a piece's score (fixed32) with 2 of its 4 bytes
  CHECK((parse_error(std::string("\x0a\x03\x15\x00\x00", 5), &message) == ErrorCode::kSentencePieceTruncated));
  CHECK(message == "pieces[0]: field 2 (4 bytes) runs past the end");
  // pieces sent as a varint
  CHECK((parse_error(std::string("\x08\x01", 2), &message) == ErrorCode::kSentencePieceMalformed));
  CHECK(message == "ModelProto: pieces (field 1) has wire type 0, expected 2");
  // a piece type outside the enum
  CHECK((parse_error(std::string("\x0a\x02\x18\x09", 4), &message) == ErrorCode::kSentencePieceMalformed));
  CHECK(message == "pieces[0]: type 9 is not a SentencePiece.Type (1..6)");
  // wire type 3 (a group start) and field number 0
  CHECK((parse_error(std::string("\x0b", 1)) == ErrorCode::kSentencePieceMalformed));
  CHECK((parse_error(std::string("\x00\x00", 2)) == ErrorCode::kSentencePieceMalformed));
  // model_type 3 (WORD) parses, and is refused by the converter with its own code
  const std::string word_model = std::string("\x0a\x07\x0a\x05<unk>", 9) + std::string("\x12\x02\x18\x03", 4);
  REQUIRE(SentencePieceModel::parse(word_model).ok());
  const auto tok = Tokenizer::from_sentencepiece(word_model, "", nullptr);
  REQUIRE_FALSE(tok.ok());
  CHECK((tok.error().code() == ErrorCode::kSentencePieceUnsupported));
  CHECK(tok.error().message() == "tokenizer.model: trainer_spec.model_type 3 (only Unigram (1) and BPE (2) models can be converted)");
  // no pieces at all (an empty file)
  CHECK((Tokenizer::from_sentencepiece("", "", nullptr).error().code() == ErrorCode::kSentencePieceUnsupported));
  // a file that is not a proto: the CLI names it and exits with the invalid-input code
  const std::string dir = memfit::test::scratch_dir("spm-bad");
  memfit::test::write_file(dir + "/tokenizer.model", "not a model\n");
  const auto r = memfit::test::run_memfit({"tokenize", dir, "--text", "x"});
  CHECK(r.exit_code != 0);
  CHECK(r.err.find(dir + "/tokenizer.model: ") != std::string::npos);
}

}  // namespace
