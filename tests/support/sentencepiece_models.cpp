#include "support/sentencepiece_models.h"

#include <map>
#include <mutex>

#include <doctest/doctest.h>
#include <sentencepiece_trainer.h>

#include "memfit/utf8.h"
#include "support/scratch_files.h"

namespace memfit::test {
namespace {

const char* const kWords[] = {
    "the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "tokenizer", "model", "memory", "layer",
    "naïve", "café", "straße", "Ångström", "résumé", "ﬁne", "ﬂow", "Ｆｕｌｌ", "ｗｉｄｔｈ", "①", "x²", "𝔾𝕠𝕠𝕕",
    "e\u0301", "n\u0303o", "你好", "世界", "こんにちは", "안녕하세요", "Привет", "мир", "مرحبا", "नमस्ते",
    "ड़ी", "दुख", "เขาไม่ได้พูดสักคำ", "\u0627\u0653", "👍🏽", "👨‍👩‍👧", "🤗", "123", "2024", "3.14", "don't",
    "Hello", "HELLO", "world!", "(test)", "a-b", "foo_bar", "\u2122", "\u00bd", "\u200d", "\u3000",
};
const char* const kSpaces[] = {" ", " ", " ", "  ", "   ", "\t", "\n", " \n ", "\u00a0"};

std::uint32_t next(std::uint32_t& s) {
  s = s * 1664525u + 1013904223u;
  return s >> 8;
}

std::string corpus() {
  std::uint32_t s = 7;
  std::string out;
  for (int line = 0; line < 3000; ++line) {
    const int n = 3 + static_cast<int>(next(s) % 10);
    for (int w = 0; w < n; ++w) {
      // Skewed towards the first (ASCII) words, so rare characters stay out of small vocabularies.
      const std::size_t count = sizeof kWords / sizeof *kWords;
      const std::size_t i = next(s) % 4 == 0 ? next(s) % count : next(s) % 16;
      out += (w ? " " : "") + std::string(kWords[i]);
    }
    out += '\n';
  }
  return out;
}

}  // namespace

const std::vector<SpmTraining>& spm_trainings() {
  static const std::vector<SpmTraining> all = {
      {"unigram-nfkc", "--model_type=unigram --vocab_size=400"},
      {"unigram-nfkc-bytes", "--model_type=unigram --vocab_size=500 --byte_fallback=true"},
      {"unigram-identity", "--model_type=unigram --vocab_size=400 --normalization_rule_name=identity"},
      {"bpe-nfkc", "--model_type=bpe --vocab_size=400"},
      {"bpe-llama", "--model_type=bpe --vocab_size=500 --byte_fallback=true --normalization_rule_name=identity "
                    "--remove_extra_whitespaces=false --split_digits=true"},
      {"bpe-identity-no-prefix", "--model_type=bpe --vocab_size=400 --normalization_rule_name=identity --add_dummy_prefix=false"},
  };
  return all;
}

std::string spm_model(const SpmTraining& training) {
  static std::mutex mutex;
  static std::map<std::string, std::string> trained;
  static const std::string dir = scratch_dir("spm");
  const std::lock_guard<std::mutex> lock(mutex);
  if (const auto it = trained.find(training.name); it != trained.end()) return it->second;
  const std::string input = dir + "/corpus.txt";
  static const bool written = (write_file(input, corpus()), true);
  (void)written;
  const std::string prefix = dir + "/" + training.name;
  const auto status = sentencepiece::SentencePieceTrainer::Train(
      "--input=" + input + " --model_prefix=" + prefix + " --num_threads=1 --minloglevel=2 --hard_vocab_limit=false --character_coverage=0.98 " +
      training.flags);
  REQUIRE_MESSAGE(status.ok(), training.name << ": " << status.ToString());
  return trained[training.name] = prefix + ".model";
}

std::string spm_random_text(std::uint32_t& s) {
  std::string out;
  const int n = 1 + static_cast<int>(next(s) % 10);
  const std::size_t words = sizeof kWords / sizeof *kWords, spaces = sizeof kSpaces / sizeof *kSpaces;
  for (int i = 0; i < n; ++i) {
    const std::uint32_t r = next(s) % 10;
    if (r < 5) {
      out += kWords[next(s) % words];
    } else if (r < 7) {
      out += kSpaces[next(s) % spaces];
    } else {
      // Code points from long-assigned blocks (the two Unicode libraries may differ on newer ones).
      static const std::uint32_t kRanges[][2] = {{0x21, 0x7e}, {0xa1, 0x24f}, {0x300, 0x36f}, {0x391, 0x3c9}, {0x410, 0x44f},
                                                 {0x3041, 0x3096}, {0x4e00, 0x4fff}, {0xff01, 0xff5e}, {0x1d400, 0x1d454}};
      const int len = 1 + static_cast<int>(next(s) % 5);
      for (int k = 0; k < len; ++k) {
        const auto& range = kRanges[next(s) % (sizeof kRanges / sizeof *kRanges)];
        memfit::append_utf8(out, range[0] + next(s) % (range[1] - range[0] + 1));
      }
    }
    if (next(s) % 2) out += ' ';
  }
  return out;
}

}  // namespace memfit::test
