// Sampling (memfit/generate/sampling.h) and stopping (memfit/generate/stopping.h). The expected
// values are worked by hand from transformers' definitions in generation/logits_process.py
// (the derivation is in each comment), not taken from memfit's output.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "memfit/generate/sampling.h"
#include "memfit/generate/stopping.h"

using namespace memfit::generate;
using memfit::ErrorCode;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Which entries a warper left finite.
std::vector<int> kept(const std::vector<float>& logits) {
  std::vector<int> out;
  for (std::size_t i = 0; i < logits.size(); ++i)
    if (!std::isinf(logits[i])) out.push_back(static_cast<int>(i));
  return out;
}

}  // namespace

TEST_CASE("sampling: repetition penalty as RepetitionPenaltyLogitsProcessor") {
  // score = gather(scores, ids); where(score < 0, score * penalty, score / penalty); scatter back.
  // Penalty 2 over ids {0, 1, 1, 3}: 2.0 → 1.0 (divided), -1.0 → -2.0 (multiplied, once although
  // id 1 appears twice: gather/scatter writes the same value twice), 0.5 untouched (id 2 unseen),
  // 0.0 → 0.0 / 2 = 0.0; an id outside the row is ignored.
  std::vector<float> logits{2.0f, -1.0f, 0.5f, 0.0f};
  apply_repetition_penalty(logits, {0, 1, 1, 3, 99}, 2.0);
  CHECK(logits == std::vector<float>{1.0f, -2.0f, 0.5f, 0.0f});
  // A penalty below 1 rewards instead: 2.0 / 0.5 = 4.0, -1.0 * 0.5 = -0.5.
  std::vector<float> reward{2.0f, -1.0f};
  apply_repetition_penalty(reward, {0, 1}, 0.5);
  CHECK(reward == std::vector<float>{4.0f, -0.5f});
}

TEST_CASE("sampling: temperature as TemperatureLogitsWarper") {
  // scores / temperature: [1, -2, 0.5] / 0.5 = [2, -4, 1].
  std::vector<float> logits{1.0f, -2.0f, 0.5f};
  apply_temperature(logits, 0.5);
  CHECK(logits == std::vector<float>{2.0f, -4.0f, 1.0f});
}

TEST_CASE("sampling: top-k as TopKLogitsWarper, ties at the k-th value kept") {
  // indices_to_remove = scores < topk(scores, k)[0][..., -1]. [1, 3, 2, 2] with k = 2: sorted
  // descending 3, 2, 2, 1, the 2nd is 2, so only 1 (index 0) is below it: three tokens stay.
  std::vector<float> logits{1.0f, 3.0f, 2.0f, 2.0f};
  apply_top_k(logits, 2);
  CHECK(kept(logits) == std::vector<int>{1, 2, 3});
  // k = 1 on [1, 3, 2, 2]: the 1st is 3, everything else goes.
  std::vector<float> one{1.0f, 3.0f, 2.0f, 2.0f};
  apply_top_k(one, 1);
  CHECK(kept(one) == std::vector<int>{1});
  // k larger than the row: min(k, vocab) = the whole row, nothing removed.
  std::vector<float> all{1.0f, 3.0f};
  apply_top_k(all, 10);
  CHECK(kept(all) == std::vector<int>{0, 1});
}

