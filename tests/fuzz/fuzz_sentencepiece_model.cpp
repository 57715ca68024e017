// libFuzzer target: a SentencePiece tokenizer.model (ModelProto wire format), and the
// precompiled_charsmap it carries.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "memfit/tokenizer/precompiled_charsmap.h"
#include "memfit/tokenizer/sentencepiece_model.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const auto model = memfit::tokenizer::SentencePieceModel::parse(bytes);
  if (model.ok() && !model->precompiled_charsmap.empty())
    (void)memfit::tokenizer::PrecompiledCharsmap::parse(model->precompiled_charsmap);
  return 0;
}
