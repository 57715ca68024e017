// tests/support/sentencepiece_models.h — tiny SentencePiece models trained at test time by
// libsentencepiece itself (no model can be downloaded here), from a corpus the test writes, and
// random text to encode with them. Each model is trained once per process (num_threads=1).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace memfit::test {

struct SpmTraining {
  std::string name;   // also the file stem: <dir>/<name>.model
  std::string flags;  // spm_train flags beyond input/model_prefix, e.g. "--model_type=bpe --byte_fallback=true"
};

// The trainings the tests use: Unigram and BPE, byte fallback on and off, nmt_nfkc and identity
// normalization, with and without whitespace cleanup and the dummy prefix.
const std::vector<SpmTraining>& spm_trainings();

// The path of the trained <name>.model (trains it on first use; a failed training fails the test).
std::string spm_model(const SpmTraining& training);

// Deterministic random text: words of the corpus and others, accented and compatibility
// characters (ligatures, full-width, math letters), CJK, emoji, combining marks, whitespace runs.
std::string spm_random_text(std::uint32_t& state);

}  // namespace memfit::test