TEST_CASE("sampling: top-p as TopPLogitsWarper") {
  // Sorted ascending, softmax, cumsum; remove where cumsum <= 1 - top_p; keep the last
  // min_tokens_to_keep (= 1) in any case.
  SUBCASE("four equal logits: probabilities exactly 1/4, cumsum 0.25 0.5 0.75 1") {
    // top_p = 0.5: 1 - 0.5 = 0.5, so cumsum 0.25 and 0.5 are removed (<=, the boundary goes): the
    // first two in ascending order, which for equal logits is index order: 0 and 1.
    std::vector<float> logits(4, 0.0f);
    apply_top_p(logits, 0.5);
    CHECK(kept(logits) == std::vector<int>{2, 3});
    // Just past the boundary (1 - 0.5000001 < 0.5) only cumsum 0.25 is removed.
    std::vector<float> past(4, 0.0f);
    apply_top_p(past, 0.5000001);
    CHECK(kept(past) == std::vector<int>{1, 2, 3});
    // top_p = 0: every cumsum <= 1 is removed but the last, the min_tokens_to_keep.
    std::vector<float> zero(4, 0.0f);
    apply_top_p(zero, 0.0);
    CHECK(kept(zero) == std::vector<int>{3});
  }
  SUBCASE("logits 0 1 2 3: softmax 0.0321 0.0871 0.2369 0.6439, cumsum 0.0321 0.1192 0.3561 1") {
    // top_p 0.9 → threshold 0.1: only 0.0321 is under it → token 0 goes.
    std::vector<float> a{0, 1, 2, 3};
    apply_top_p(a, 0.9);
    CHECK(kept(a) == std::vector<int>{1, 2, 3});
    // top_p 0.7 → threshold 0.3: 0.0321 and 0.1192 go.
    std::vector<float> b{0, 1, 2, 3};
    apply_top_p(b, 0.7);
    CHECK(kept(b) == std::vector<int>{2, 3});
    // top_p 0.6 → threshold 0.4: 0.3561 goes too; only the most likely token is left.
    std::vector<float> c{0, 1, 2, 3};
    apply_top_p(c, 0.6);
    CHECK(kept(c) == std::vector<int>{3});
    // The order of the row does not matter: the same logits shuffled keep the same tokens.
    std::vector<float> d{2, 0, 3, 1};
    apply_top_p(d, 0.7);
    CHECK(kept(d) == std::vector<int>{0, 2});
  }
}

TEST_CASE("sampling: generate()'s order — repetition penalty, temperature, top-k, top-p") {
  // Penalty before top-k: [3, 2.5, 1] with id 0 seen and penalty 2 → [1.5, 2.5, 1]; top-k 1 then
  // keeps token 1. (Top-k first would have kept token 0.)
  SamplingOptions o;
  o.greedy = false;
  o.repetition_penalty = 2.0;
  o.top_k = 1;
  std::vector<float> logits{3.0f, 2.5f, 1.0f};
  process_logits(logits, o, {0});
  CHECK(kept(logits) == std::vector<int>{1});
  CHECK(logits[1] == 2.5f);

  // Temperature before top-p: [0, 1, 2, 3] / 0.5 = [0, 2, 4, 6], softmax 0.0021 0.0159 0.1171
  // 0.8650, cumsum 0.0021 0.0180 0.1351 1; top_p 0.85 → threshold 0.15 removes three: only token
  // 3 is left. (Top-p on the unscaled row would have kept tokens 2 and 3: cumsum 0.1192 and
  // 0.3561 around the threshold.)
  SamplingOptions t;
  t.greedy = false;
  t.temperature = 0.5;
  t.top_p = 0.85;
  std::vector<float> row{0, 1, 2, 3};
  process_logits(row, t, {});
  CHECK(kept(row) == std::vector<int>{3});

  // Greedy applies the repetition penalty and nothing else: [3, 2.5] with id 0 seen, penalty 2 →
  // [1.5, 2.5] → token 1; temperature and top-k are ignored as generate() ignores them.
  SamplingOptions g;
  g.repetition_penalty = 2.0;
  g.temperature = 0.1;
  g.top_k = 1;
  Sampler greedy(g);
  CHECK(*greedy.next({3.0f, 2.5f}, {0}) == 1);
}

TEST_CASE("sampling: argmax takes the first of equal maxima, as torch.argmax") {
  CHECK(*argmax({1.0f, 5.0f, 5.0f, 2.0f}) == 1);
  CHECK(*argmax({-kInf, -1.0f}) == 1);
  CHECK(argmax({}).error().code() == ErrorCode::kInvalidValue);
  CHECK(argmax({1.0f, std::nanf("")}).error().message() == "logits: the row holds a NaN");
}

TEST_CASE("sampling: seeded draws are reproducible and follow the softmax") {
  SamplingOptions o;
  o.greedy = false;
  o.seed = 1234;
  const std::vector<float> logits{0.0f, std::log(3.0f)};  // probabilities 0.25 and 0.75
  Sampler a(o), b(o);
  std::vector<std::int64_t> draws_a, draws_b;
  for (int i = 0; i < 4000; ++i) {
    draws_a.push_back(*a.next(logits, {}));
    draws_b.push_back(*b.next(logits, {}));
  }
  CHECK(draws_a == draws_b);
  // 4000 draws at p = 0.75: the standard deviation of the share is 0.007; 0.03 is > 4 of them.
  double ones = 0;
  for (auto d : draws_a) ones += static_cast<double>(d);
  CHECK(std::fabs(ones / 4000 - 0.75) < 0.03);
  // Another seed gives another sequence.
  o.seed = 4321;
  Sampler c(o);
  std::vector<std::int64_t> draws_c;
  for (int i = 0; i < 4000; ++i) draws_c.push_back(*c.next(logits, {}));
  CHECK(draws_c != draws_a);
  // A filtered token is never drawn: top-k 1 leaves only token 1.
  o.top_k = 1;
  Sampler k(o);
  for (int i = 0; i < 200; ++i) CHECK(*k.next(logits, {}) == 1);
}

