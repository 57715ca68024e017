// Chat templates rendered by memfit against a live oracle: python3's jinja2 configured exactly as
// transformers configures it (tests/support/jinja_oracle.py). Every case must match byte for
// byte, and where jinja2 fails (raise_exception, a type error) memfit must fail too. Templates:
// the real ones in the reference data (golden/tokenizers/*/tokenizer_config.json), well-known Hub
// templates kept as fixtures (tests/fixtures/chat_templates/*.jinja), and one small template per
// Jinja feature (features.json), each over the conversations in conversations.json.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "memfit/chat/chat_template.h"
#include "support/reference.h"
#include "support/run_process.h"

using memfit::chat::render_chat;
using memfit::chat::special_tokens_context;
using ojson = nlohmann::ordered_json;
namespace fs = std::filesystem;

namespace {

struct Case {
  std::string label;
  std::string template_text;
  ojson messages;
  bool add_generation_prompt = false;
  ojson extra;  // tools, special tokens, template kwargs
};

// The context transformers' apply_chat_template passes, in render_chat's order.
ojson python_context(const Case& c) {
  ojson context = ojson::object();
  context["messages"] = c.messages;
  context["tools"] = nullptr;
  context["documents"] = nullptr;
  context["add_generation_prompt"] = c.add_generation_prompt;
  for (const auto& [k, v] : c.extra.items()) context[k] = v;
  return context;
}

ojson load_json(const std::string& path) { return ojson::parse(memfit::test::read_text(path)); }

void add_conversations(std::vector<Case>& cases, const std::string& name, const std::string& text,
                       const ojson& specials, const ojson& conversations) {
  for (const auto& conv : conversations) {
    for (bool agp : {false, true}) {
      Case c{name + " / " + conv["name"].get<std::string>() + (agp ? " / generation prompt" : ""), text,
             conv["messages"], agp, specials};
      if (conv.contains("tools")) c.extra["tools"] = conv["tools"];
      cases.push_back(std::move(c));
    }
  }
}

}  // namespace

TEST_CASE("chat templates: byte-exact with jinja2 under transformers' settings") {
  const ojson conversations = load_json(memfit::test::fixture_path("chat_templates/conversations.json"));
  std::vector<Case> cases;

  // Well-known Hub templates, written down as fixtures.
  const ojson fixture_specials = {{"bos_token", "<s>"}, {"eos_token", "</s>"}, {"date_string", "26 Jul 2024"}};
  std::size_t fixture_templates = 0;
  for (const auto& entry : fs::directory_iterator(memfit::test::fixture_path("chat_templates"))) {
    if (entry.path().extension() != ".jinja") continue;
    ++fixture_templates;
    add_conversations(cases, entry.path().stem().string(), memfit::test::read_text(entry.path().string()),
                      fixture_specials, conversations);
  }
  CHECK(fixture_templates >= 10);

  // The real templates of the reference tokenizers, with their own special tokens.
  std::size_t real_templates = 0;
  if (const auto ref = memfit::test::reference_dir()) {
    const std::string dir = *ref + "/golden/tokenizers";
    for (const std::string& name : memfit::test::list_dir(dir)) {
      const std::string path = dir + "/" + name + "/tokenizer_config.json";
      if (!memfit::test::file_exists(path)) continue;
      const ojson config = load_json(path);
      const auto text = memfit::chat::chat_template_of(config);
      if (!text) continue;  // gpt2 and this mistral have none
      ++real_templates;
      ojson specials = special_tokens_context(config);
      specials["date_string"] = "26 Jul 2024";
      add_conversations(cases, name + " (reference)", *text, specials, conversations);
    }
    CHECK(real_templates >= 2);  // llama3, qwen3
  } else {
    memfit::test::skip_loudly("chat-template parity with the reference tokenizers' templates (no reference data)");
  }

  // One template per Jinja feature, over one conversation with extra variables.
  const ojson features = load_json(memfit::test::fixture_path("chat_templates/features.json"));
  const ojson feature_extra = {
      {"bos_token", "<s>"}, {"x", 3},
      {"text", " Hello World "},
      {"nums", {1, 2, 3, 4, 5}},
      {"d", {{"b", {1, 2.0, "é\n"}}, {"a", nullptr}, {"c", ojson::object()}}},
      {"tools", conversations[6]["tools"]}};
  for (std::size_t i = 0; i < features.size(); ++i)
    cases.push_back({"feature " + std::to_string(i), features[i].get<std::string>(), conversations[2]["messages"],
                     true, feature_extra});

  // Run the oracle once over every case.
  char tmpl[] = "/tmp/memfit-jinja-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  ojson job = {{"cases", ojson::array()}};
  for (const Case& c : cases) job["cases"].push_back({{"template", c.template_text}, {"context", python_context(c)}});
  std::ofstream(dir + "/in.json") << job.dump();
  const auto run = memfit::test::run_program(
      {"python3", std::string(MEMFIT_SOURCE_DIR) + "/tests/support/jinja_oracle.py", dir + "/in.json", dir + "/out.json"});
  if (run.exit_code != 0) {
    fs::remove_all(dir);
    FAIL("the jinja2 oracle did not run (exit " << run.exit_code << "): " << run.err
         << (run.exit_code == 3 ? " -- install python3-jinja2 (scripts/lib/deps.sh)"
                                : run.exit_code == -1 ? " -- python3 is not on PATH" : ""));
  }
  const ojson out = load_json(dir + "/out.json");
  fs::remove_all(dir);
  const ojson& results = out["results"];
  REQUIRE(results.size() == cases.size());

  std::size_t matched = 0, both_failed = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    CAPTURE(c.label);
    ojson extra = c.extra;
    const auto ours = render_chat(c.template_text, c.messages, c.add_generation_prompt, extra);
    const ojson& theirs = results[i];
    if (theirs["ok"].get<bool>()) {
      INFO("memfit failed: " << (ours ? std::string() : ours.error().message()));
      REQUIRE(ours.ok());
      CHECK(*ours == theirs["text"].get<std::string>());
      matched += *ours == theirs["text"].get<std::string>();
    } else {
      INFO("jinja2 failed with " << theirs["error"].get<std::string>() << "; memfit rendered: "
                                 << (ours ? *ours : std::string()));
      CHECK_FALSE(ours.ok());
      both_failed += !ours.ok();
      // A template's own raise_exception('…') must fail with its message in memfit too.
      const std::string error = theirs["error"].get<std::string>();
      const std::string prefix = "TemplateError: ";
      if (!ours.ok() && error.rfind(prefix, 0) == 0)
        CHECK(ours.error().message().find("raise_exception: " + error.substr(prefix.size())) != std::string::npos);
    }
  }
  MESSAGE("chat-template parity: " << matched << " renders identical to jinja2 " << out["jinja2"].get<std::string>()
                                   << ", " << both_failed << " failures on both sides, " << cases.size()
                                   << " cases compared");
  CHECK(matched + both_failed == cases.size());
  CHECK(matched >= 200);
}