TEST_CASE("sampling: options out of range are refused, naming the option") {
  SamplingOptions o;
  o.temperature = 0;  // transformers refuses it too; greedy is asked for by name
  CHECK(validated(o).error().code() == ErrorCode::kInvalidValue);
  CHECK(validated(o).error().message().rfind("temperature must be a strictly positive number", 0) == 0);
  o = {};
  o.top_p = 1.5;
  CHECK(validated(o).error().message().rfind("top_p must be in [0, 1]", 0) == 0);
  o = {};
  o.top_k = -1;
  CHECK(validated(o).error().message().rfind("top_k must be", 0) == 0);
  o = {};
  o.repetition_penalty = 0;
  CHECK(validated(o).error().message().rfind("repetition_penalty must be", 0) == 0);
  o = {};
  o.top_p = std::nan("");
  CHECK_FALSE(validated(o).ok());
  CHECK(validated(SamplingOptions{}).ok());
  std::mt19937_64 rng(1);
  CHECK(sample({-kInf, -kInf}, rng).error().message() == "logits: no token has a finite logit");
}

TEST_CASE("stopping: eos_token_id from generation_config.json, else config.json") {
  const nlohmann::json config = nlohmann::json::parse(R"({"eos_token_id": 2})");
  const nlohmann::json generation = nlohmann::json::parse(R"({"eos_token_id": [128009, 128001, 128009]})");
  CHECK(*eos_token_ids(&generation, config) == std::vector<std::int64_t>{128001, 128009});
  CHECK(*eos_token_ids(nullptr, config) == std::vector<std::int64_t>{2});
  const nlohmann::json no_key = nlohmann::json::parse(R"({"bos_token_id": 1, "eos_token_id": null})");
  CHECK(*eos_token_ids(&no_key, config) == std::vector<std::int64_t>{2});
  const nlohmann::json composite = nlohmann::json::parse(R"({"text_config": {"eos_token_id": [1, 106]}})");
  CHECK(*eos_token_ids(nullptr, composite) == std::vector<std::int64_t>{1, 106});
  CHECK(eos_token_ids(nullptr, nlohmann::json::object())->empty());
  const nlohmann::json bad = nlohmann::json::parse(R"({"eos_token_id": "</s>"})");
  const auto error = eos_token_ids(&bad, config);
  REQUIRE_FALSE(error.ok());
  CHECK(error.error().code() == ErrorCode::kWrongType);
  CHECK(error.error().message() ==
        "generation_config.json: eos_token_id must be a non-negative integer or a list of them, got \"</s>\"");
  const nlohmann::json bad_list = nlohmann::json::parse(R"({"eos_token_id": [2, -1]})");
  CHECK(eos_token_ids(nullptr, bad_list).error().message().rfind("config.json: eos_token_id", 0) == 0);
}

TEST_CASE("stopping: stop strings and what can be streamed") {
  const std::vector<std::string> stops{"\nUser:", "###", ""};
  CHECK_FALSE(find_stop("Hello there", stops).found);
  const StopMatch m = find_stop("Answer 4.\nUser: more ### x", stops);
  CHECK(m.found);
  CHECK(m.cut == 9);
  CHECK(m.which == 0);
  // The earliest match wins whatever the list order.
  CHECK(find_stop("a ### b\nUser:", stops).which == 1);
  // Searching from an offset skips what was already checked.
  CHECK_FALSE(find_stop("###abc", stops, 1).found);

  // A tail that may still grow into a stop string waits; so does a cut UTF-8 sequence.
  CHECK(printable_length("Hello\nUs", stops) == 5);
  CHECK(printable_length("Hello #", stops) == 6);
  CHECK(printable_length("Hello", stops) == 5);
  CHECK(printable_length("caf\xC3", stops) == 3);       // é cut after its first byte
  CHECK(printable_length("caf\xC3\xA9", stops) == 5);   // é complete
  CHECK(printable_length("\xF0\x9F\x98", {}) == 0);     // 😀 missing its last byte
}
